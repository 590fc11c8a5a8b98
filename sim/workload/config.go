package workload

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/workload/apps"
)

// KindVEF replays a trace file (workload.file).
const KindVEF = "vef"

// KindMulti is the kind of a workload given as jobs (it may be omitted).
const KindMulti = "multi"

// KindTI and KindGOAL are traces of MPI programs replayed as schedules
// (packages sched, ti; loaded through RegisterProgramKind): SimGrid's
// time-independent traces (workload.file: the index file smpirun writes)
// and GOAL schedules.
const (
	KindTI   = "ti"
	KindGOAL = "goal"
)

// Kinds lists every workload kind.
func Kinds() []string { return append([]string{KindVEF, KindTI, KindGOAL}, apps.Kinds()...) }

// KindSection marks the section's keys as depending on its kind
// (configs.KindSection): --set workload.kind=K drops the file's other
// workload keys, which belonged to its previous kind.
func (Config) KindSection() {}

// isProgram reports a kind replayed as a schedule.
func isProgram(kind string) bool { return kind == KindTI || kind == KindGOAL }

// Config is the `workload:` section of a simulator scenario.
type Config struct {
	// Kind: vef, lammps, patmos, mlwf, alexnet, stencil, alltoall,
	// synthetic; or multi (or empty) with Jobs.
	Kind string `yaml:"kind,omitempty" json:"kind,omitempty"`
	// Ranks: MPI ranks. Default: every node (generated kinds) or the
	// trace's rank count (vef, ti, goal).
	Ranks int `yaml:"ranks,omitempty" json:"ranks,omitempty"`
	// Steps (iterations) or Duration (nominal compute time, steps =
	// duration / step_time); at most one. Default: the model's duration.
	Steps    int                `yaml:"steps,omitempty" json:"steps,omitempty"`
	Duration predictor.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// StepTime is the compute per step (the model's default otherwise).
	StepTime predictor.Duration `yaml:"step_time,omitempty" json:"step_time,omitempty"`
	// Imbalance: each rank's compute phases vary uniformly by ± this
	// fraction (seeded), in [0, 1).
	Imbalance float64 `yaml:"imbalance,omitempty" json:"imbalance,omitempty"`
	// Mapping of ranks to nodes: linear (default), random, or file with
	// MappingFile (one node per line).
	Mapping     string `yaml:"mapping,omitempty" json:"mapping,omitempty"`
	MappingFile string `yaml:"mapping_file,omitempty" json:"mapping_file,omitempty"`
	// Seed overrides the run's seed for this workload (random mapping,
	// generators).
	Seed *uint64 `yaml:"seed,omitempty" json:"seed,omitempty"`
	// File is the trace: VEF (kind vef), SMPI's index file (ti) or a GOAL
	// schedule (goal).
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// FlopRate converts a TI trace's compute (flops) to time: flop/s
	// (default DefaultFlopRate).
	FlopRate float64 `yaml:"flop_rate,omitempty" json:"flop_rate,omitempty"`
	// EagerThreshold (ti, goal): messages of more bytes use the rendezvous
	// protocol (default DefaultEagerThreshold).
	EagerThreshold *int64 `yaml:"eager_threshold,omitempty" json:"eager_threshold,omitempty"`
	// RanksPerNode is how many ranks the mapping places on a node (default
	// 1); messages between ranks on one node take the intra-node path.
	RanksPerNode int `yaml:"ranks_per_node,omitempty" json:"ranks_per_node,omitempty"`
	// IntraLatency and IntraBandwidth (bytes/s) are the intra-node path's
	// (defaults DefaultIntraLatency, DefaultIntraBandwidth).
	IntraLatency   *predictor.Duration `yaml:"intra_latency,omitempty" json:"intra_latency,omitempty"`
	IntraBandwidth float64             `yaml:"intra_bandwidth,omitempty" json:"intra_bandwidth,omitempty"`
	// Window is the replay window in messages (default 262144).
	Window int64 `yaml:"window,omitempty" json:"window,omitempty"`
	// BlockingSends: a rank sends one point-to-point message at a time; a
	// send released while the rank's previous message is still on its way
	// waits for that message's delivery (Options.BlockingSends).
	BlockingSends bool `yaml:"blocking_sends,omitempty" json:"blocking_sends,omitempty"`
	// Collectives sets the size thresholds of the collective algorithms.
	Collectives Collectives `yaml:"collectives,omitempty" json:"collectives,omitempty"`
	// Per-model sections: lammps, patmos, mlwf, alexnet, stencil,
	// alltoall, synthetic.
	apps.Params `yaml:",inline" json:",inline"`
	// Jobs run at once on disjoint node sets (paper 001 §3.4).
	Jobs []Config `yaml:"jobs,omitempty" json:"jobs,omitempty"`
	// Repeat (jobs only): how many times the job runs back to back; 0 =
	// auto, so that every job lasts about as long as the longest.
	Repeat int `yaml:"repeat,omitempty" json:"repeat,omitempty"`
	// Name (jobs only) labels the job in reports.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
}

// Resolve makes relative file paths relative to dir (the scenario's folder).
func (c *Config) Resolve(dir string) {
	fix := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	fix(&c.File)
	fix(&c.MappingFile)
	for i := range c.Jobs {
		c.Jobs[i].Resolve(dir)
	}
}

// Validate checks the section; errors name the key as workload.<field>.
func (c *Config) Validate() error { return c.validate("workload", false) }

func (c *Config) validate(p string, job bool) error {
	if len(c.Jobs) > 0 {
		if job {
			return fmt.Errorf("%s.jobs: a job cannot have jobs", p)
		}
		if c.Kind != "" && c.Kind != KindMulti {
			return fmt.Errorf("%s.kind: %q with jobs (leave kind empty or set multi)", p, c.Kind)
		}
		if c.File != "" || c.Ranks != 0 || c.Steps != 0 || c.Duration != 0 || c.StepTime != 0 || c.Params != (apps.Params{}) {
			return fmt.Errorf("%s: with jobs, model keys (ranks, steps, duration, step_time, file, per-model sections) go inside each job", p)
		}
		for i := range c.Jobs {
			if err := c.Jobs[i].validate(fmt.Sprintf("%s.jobs[%d]", p, i), true); err != nil {
				return err
			}
			if c.BlockingSends && isProgram(c.Jobs[i].Kind) {
				return fmt.Errorf("%s.blocking_sends: not with a %s job (jobs[%d]: its MPI calls decide when a send returns)", p, c.Jobs[i].Kind, i)
			}
		}
		return c.validateRun(p)
	}
	if !job {
		if c.Repeat != 0 {
			return fmt.Errorf("%s.repeat: only for jobs", p)
		}
		if c.Name != "" {
			return fmt.Errorf("%s.name: only for jobs", p)
		}
		if err := c.validateRun(p); err != nil {
			return err
		}
	} else {
		if c.Mapping != "" || c.MappingFile != "" || c.Seed != nil || c.Window != 0 || c.Collectives != (Collectives{}) ||
			c.RanksPerNode != 0 || c.IntraLatency != nil || c.IntraBandwidth != 0 || c.BlockingSends {
			return fmt.Errorf("%s: mapping, mapping_file, ranks_per_node, intra_latency, intra_bandwidth, seed, window, blocking_sends and collectives apply to the whole workload, not to one job", p)
		}
		if c.Repeat < 0 {
			return fmt.Errorf("%s.repeat: must be ≥ 0 (0 = auto), got %d", p, c.Repeat)
		}
	}
	switch {
	case c.Kind == "":
		return fmt.Errorf("%s.kind: missing (want one of %s, or jobs)", p, strings.Join(Kinds(), ", "))
	case c.Kind == KindMulti:
		return fmt.Errorf("%s.jobs: kind multi needs jobs", p)
	case !slices.Contains(Kinds(), c.Kind):
		return fmt.Errorf("%s.kind: unknown kind %q (want one of %s)", p, c.Kind, strings.Join(Kinds(), ", "))
	}
	if c.Ranks < 0 {
		return fmt.Errorf("%s.ranks: must be ≥ 0, got %d", p, c.Ranks)
	}
	if c.Steps < 0 {
		return fmt.Errorf("%s.steps: must be ≥ 0, got %d", p, c.Steps)
	}
	if c.Steps > 0 && c.Duration > 0 {
		return fmt.Errorf("%s.duration: set steps or duration, not both", p)
	}
	if c.Imbalance < 0 || c.Imbalance >= 1 || math.IsNaN(c.Imbalance) {
		return fmt.Errorf("%s.imbalance: must be in [0, 1), got %v", p, c.Imbalance)
	}
	if c.Kind == KindVEF || isProgram(c.Kind) {
		if c.File == "" {
			return fmt.Errorf("%s.file: kind %s needs a trace file", p, c.Kind)
		}
		if c.Steps != 0 || c.Duration != 0 || c.StepTime != 0 || c.Imbalance != 0 {
			return fmt.Errorf("%s: steps, duration, step_time and imbalance do not apply to a %s trace", p, c.Kind)
		}
	} else if c.File != "" {
		return fmt.Errorf("%s.file: only for kinds vef, ti and goal", p)
	}
	if c.FlopRate != 0 && (c.Kind != KindTI || !(c.FlopRate > 0) || math.IsInf(c.FlopRate, 0)) {
		return fmt.Errorf("%s.flop_rate: only for kind ti, and > 0 (flop/s), got %v", p, c.FlopRate)
	}
	if c.BlockingSends && isProgram(c.Kind) {
		return fmt.Errorf("%s.blocking_sends: not for kind %s (its MPI calls decide when a send returns)", p, c.Kind)
	}
	if e := c.EagerThreshold; e != nil && (!isProgram(c.Kind) || *e < 0) {
		return fmt.Errorf("%s.eager_threshold: only for kinds ti and goal, and ≥ 0 bytes", p)
	}
	if c.Kind == apps.KindSynthetic && c.Steps != 0 {
		return fmt.Errorf("%s.steps: synthetic traffic runs for a duration", p)
	}
	return c.validateParams(p)
}

func (c *Config) validateRun(p string) error {
	switch c.Mapping {
	case "", MappingLinear, MappingRandom:
		if c.MappingFile != "" && c.Mapping != "" {
			return fmt.Errorf("%s.mapping_file: only with mapping: file", p)
		}
	case MappingFile:
		if c.MappingFile == "" {
			return fmt.Errorf("%s.mapping_file: mapping file needs a file", p)
		}
	default:
		return fmt.Errorf("%s.mapping: unknown mapping %q (want linear, random or file)", p, c.Mapping)
	}
	if c.RanksPerNode < 0 || c.RanksPerNode > 1<<16 {
		return fmt.Errorf("%s.ranks_per_node: must be in 1..65536 (0 = 1), got %d", p, c.RanksPerNode)
	}
	if l := c.IntraLatency; l != nil && *l < 0 {
		return fmt.Errorf("%s.intra_latency: must be ≥ 0", p)
	}
	if b := c.IntraBandwidth; b < 0 || math.IsNaN(b) || math.IsInf(b, 0) {
		return fmt.Errorf("%s.intra_bandwidth: must be > 0 bytes/s (0 = default), got %v", p, b)
	}
	if c.Window < 0 || c.Window > 1<<30 {
		return fmt.Errorf("%s.window: must be in [0, 2^30] messages, got %d", p, c.Window)
	}
	return c.Collectives.validate(p)
}

func (c *Config) validateParams(p string) error {
	type section struct {
		kind string
		set  bool
	}
	for _, s := range []section{
		{apps.KindLAMMPS, c.LAMMPS != nil}, {apps.KindPATMOS, c.PATMOS != nil}, {apps.KindMLWF, c.MLWF != nil},
		{apps.KindAlexNet, c.AlexNet != nil}, {apps.KindStencil, c.Stencil != nil}, {apps.KindAlltoall, c.Alltoall != nil},
		{apps.KindSynthetic, c.Synthetic != nil},
	} {
		if s.set && s.kind != c.Kind {
			return fmt.Errorf("%s.%s: section set, but kind is %s", p, s.kind, c.Kind)
		}
	}
	neg := func(field string, v int64) error {
		if v < 0 {
			return fmt.Errorf("%s.%s.%s: must be ≥ 0, got %d", p, c.Kind, field, v)
		}
		return nil
	}
	var errs []error
	switch {
	case c.LAMMPS != nil:
		errs = append(errs, c.LAMMPS.Validate(p+".lammps"))
	case c.PATMOS != nil:
		errs = append(errs, neg("input_bytes", int64(c.PATMOS.InputBytes)), neg("tally_bytes", int64(c.PATMOS.TallyBytes)))
	case c.MLWF != nil:
		m := c.MLWF
		errs = append(errs, neg("cycle_time", int64(m.CycleTime)), neg("gather_bytes", int64(m.GatherBytes)),
			neg("request_bytes", int64(m.RequestBytes)), neg("response_bytes", int64(m.ResponseBytes)),
			neg("gradient_bytes", int64(m.GradientBytes)), neg("fusion_bytes", int64(m.FusionBytes)))
	case c.AlexNet != nil:
		a := c.AlexNet
		if a.ForwardFraction < 0 || a.ForwardFraction >= 1 || math.IsNaN(a.ForwardFraction) {
			errs = append(errs, fmt.Errorf("%s.alexnet.forward_fraction: must be in [0, 1), got %v", p, a.ForwardFraction))
		}
		for i, b := range a.LayerBytes {
			errs = append(errs, neg(fmt.Sprintf("layer_bytes[%d]", i), int64(b)))
		}
		layers := len(a.LayerBytes)
		if layers == 0 {
			layers = 8 // AlexNet's
		}
		if n := len(a.LayerCompute); n > 0 && n != layers {
			errs = append(errs, fmt.Errorf("%s.alexnet.layer_compute: %d weights for %d layers", p, n, layers))
		}
		for i, w := range a.LayerCompute {
			if !(w >= 0) || math.IsInf(w, 0) {
				errs = append(errs, fmt.Errorf("%s.alexnet.layer_compute[%d]: must be ≥ 0, got %v", p, i, w))
			}
		}
	case c.Stencil != nil:
		s := c.Stencil
		if s.Dims != 0 && s.Dims != 2 && s.Dims != 3 {
			errs = append(errs, fmt.Errorf("%s.stencil.dims: want 2 or 3, got %d", p, s.Dims))
		}
		errs = append(errs, neg("halo_bytes", int64(s.HaloBytes)), neg("allreduce_every", int64(s.AllreduceEvery)))
	case c.Alltoall != nil:
		errs = append(errs, neg("bytes", int64(c.Alltoall.Bytes)))
	case c.Synthetic != nil:
		errs = append(errs, c.Synthetic.Validate(p+".synthetic", c.Ranks))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
