package workload

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/lpictl/lpictl/sim/workload/apps"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// Job describes one job of a built workload.
type Job struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	FirstRank int    `json:"first_rank"`
	Ranks     int    `json:"ranks"`
	Repeat    int    `json:"repeat"`
}

// Workload is a built workload: its ranks, their nodes, and a way to open
// its record stream as many times as needed (replay, export, describe).
type Workload struct {
	// Ranks is the number of ranks; Nodes maps rank → node.
	Ranks int
	Nodes []int
	Jobs  []Job
	opts  Options
	open  func() (vef.Source, error)
	// program is a ti or goal trace (nil for VEF streams); intra the
	// intra-node path of a VEF replay whose ranks share nodes.
	program Program
	intra   *IntraNode
	shared  bool // two ranks share a node
	// parts: a multi-job workload with program jobs runs one driver per
	// program job and one for its other jobs' merged stream (multi.go).
	parts []partSpec
}

// Program is a loaded trace of kind ti or goal: an MPI program as a
// schedule (package sched), which its own executor replays.
type Program interface {
	// Ranks is the program's rank count.
	Ranks() int
	// NewDriver returns a driver for the program with rank r on
	// nodes[r], messages between ranks on one node taking the intra-node
	// path (latency ps, bandwidth bytes/s).
	NewDriver(nodes []int, intraLatency int64, intraBandwidth float64) (Driver, error)
	// Summary counts the program's operations.
	Summary() Summary
}

// ProgramLoader loads cfg.File, a trace of its kind; errors name
// FILE:LINE, or the key as prefix.<key>.
type ProgramLoader func(cfg Config, prefix string) (Program, error)

var programLoaders = map[string]ProgramLoader{}

// RegisterProgramKind makes kind (KindTI or KindGOAL) loadable by Build.
// The readers live in packages that import this one (sim/workload/traces
// registers both), so they register themselves.
func RegisterProgramKind(kind string, load ProgramLoader) { programLoaders[kind] = load }

// Defaults of the trace kinds (ours: docs/workloads.md).
const (
	DefaultFlopRate       = 1e9   // flop/s: SimGrid's usual 1 Gf host
	DefaultEagerThreshold = 65536 // bytes
)

// NewDriver returns what replays the workload on a host: its program's
// executor, or a Replayer of its record stream (behind the intra-node
// path when ranks share nodes). Close it when done.
func (w *Workload) NewDriver() (Driver, error) {
	if w.parts != nil {
		return w.newMultiDriver()
	}
	if w.program != nil {
		return w.program.NewDriver(w.Nodes, w.intra.Latency, w.intra.Bandwidth)
	}
	r, err := w.NewReplayer()
	if err != nil {
		return nil, err
	}
	if w.shared {
		return WithIntraNode(r, w.intra.Latency, w.intra.Bandwidth), nil
	}
	return r, nil
}

// Program returns the workload's program (nil unless kind ti or goal).
func (w *Workload) Program() Program { return w.program }

// Options returns the replay options the workload was built with.
func (w *Workload) Options() Options { return w.opts }

// Open opens a fresh copy of the workload's record stream. Close it (it
// may implement io.Closer) when done. A ti or goal program has none.
func (w *Workload) Open() (vef.Source, error) {
	if w.program != nil || w.parts != nil {
		return nil, fmt.Errorf("workload: a %s trace is not a VEF record stream (lpictl workload convert --to vef writes one where VEF can express it)", w.Jobs[0].Kind)
	}
	return w.open()
}

// NewReplayer opens the stream and returns a replayer for it; Close the
// replayer when done.
func (w *Workload) NewReplayer() (*Replayer, error) {
	src, err := w.Open()
	if err != nil {
		return nil, err
	}
	r, err := NewReplayer(src, w.Nodes, w.opts)
	if err != nil {
		closeSource(src)
		return nil, err
	}
	return r, nil
}

// identityNodes puts task t on node t (a replay whose host ignores nodes).
func identityNodes(n int) []int {
	nodes := make([]int, n)
	for i := range nodes {
		nodes[i] = i
	}
	return nodes
}

func closeSource(s vef.Source) {
	if c, ok := s.(io.Closer); ok {
		c.Close()
	}
}

// Build validates cfg and builds the workload for a network of nodes
// nodes; seed is the run's seed (workload.seed overrides it). A vef trace
// is replayed once here on a contention-free host (streaming, in the
// window's memory), so a bad trace, a dependency cycle included, fails now
// with FILE:LINE, before any simulation.
func Build(cfg Config, nodes int, seed uint64) (*Workload, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if nodes <= 0 {
		return nil, fmt.Errorf("workload: network has %d nodes", nodes)
	}
	if cfg.Seed != nil {
		seed = *cfg.Seed
	}
	w := &Workload{opts: Options{Window: cfg.Window, Collectives: cfg.Collectives.normalized(), BlockingSends: cfg.BlockingSends},
		intra: &IntraNode{Latency: DefaultIntraLatency, Bandwidth: DefaultIntraBandwidth}}
	if l := cfg.IntraLatency; l != nil {
		w.intra.Latency = int64(*l) * 1000
	}
	if cfg.IntraBandwidth > 0 {
		w.intra.Bandwidth = cfg.IntraBandwidth
	}
	perNode := max(1, cfg.RanksPerNode)
	if w.opts.Window == 0 {
		w.opts.Window = vef.DefaultWindow
	}
	jobs := cfg.Jobs
	single := len(jobs) == 0
	if single {
		jobs = []Config{cfg}
	}
	type built struct {
		open  func() (vef.Source, error)
		tasks int
		prog  Program
	}
	var bs []built
	for i, j := range jobs {
		prefix := "workload"
		if !single {
			prefix = fmt.Sprintf("workload.jobs[%d]", i)
		}
		ranks := j.Ranks
		if ranks == 0 && j.Kind != KindVEF && !isProgram(j.Kind) {
			if !single {
				return nil, fmt.Errorf("%s.ranks: each job needs its number of ranks", prefix)
			}
			ranks = nodes
		}
		jseed := seed + uint64(i)*0x9e3779b97f4a7c15
		open, tasks, prog, err := w.jobSource(j, prefix, ranks, jseed)
		if err != nil {
			return nil, err
		}
		name := j.Name
		if name == "" {
			name = fmt.Sprintf("%s-%d", j.Kind, i)
		}
		w.Jobs = append(w.Jobs, Job{Name: name, Kind: j.Kind, FirstRank: w.Ranks, Ranks: tasks, Repeat: max(1, j.Repeat)})
		w.Ranks += tasks
		bs = append(bs, built{open, tasks, prog})
	}
	if w.Ranks > nodes*perNode {
		return nil, fmt.Errorf("workload.ranks: %d ranks do not fit on %d nodes (%d per node: workload.ranks_per_node)", w.Ranks, nodes, perNode)
	}
	if single {
		w.open, w.program = bs[0].open, bs[0].prog
	} else {
		// Auto repeat: each job runs about as long (in compute) as the longest.
		nominal := make([]int64, len(bs))
		var longest int64
		for i, b := range bs {
			if jobs[i].Repeat > 0 {
				continue
			}
			var s Summary
			if b.prog != nil {
				s = b.prog.Summary()
			} else {
				var err error
				if s, err = summarize(b.open); err != nil {
					return nil, err
				}
			}
			// An open-loop job (no compute) lasts its span.
			nominal[i] = s.MaxCompute
			if nominal[i] == 0 {
				nominal[i] = s.Span
			}
			longest = max(longest, nominal[i])
		}
		var opens []func() (vef.Source, error)
		var streamRanks []int // the workload ranks of the merged stream's tasks
		for i, b := range bs {
			n := jobs[i].Repeat
			if n == 0 {
				n = 1
				if nominal[i] > 0 {
					n = max(1, int(math.Round(float64(longest)/float64(nominal[i]))))
				}
			}
			w.Jobs[i].Repeat = n
			job := w.Jobs[i]
			if b.prog != nil {
				w.parts = append(w.parts, partSpec{ranks: rankRange(job.FirstRank, job.Ranks), prog: b.prog, repeat: n})
				continue
			}
			streamRanks = append(streamRanks, rankRange(job.FirstRank, job.Ranks)...)
			open := b.open
			if n > 1 {
				open = func() (vef.Source, error) { return newRepeatSource(b.open, n) }
			}
			opens = append(opens, open)
		}
		if w.parts != nil && len(opens) > 0 {
			w.parts = append([]partSpec{{ranks: streamRanks}}, w.parts...)
		}
		w.open = func() (vef.Source, error) {
			var srcs []vef.Source
			for _, o := range opens {
				s, err := o()
				if err != nil {
					for _, s := range srcs {
						closeSource(s)
					}
					return nil, err
				}
				srcs = append(srcs, s)
			}
			return newMultiSource(srcs, w.opts.Window), nil
		}
	}
	var err error
	switch cfg.Mapping {
	case "", MappingLinear:
		w.Nodes, err = LinearMappingK(w.Ranks, nodes, perNode)
	case MappingRandom:
		w.Nodes, err = RandomMappingK(w.Ranks, nodes, perNode, seed)
	case MappingFile:
		w.Nodes, err = ReadMappingFileK(cfg.MappingFile, w.Ranks, nodes, perNode)
	}
	if err != nil {
		return nil, err
	}
	w.shared = perNode > 1 && sharesNodes(w.Nodes)
	return w, nil
}

// sharesNodes reports whether two ranks are on one node.
func sharesNodes(nodes []int) bool {
	seen := make(map[int]bool, len(nodes))
	for _, n := range nodes {
		if seen[n] {
			return true
		}
		seen[n] = true
	}
	return false
}

// rankRange is ranks first, first+1, …, first+n−1.
func rankRange(first, n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = first + i
	}
	return r
}

// jobSource builds job j: its record stream, or its program (kinds ti and
// goal), and its rank count.
func (w *Workload) jobSource(j Config, prefix string, ranks int, seed uint64) (func() (vef.Source, error), int, Program, error) {
	if isProgram(j.Kind) {
		load := programLoaders[j.Kind]
		if load == nil {
			return nil, 0, nil, fmt.Errorf("%s.kind: no reader for %s traces in this program (import sim/workload/traces)", prefix, j.Kind)
		}
		p, err := load(j, prefix)
		if err != nil {
			return nil, 0, nil, err
		}
		if j.Ranks != 0 && j.Ranks != p.Ranks() {
			return nil, 0, nil, fmt.Errorf("%s.ranks: %d, but the trace has %d ranks", prefix, j.Ranks, p.Ranks())
		}
		return nil, p.Ranks(), p, nil
	}
	open, tasks, err := w.streamSource(j, prefix, ranks, seed)
	return open, tasks, nil, err
}

// streamSource builds a job whose records are a VEF stream (a trace or a
// model).
func (w *Workload) streamSource(j Config, prefix string, ranks int, seed uint64) (func() (vef.Source, error), int, error) {
	if j.Kind == KindVEF {
		ropts := vef.ReaderOptions{Window: w.opts.Window}
		open := func() (vef.Source, error) {
			r, err := vef.Open(j.File, ropts)
			if err != nil {
				return nil, err
			}
			return r, nil
		}
		// Validate the whole trace now, streaming in the replay window's
		// memory: the reader checks every record and reference (docs/model.md §5,
		// forward references included), and a replay on a contention-free
		// host finds what only the collectives' algorithms reveal, records
		// that wait for each other in a cycle. Either is "FILE:LINE: …".
		r, err := vef.Open(j.File, ropts)
		if err != nil {
			var ve *vef.Error
			if errors.As(err, &ve) {
				return nil, 0, err
			}
			return nil, 0, fmt.Errorf("%s.file: %w", prefix, err)
		}
		defer r.Close()
		if j.Ranks != 0 && j.Ranks != r.Tasks() {
			return nil, 0, fmt.Errorf("%s.ranks: %d, but the trace has %d tasks", prefix, j.Ranks, r.Tasks())
		}
		rep, err := NewReplayer(r, identityNodes(r.Tasks()), w.opts)
		if err != nil {
			return nil, 0, err
		}
		if err := NewIdealHost().Run(rep); err != nil {
			return nil, 0, err
		}
		return open, r.Tasks(), nil
	}
	if j.Kind == apps.KindSynthetic && j.Synthetic != nil {
		if err := j.Synthetic.Validate(prefix+".synthetic", ranks); err != nil {
			return nil, 0, err
		}
	}
	spec := apps.Spec{Kind: j.Kind, Ranks: ranks, Steps: j.Steps, Duration: j.Duration.D(), StepTime: j.StepTime.D(),
		Imbalance: j.Imbalance, Seed: seed, Params: j.Params}
	open := func() (vef.Source, error) { return apps.New(spec) }
	if _, err := open(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", prefix, err)
	}
	return open, ranks, nil
}

// Summary counts a workload's records without replaying it.
type Summary struct {
	Header vef.Header `json:"header"`
	// P2PBytes: bytes of point-to-point records; SelfMessages: those with
	// src = dst.
	P2PBytes     int64 `json:"p2p_bytes"`
	SelfMessages int64 `json:"self_messages"`
	// Collectives counts operations by op name.
	Collectives map[string]int64 `json:"collectives"`
	// Compute per rank: the delays after dependencies plus the time before
	// each rank's first record, except for open-loop ranks (every record
	// with dependency 0), which compute nothing; MaxCompute and
	// MeanCompute over ranks (ps).
	MaxCompute  int64 `json:"max_compute_ps"`
	MeanCompute int64 `json:"mean_compute_ps"`
	// Span is the latest absolute (dependency-0) time of any record (ps).
	Span int64 `json:"span_ps"`
}

func summarize(open func() (vef.Source, error)) (Summary, error) {
	src, err := open()
	if err != nil {
		return Summary{}, err
	}
	defer closeSource(src)
	s := Summary{Collectives: map[string]int64{}}
	h := vef.Header{Tasks: src.Tasks(), Comms: len(src.Comms()), OnlySend: true}
	compute := make([]int64, h.Tasks)
	first := make([]int64, h.Tasks) // time before the first record
	seen := make([]bool, h.Tasks)
	closed := make([]bool, h.Tasks)
	var r vef.Record
	for {
		err := src.Next(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s, err
		}
		if r.Dep == vef.DepRecv {
			h.OnlySend = false
		}
		switch {
		case r.Dep != vef.DepNone:
			compute[r.Src] += r.Time
			closed[r.Src] = true
		case !seen[r.Src]:
			first[r.Src] = r.Time
		}
		if r.Dep == vef.DepNone {
			s.Span = max(s.Span, r.Time)
		}
		seen[r.Src] = true
		if r.Kind == vef.Message {
			h.Messages++
			s.P2PBytes += r.Bytes
			if r.Src == r.Dst {
				s.SelfMessages++
			}
			continue
		}
		h.CollRecords++
		if r.ID >= h.CollOps {
			h.CollOps = r.ID + 1
			s.Collectives[r.Op.String()]++
		}
	}
	var sum int64
	for t, c := range compute {
		if closed[t] {
			c += first[t]
		}
		s.MaxCompute = max(s.MaxCompute, c)
		sum += c
	}
	if h.Tasks > 0 {
		s.MeanCompute = sum / int64(h.Tasks)
	}
	s.Header = h
	return s, nil
}

// Summarize counts the workload's records (a pass over its stream), or
// its programs' operations.
func (w *Workload) Summarize() (Summary, error) {
	if w.program != nil {
		return w.program.Summary(), nil
	}
	if w.parts == nil {
		return summarize(w.open)
	}
	sum := Summary{Collectives: map[string]int64{}}
	var computeSum int64
	for _, p := range w.parts {
		var s Summary
		if p.prog != nil {
			s = p.prog.Summary()
		} else {
			var err error
			if s, err = summarize(w.open); err != nil {
				return sum, err
			}
		}
		sum.Header.Messages += s.Header.Messages
		sum.Header.CollRecords += s.Header.CollRecords
		sum.Header.CollOps += s.Header.CollOps
		sum.P2PBytes += s.P2PBytes
		sum.SelfMessages += s.SelfMessages
		for k, v := range s.Collectives {
			sum.Collectives[k] += v
		}
		sum.MaxCompute = max(sum.MaxCompute, s.MaxCompute)
		sum.Span = max(sum.Span, s.Span)
		computeSum += s.MeanCompute * int64(len(p.ranks))
	}
	sum.Header.Tasks = w.Ranks
	if w.Ranks > 0 {
		sum.MeanCompute = computeSum / int64(w.Ranks)
	}
	return sum, nil
}
