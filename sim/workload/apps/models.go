package apps

import (
	"fmt"
	"math"
	"time"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// Model kinds.
const (
	KindLAMMPS    = "lammps"
	KindPATMOS    = "patmos"
	KindMLWF      = "mlwf"
	KindAlexNet   = "alexnet"
	KindStencil   = "stencil"
	KindAlltoall  = "alltoall"
	KindSynthetic = "synthetic"
)

// Kinds lists the generated workload kinds.
func Kinds() []string {
	return []string{KindLAMMPS, KindPATMOS, KindMLWF, KindAlexNet, KindStencil, KindAlltoall, KindSynthetic}
}

// Spec is everything a generator needs. Zero fields take the model's
// default (see Defaults and docs/workloads.md).
type Spec struct {
	Kind      string
	Ranks     int
	Steps     int           // iterations; or
	Duration  time.Duration // nominal compute time (steps = duration / step time)
	StepTime  time.Duration // compute per step
	Imbalance float64       // per-rank compute jitter, fraction
	Seed      uint64
	Params    Params
}

// Params holds the per-model sections (YAML workload.<kind>).
type Params struct {
	LAMMPS    *LAMMPS    `yaml:"lammps,omitempty" json:"lammps,omitempty"`
	PATMOS    *PATMOS    `yaml:"patmos,omitempty" json:"patmos,omitempty"`
	MLWF      *MLWF      `yaml:"mlwf,omitempty" json:"mlwf,omitempty"`
	AlexNet   *AlexNet   `yaml:"alexnet,omitempty" json:"alexnet,omitempty"`
	Stencil   *Stencil   `yaml:"stencil,omitempty" json:"stencil,omitempty"`
	Alltoall  *Alltoall  `yaml:"alltoall,omitempty" json:"alltoall,omitempty"`
	Synthetic *Synthetic `yaml:"synthetic,omitempty" json:"synthetic,omitempty"`
}

// Defaults gives a model's default step time and nominal duration.
func Defaults(kind string) (stepTime, duration time.Duration) {
	switch kind {
	case KindLAMMPS: // in.rhodo's 100 steps + the setup (0.45/0.55 of them); docs/workloads.md
		return 12200 * time.Microsecond, RhodoSteps * 12200 * time.Microsecond * 20 / 11
	case KindPATMOS: // paper 000 §4.5: 1290.64 s, one long compute phase
		return 1290640 * time.Millisecond, 1290640 * time.Millisecond
	case KindMLWF: // ours: CPU training steps of seconds (§4.6: ms-range gaps)
		return 5 * time.Second, 50 * time.Second
	case KindAlexNet: // paper 000 §4.7 energy figures imply ≈ 97 s
		return 100 * time.Millisecond, 97 * time.Second
	case KindStencil, KindAlltoall:
		return 100 * time.Microsecond, 10 * time.Millisecond
	case KindSynthetic:
		return 0, time.Millisecond
	}
	return 0, 0
}

func ps(d time.Duration) int64 { return int64(d) * 1000 }

// resolve fills steps and step time (ps) from the spec and defaults.
func (s Spec) resolve() (steps int, step int64) {
	st, dur := Defaults(s.Kind)
	if s.StepTime > 0 {
		st = s.StepTime
	}
	if s.Duration > 0 {
		dur = s.Duration
	}
	steps = s.Steps
	if steps == 0 {
		steps = max(1, int(math.Round(float64(dur)/float64(st))))
	}
	return steps, ps(st)
}

// New returns the generated stream of a model.
func New(s Spec) (vef.Source, error) {
	if s.Ranks <= 0 {
		return nil, fmt.Errorf("apps: %d ranks", s.Ranks)
	}
	switch s.Kind {
	case KindLAMMPS:
		return newLAMMPS(s), nil
	case KindPATMOS:
		return newPATMOS(s), nil
	case KindMLWF:
		return newMLWF(s), nil
	case KindAlexNet:
		return newAlexNet(s), nil
	case KindStencil:
		return newStencil(s), nil
	case KindAlltoall:
		return newAlltoall(s), nil
	case KindSynthetic:
		return newSynthetic(s)
	}
	return nil, fmt.Errorf("apps: unknown kind %q", s.Kind)
}

func orBytes(v Bytes, d int64) int64 {
	if v > 0 {
		return int64(v)
	}
	return d
}

func orInt(v, d int) int {
	if v != 0 {
		return v
	}
	return d
}

func orFloat(v, d float64) float64 {
	if v != 0 {
		return v
	}
	return d
}

// grid3 factors n into a near-cubic px ≥ py ≥ pz grid (LAMMPS's processor
// grid minimises the subdomain surface).
func grid3(n int) [3]int {
	best, bestSurf := [3]int{n, 1, 1}, math.Inf(1)
	for a := 1; a*a*a <= n; a++ {
		if n%a != 0 {
			continue
		}
		m := n / a
		for b := a; b*b <= m; b++ {
			if m%b != 0 {
				continue
			}
			c := m / b
			surf := float64(a*b + b*c + a*c)
			if surf < bestSurf {
				best, bestSurf = [3]int{c, b, a}, surf
			}
		}
	}
	return best
}

// neighbours gives each rank's periodic neighbour along dimension d.
func neighbours(dims [3]int, d, dir int) []int32 {
	n := dims[0] * dims[1] * dims[2]
	out := make([]int32, n)
	for r := 0; r < n; r++ {
		c := [3]int{r % dims[0], r / dims[0] % dims[1], r / (dims[0] * dims[1])}
		c[d] = ((c[d]+dir)%dims[d] + dims[d]) % dims[d]
		out[r] = int32(c[0] + dims[0]*(c[1]+dims[1]*c[2]))
	}
	return out
}

// ---------------------------------------------------------------- PATMOS

// PATMOS shapes paper 000 §4.5 and Fig. 9: Monte Carlo batches computed
// independently; the network is used only at start (input Bcast) and at
// the end (Allreduce of the tallies for the mean, then Reduce for the
// variance).
type PATMOS struct {
	InputBytes Bytes `yaml:"input_bytes,omitempty" json:"input_bytes,omitempty"` // default 4MiB
	TallyBytes Bytes `yaml:"tally_bytes,omitempty" json:"tally_bytes,omitempty"` // default 8KiB
}

type patmos struct {
	p      PATMOS
	n      int
	step   int64
	nsteps int
	jit    jitter
}

func newPATMOS(s Spec) *source {
	var p PATMOS
	if s.Params.PATMOS != nil {
		p = *s.Params.PATMOS
	}
	p.InputBytes = Bytes(orBytes(p.InputBytes, 4<<20))
	p.TallyBytes = Bytes(orBytes(p.TallyBytes, 8<<10))
	steps, step := s.resolve()
	return newSource(s.Ranks, &patmos{p: p, n: s.Ranks, step: step, nsteps: steps, jit: newJitter(s.Seed, 2, s.Imbalance)})
}

func (p *patmos) steps() int { return 2 }

func (p *patmos) gen(e *emitter, k int) bool {
	if k == 0 {
		e.coll(0, vef.Bcast, rootOnly(int64(p.p.InputBytes)), nonRoot(int64(p.p.InputBytes)))
		return true
	}
	for t := 0; t < p.n; t++ {
		for b := 0; b < p.nsteps; b++ { // batches: compute only
			e.compute(t, p.jit.of(p.step))
		}
	}
	b := int64(p.p.TallyBytes)
	e.coll(0, vef.Allreduce, constant(b), constant(b))
	e.coll(0, vef.Reduce, nonRoot(b), rootOnly(b))
	return false
}

// ---------------------------------------------------------------- MLWF

// MLWF shapes paper 000 §4.6 and Fig. 12: Horovod data-parallel training
// (MPI controller). Horovod's background thread negotiates every cycle
// (HOROVOD_CYCLE_TIME), whether or not a tensor is ready: a Gather of
// the request-list sizes, a Gatherv of the request lists, a Bcast of the
// response size and a Bcast of the response list ("a repetitive sequence
// of Gather-Gatherv-Broadcast-Broadcast … then the AllReduce"). Compute
// goes on between the cycles; at the end of each training step the
// gradients are averaged with an Allreduce (fused up to FusionBytes, as
// Horovod's tensor fusion does). The constant negotiation traffic is what
// Fig. 12 shows at every rate; the cycle gaps are the ms-range idle
// periods (§4.6: 99 % of them).
type MLWF struct {
	// CycleTime between negotiation cycles (default 5ms, Horovod's
	// HOROVOD_CYCLE_TIME default); a step is step_time / cycle_time cycles.
	CycleTime     Duration `yaml:"cycle_time,omitempty" json:"cycle_time,omitempty"`
	GatherBytes   Bytes    `yaml:"gather_bytes,omitempty" json:"gather_bytes,omitempty"`     // default 4
	RequestBytes  Bytes    `yaml:"request_bytes,omitempty" json:"request_bytes,omitempty"`   // mean Gatherv share, default 256
	ResponseBytes Bytes    `yaml:"response_bytes,omitempty" json:"response_bytes,omitempty"` // default 1KiB
	// GradientBytes per step (default 32MB: an 8 M-parameter U-Net in
	// float32, our estimate), in Allreduces of at most FusionBytes
	// (default 64MiB, HOROVOD_FUSION_THRESHOLD).
	GradientBytes Bytes `yaml:"gradient_bytes,omitempty" json:"gradient_bytes,omitempty"`
	FusionBytes   Bytes `yaml:"fusion_bytes,omitempty" json:"fusion_bytes,omitempty"`
}

type mlwf struct {
	p      MLWF
	n      int
	cycle  int64
	cycles int
	nsteps int
	jit    jitter
	req    []int64
}

func newMLWF(s Spec) *source {
	var p MLWF
	if s.Params.MLWF != nil {
		p = *s.Params.MLWF
	}
	if p.CycleTime <= 0 {
		p.CycleTime = Duration(5 * time.Millisecond)
	}
	p.GatherBytes = Bytes(orBytes(p.GatherBytes, 4))
	p.RequestBytes = Bytes(orBytes(p.RequestBytes, 256))
	p.ResponseBytes = Bytes(orBytes(p.ResponseBytes, 1<<10))
	p.GradientBytes = Bytes(orBytes(p.GradientBytes, 32_000_000))
	p.FusionBytes = Bytes(orBytes(p.FusionBytes, 64<<20))
	steps, step := s.resolve()
	cycle := ps(time.Duration(p.CycleTime))
	m := &mlwf{p: p, n: s.Ranks, cycle: cycle, cycles: max(1, int(math.Round(float64(step)/float64(cycle)))),
		nsteps: steps, jit: newJitter(s.Seed, 3, s.Imbalance), req: make([]int64, s.Ranks)}
	return newSource(s.Ranks, m)
}

func (m *mlwf) steps() int { return m.nsteps }

// gen emits one training step: its negotiation cycles, each after a
// cycle of compute, then the fused gradient Allreduces.
func (m *mlwf) gen(e *emitter, k int) bool {
	g, resp := int64(m.p.GatherBytes), int64(m.p.ResponseBytes)
	for c := 0; c < m.cycles; c++ {
		var total int64
		for t := 0; t < m.n; t++ {
			e.compute(t, m.jit.of(m.cycle))
			// Gatherv shares vary by rank: ±50 % around the mean.
			m.req[t] = max(1, int64(float64(m.p.RequestBytes)*(0.5+m.jit.rng.Float64())))
			total += m.req[t]
		}
		e.coll(0, vef.Gather, constant(g), rootOnly(g*int64(m.n)))
		e.coll(0, vef.Gather, func(r int) int64 { return m.req[r] }, rootOnly(total))
		e.coll(0, vef.Bcast, rootOnly(4), nonRoot(4))
		e.coll(0, vef.Bcast, rootOnly(resp), nonRoot(resp))
	}
	for left := int64(m.p.GradientBytes); left > 0; {
		b := min(left, int64(m.p.FusionBytes))
		left -= b
		e.coll(0, vef.Allreduce, constant(b), constant(b))
	}
	return k+1 < m.nsteps
}

// ---------------------------------------------------------------- AlexNet

// AlexNet shapes paper 000 §4.7 and Fig. 15: data-parallel training; each
// step computes the forward pass, then back-propagates layer by layer,
// averaging each layer's gradients with an Allreduce right after it.
type AlexNet struct {
	// LayerBytes: gradient size per layer in back-propagation order
	// (default AlexNet's fc8, fc7, fc6, conv5 … conv1 in float32).
	LayerBytes []Bytes `yaml:"layer_bytes,omitempty" json:"layer_bytes,omitempty"`
	// ForwardFraction of the step's compute is the forward pass (default 1/3).
	ForwardFraction float64 `yaml:"forward_fraction,omitempty" json:"forward_fraction,omitempty"`
	// LayerCompute: relative back-propagation compute per layer, same
	// order (default AlexNet's multiply-accumulates per layer: the fully
	// connected layers hold 96 % of the parameters but 8 % of the compute).
	// Empty with custom LayerBytes: equal shares.
	LayerCompute []float64 `yaml:"layer_compute,omitempty" json:"layer_compute,omitempty"`
}

// alexnetParams: parameters per layer (weights + biases), fc8 … conv1.
var alexnetParams = []int64{4097000, 16781312, 37752832, 442624, 663936, 885120, 307456, 34944}

// alexnetMACs: forward multiply-accumulates per image and layer, fc8 …
// conv1 (Krizhevsky et al.: conv1 55·55·96·11·11·3, conv2 27·27·256·5·5·48,
// conv3 13·13·384·3·3·256, conv4 13·13·384·3·3·192, conv5
// 13·13·256·3·3·192, fc6 9216·4096, fc7 4096·4096, fc8 4096·1000).
var alexnetMACs = []float64{4.096e6, 16.777e6, 37.749e6, 74.760e6, 112.140e6, 149.520e6, 223.949e6, 105.415e6}

type alexnet struct {
	p      AlexNet
	n      int
	step   int64
	nsteps int
	jit    jitter
}

func newAlexNet(s Spec) *source {
	var p AlexNet
	if s.Params.AlexNet != nil {
		p = *s.Params.AlexNet
	}
	if len(p.LayerBytes) == 0 {
		for _, n := range alexnetParams {
			p.LayerBytes = append(p.LayerBytes, Bytes(4*n))
		}
		if len(p.LayerCompute) == 0 {
			p.LayerCompute = alexnetMACs
		}
	}
	var sum float64
	for _, w := range p.LayerCompute {
		sum += w
	}
	if len(p.LayerCompute) != len(p.LayerBytes) || !(sum > 0) {
		p.LayerCompute = make([]float64, len(p.LayerBytes))
		for i := range p.LayerCompute {
			p.LayerCompute[i] = 1
		}
	}
	p.ForwardFraction = orFloat(p.ForwardFraction, 1.0/3)
	steps, step := s.resolve()
	return newSource(s.Ranks, &alexnet{p: p, n: s.Ranks, step: step, nsteps: steps, jit: newJitter(s.Seed, 4, s.Imbalance)})
}

func (a *alexnet) steps() int { return a.nsteps }

func (a *alexnet) gen(e *emitter, k int) bool {
	fwd := int64(float64(a.step) * a.p.ForwardFraction)
	var sum float64
	for _, w := range a.p.LayerCompute {
		sum += w
	}
	for t := 0; t < a.n; t++ {
		e.compute(t, a.jit.of(fwd))
	}
	var cum float64
	done := int64(0)
	for i, b := range a.p.LayerBytes {
		// Cumulative rounding: the layers add up to the step exactly.
		cum += a.p.LayerCompute[i]
		upTo := int64(math.Round(float64(a.step-fwd) * cum / sum))
		back := upTo - done
		done = upTo
		for t := 0; t < a.n; t++ {
			e.compute(t, a.jit.of(back))
		}
		e.coll(0, vef.Allreduce, constant(int64(b)), constant(int64(b)))
	}
	return k+1 < a.nsteps
}

// ---------------------------------------------------------------- micro-benchmarks

// Stencil is a halo-exchange micro-benchmark on a periodic 2D or 3D grid.
type Stencil struct {
	Dims           int   `yaml:"dims,omitempty" json:"dims,omitempty"`                       // 2 or 3, default 3
	HaloBytes      Bytes `yaml:"halo_bytes,omitempty" json:"halo_bytes,omitempty"`           // default 64KiB
	AllreduceEvery int   `yaml:"allreduce_every,omitempty" json:"allreduce_every,omitempty"` // 0 = never
}

type stencil struct {
	p      Stencil
	n      int
	step   int64
	nsteps int
	halo   [][]int32
	jit    jitter
}

func newStencil(s Spec) *source {
	var p Stencil
	if s.Params.Stencil != nil {
		p = *s.Params.Stencil
	}
	p.Dims = orInt(p.Dims, 3)
	p.HaloBytes = Bytes(orBytes(p.HaloBytes, 64<<10))
	steps, step := s.resolve()
	st := &stencil{p: p, n: s.Ranks, step: step, nsteps: steps, jit: newJitter(s.Seed, 5, s.Imbalance)}
	dims := grid3(s.Ranks)
	if p.Dims == 2 {
		d := grid2(s.Ranks)
		dims = [3]int{d[0], d[1], 1}
	}
	for d := 0; d < p.Dims; d++ {
		st.halo = append(st.halo, neighbours(dims, d, 1), neighbours(dims, d, -1))
	}
	return newSource(s.Ranks, st)
}

func grid2(n int) [2]int {
	a := int(math.Sqrt(float64(n)))
	for n%a != 0 {
		a--
	}
	return [2]int{n / a, a}
}

func (s *stencil) steps() int { return s.nsteps }

func (s *stencil) gen(e *emitter, k int) bool {
	for t := 0; t < s.n; t++ {
		e.compute(t, s.jit.of(s.step))
	}
	for _, h := range s.halo {
		e.swap(h, int64(s.p.HaloBytes))
	}
	if s.p.AllreduceEvery > 0 && (k+1)%s.p.AllreduceEvery == 0 {
		e.coll(0, vef.Allreduce, constant(8), constant(8))
	}
	return k+1 < s.nsteps
}

// Alltoall is a micro-benchmark of repeated Alltoall operations.
type Alltoall struct {
	Bytes     Bytes `yaml:"bytes,omitempty" json:"bytes,omitempty"` // per destination (total if vectorial), default 4KiB
	Vectorial bool  `yaml:"vectorial,omitempty" json:"vectorial,omitempty"`
}

type alltoall struct {
	p      Alltoall
	n      int
	step   int64
	nsteps int
	jit    jitter
}

func newAlltoall(s Spec) *source {
	var p Alltoall
	if s.Params.Alltoall != nil {
		p = *s.Params.Alltoall
	}
	p.Bytes = Bytes(orBytes(p.Bytes, 4<<10))
	steps, step := s.resolve()
	return newSource(s.Ranks, &alltoall{p: p, n: s.Ranks, step: step, nsteps: steps, jit: newJitter(s.Seed, 6, s.Imbalance)})
}

func (a *alltoall) steps() int { return a.nsteps }

func (a *alltoall) gen(e *emitter, k int) bool {
	for t := 0; t < a.n; t++ {
		e.compute(t, a.jit.of(a.step))
	}
	var v int64
	if a.p.Vectorial {
		v = 1
	}
	e.coll(0, vef.Alltoall, constant(int64(a.p.Bytes)), constant(v))
	return k+1 < a.nsteps
}

// Duration re-exports predictor.Duration for model sections.
type Duration = predictor.Duration
