package apps

import (
	"fmt"
	"math"
	"strings"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// LAMMPS models the communication of LAMMPS's rhodopsin benchmark
// (bench/in.rhodo: 32 000 atoms per replica, CHARMM force field with
// PPPM at 1e-4, SHAKE, NPT, 100 steps, thermo every 50) replicated
// `replicas` times and run on one rank per node (paper 000 §4.4, Fig. 6).
//
// The run starts with the input script and the data file broadcast from
// rank 0, then a quiet setup phase of compute (setup_fraction of the
// nominal compute), then `steps` MD steps. Every message size is derived
// from the geometry (box, replicas, cut-off, ranks) and the PPPM grid;
// docs/workloads.md gives the derivation. A zero field takes its default
// (DefaultLAMMPS).
type LAMMPS struct {
	// SetupFraction of the nominal compute (setup + steps × step_time)
	// is the quiet setup phase after the input broadcasts.
	SetupFraction float64 `yaml:"setup_fraction,omitempty" json:"setup_fraction,omitempty"`
	// InputLines of the input script, each read by rank 0 and broadcast
	// as its length (4 B) and its text (LineBytes).
	InputLines int   `yaml:"input_lines,omitempty" json:"input_lines,omitempty"`
	LineBytes  Bytes `yaml:"line_bytes,omitempty" json:"line_bytes,omitempty"`
	// InputBytes of the data file, broadcast by rank 0 in chunks of
	// ChunkBytes (read_data).
	InputBytes Bytes `yaml:"input_bytes,omitempty" json:"input_bytes,omitempty"`
	ChunkBytes Bytes `yaml:"chunk_bytes,omitempty" json:"chunk_bytes,omitempty"`

	// Atoms and Box (Å, x y z) of one replica; Replicas (x y z) as
	// in.rhodo's -var x/y/z.
	Atoms    int       `yaml:"atoms,omitempty" json:"atoms,omitempty"`
	Box      []float64 `yaml:"box,omitempty" json:"box,omitempty"`
	Replicas []int     `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// PairCutoff and Skin (Å): ghost atoms lie within PairCutoff + Skin.
	PairCutoff float64 `yaml:"pair_cutoff,omitempty" json:"pair_cutoff,omitempty"`
	Skin       float64 `yaml:"skin,omitempty" json:"skin,omitempty"`

	// Per-atom bytes of the halo swaps: forward (coordinates), reverse
	// (forces, newton on), border (ghost set-up on re-neighbouring) and
	// exchange (a migrating atom with its topology).
	ForwardBytes  Bytes `yaml:"forward_bytes,omitempty" json:"forward_bytes,omitempty"`
	ReverseBytes  Bytes `yaml:"reverse_bytes,omitempty" json:"reverse_bytes,omitempty"`
	BorderBytes   Bytes `yaml:"border_bytes,omitempty" json:"border_bytes,omitempty"`
	ExchangeBytes Bytes `yaml:"exchange_bytes,omitempty" json:"exchange_bytes,omitempty"`
	// MigrateDepth (Å): atoms within this depth of a face leave through
	// it at a re-neighbouring.
	MigrateDepth float64 `yaml:"migrate_depth,omitempty" json:"migrate_depth,omitempty"`
	// HaloBytes, if set, overrides every derived forward-swap size.
	HaloBytes Bytes `yaml:"halo_bytes,omitempty" json:"halo_bytes,omitempty"`
	// ShakeComms: extra forward comms per step (fix shake: 1).
	ShakeComms int `yaml:"shake_comms,omitempty" json:"shake_comms,omitempty"`

	// ReneighborEvery: a neighbour-list rebuild (exchange + borders
	// instead of a forward comm) every this many steps; NeighborDelay:
	// from this many steps after a rebuild, every step checks the
	// displacements with an Allreduce of CheckBytes.
	ReneighborEvery int   `yaml:"reneighbor_every,omitempty" json:"reneighbor_every,omitempty"`
	NeighborDelay   int   `yaml:"neighbor_delay,omitempty" json:"neighbor_delay,omitempty"`
	CheckBytes      Bytes `yaml:"check_bytes,omitempty" json:"check_bytes,omitempty"`

	// Grid is the PPPM grid of one replica (x y z), scaled by Replicas
	// and rounded up to 2^a·3^b·5^c; FullGrid overrides the result.
	Grid     []int `yaml:"grid,omitempty" json:"grid,omitempty"`
	FullGrid []int `yaml:"full_grid,omitempty" json:"full_grid,omitempty"`
	// Order of the charge assignment stencil.
	Order int `yaml:"order,omitempty" json:"order,omitempty"`
	// Differentiation: ik (1 forward + 3 backward FFTs, 3 field
	// components) or ad (1 + 1, 1 component).
	Differentiation string `yaml:"differentiation,omitempty" json:"differentiation,omitempty"`
	// PointBytes per complex FFT point (double: 16); a real grid value
	// is half of it.
	PointBytes Bytes `yaml:"point_bytes,omitempty" json:"point_bytes,omitempty"`

	// Allreduces (sizes in order): InitialAllreduces after the first
	// half of the integration (fix npt: temperature, pressure),
	// KSpaceAllreduces after PPPM (virial), FinalAllreduces after the
	// second half (temperature, pressure); ThermoAllreduces of 8 B on
	// thermo steps (every ThermoEvery steps and the first).
	InitialAllreduces []Bytes `yaml:"initial_allreduces,omitempty" json:"initial_allreduces,omitempty"`
	KSpaceAllreduces  []Bytes `yaml:"kspace_allreduces,omitempty" json:"kspace_allreduces,omitempty"`
	FinalAllreduces   []Bytes `yaml:"final_allreduces,omitempty" json:"final_allreduces,omitempty"`
	ThermoAllreduces  int     `yaml:"thermo_allreduces,omitempty" json:"thermo_allreduces,omitempty"`
	ThermoEvery       int     `yaml:"thermo_every,omitempty" json:"thermo_every,omitempty"`

	// Split of a step's compute: IntegrateFraction (half before, half
	// after the forces) and KSpaceFraction (half before the FFTs, half
	// after); the rest is pair, bonded and neighbour work.
	IntegrateFraction float64 `yaml:"integrate_fraction,omitempty" json:"integrate_fraction,omitempty"`
	KSpaceFraction    float64 `yaml:"kspace_fraction,omitempty" json:"kspace_fraction,omitempty"`
}

// DefaultLAMMPS is the rhodopsin benchmark as configs/workloads/lammps.yaml
// writes it out (docs/workloads.md says where each number comes from).
func DefaultLAMMPS() LAMMPS {
	return LAMMPS{
		SetupFraction: 0.45,
		InputLines:    30, LineBytes: 64,
		InputBytes: 7 << 20, ChunkBytes: 64 << 10,
		Atoms: 32000, Box: []float64{55, 77, 73.576}, Replicas: []int{8, 8, 8},
		PairCutoff: 10, Skin: 2,
		ForwardBytes: 24, ReverseBytes: 24, BorderBytes: 64, ExchangeBytes: 800,
		MigrateDepth: 0.1, ShakeComms: 1,
		ReneighborEvery: 10, NeighborDelay: 5, CheckBytes: 4,
		Grid: []int{25, 32, 32}, Order: 5, Differentiation: "ik", PointBytes: 16,
		InitialAllreduces: []Bytes{8, 48}, KSpaceAllreduces: []Bytes{48}, FinalAllreduces: []Bytes{8, 48},
		ThermoAllreduces: 10, ThermoEvery: 50,
		IntegrateFraction: 0.04, KSpaceFraction: 0.12,
	}
}

// RhodoSteps is in.rhodo's run length, the default number of steps.
const RhodoSteps = 100

// withDefaults fills the zero fields from DefaultLAMMPS.
func (p LAMMPS) withDefaults() LAMMPS {
	d := DefaultLAMMPS()
	p.SetupFraction = orFloat(p.SetupFraction, d.SetupFraction)
	p.InputLines = orInt(p.InputLines, d.InputLines)
	p.LineBytes = Bytes(orBytes(p.LineBytes, int64(d.LineBytes)))
	p.InputBytes = Bytes(orBytes(p.InputBytes, int64(d.InputBytes)))
	p.ChunkBytes = Bytes(orBytes(p.ChunkBytes, int64(d.ChunkBytes)))
	p.Atoms = orInt(p.Atoms, d.Atoms)
	if len(p.Box) == 0 {
		p.Box = d.Box
	}
	if len(p.Replicas) == 0 {
		p.Replicas = d.Replicas
	}
	p.PairCutoff = orFloat(p.PairCutoff, d.PairCutoff)
	p.Skin = orFloat(p.Skin, d.Skin)
	p.ForwardBytes = Bytes(orBytes(p.ForwardBytes, int64(d.ForwardBytes)))
	p.ReverseBytes = Bytes(orBytes(p.ReverseBytes, int64(d.ReverseBytes)))
	p.BorderBytes = Bytes(orBytes(p.BorderBytes, int64(d.BorderBytes)))
	p.ExchangeBytes = Bytes(orBytes(p.ExchangeBytes, int64(d.ExchangeBytes)))
	p.MigrateDepth = orFloat(p.MigrateDepth, d.MigrateDepth)
	p.ShakeComms = orInt(p.ShakeComms, d.ShakeComms)
	p.ReneighborEvery = orInt(p.ReneighborEvery, d.ReneighborEvery)
	p.NeighborDelay = orInt(p.NeighborDelay, d.NeighborDelay)
	p.CheckBytes = Bytes(orBytes(p.CheckBytes, int64(d.CheckBytes)))
	if len(p.Grid) == 0 {
		p.Grid = d.Grid
	}
	p.Order = orInt(p.Order, d.Order)
	if p.Differentiation == "" {
		p.Differentiation = d.Differentiation
	}
	p.PointBytes = Bytes(orBytes(p.PointBytes, int64(d.PointBytes)))
	if p.InitialAllreduces == nil {
		p.InitialAllreduces = d.InitialAllreduces
	}
	if p.KSpaceAllreduces == nil {
		p.KSpaceAllreduces = d.KSpaceAllreduces
	}
	if p.FinalAllreduces == nil {
		p.FinalAllreduces = d.FinalAllreduces
	}
	p.ThermoAllreduces = orInt(p.ThermoAllreduces, d.ThermoAllreduces)
	p.ThermoEvery = orInt(p.ThermoEvery, d.ThermoEvery)
	p.IntegrateFraction = orFloat(p.IntegrateFraction, d.IntegrateFraction)
	p.KSpaceFraction = orFloat(p.KSpaceFraction, d.KSpaceFraction)
	return p
}

// Validate checks the section; errors name the key as prefix.<field>
// (prefix is e.g. workload.lammps).
func (p *LAMMPS) Validate(prefix string) error {
	bad := func(field, want string, got any) error {
		return fmt.Errorf("%s.%s: must be %s, got %v", prefix, field, want, got)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !(p.SetupFraction >= 0 && p.SetupFraction < 1) {
		return bad("setup_fraction", "in [0, 1)", p.SetupFraction)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"input_lines", int64(p.InputLines)}, {"line_bytes", int64(p.LineBytes)},
		{"input_bytes", int64(p.InputBytes)}, {"chunk_bytes", int64(p.ChunkBytes)},
		{"atoms", int64(p.Atoms)}, {"forward_bytes", int64(p.ForwardBytes)},
		{"reverse_bytes", int64(p.ReverseBytes)}, {"border_bytes", int64(p.BorderBytes)},
		{"exchange_bytes", int64(p.ExchangeBytes)}, {"halo_bytes", int64(p.HaloBytes)},
		{"shake_comms", int64(p.ShakeComms)}, {"reneighbor_every", int64(p.ReneighborEvery)},
		{"neighbor_delay", int64(p.NeighborDelay)}, {"check_bytes", int64(p.CheckBytes)},
		{"order", int64(p.Order)}, {"point_bytes", int64(p.PointBytes)},
		{"thermo_allreduces", int64(p.ThermoAllreduces)}, {"thermo_every", int64(p.ThermoEvery)},
	} {
		if f.v < 0 {
			return bad(f.name, "≥ 0", f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"pair_cutoff", p.PairCutoff}, {"skin", p.Skin}, {"migrate_depth", p.MigrateDepth},
	} {
		if !(f.v >= 0) || !finite(f.v) {
			return bad(f.name, "a finite number ≥ 0", f.v)
		}
	}
	if p.Order == 1 || p.Order > 7 {
		return bad("order", "in 2..7 (PPPM's stencils)", p.Order)
	}
	if n := len(p.Box); n != 0 && n != 3 {
		return fmt.Errorf("%s.box: want 3 lengths (x y z), got %d", prefix, n)
	}
	for i, v := range p.Box {
		if !(v > 0) || !finite(v) {
			return fmt.Errorf("%s.box[%d]: must be > 0 Å, got %v", prefix, i, v)
		}
	}
	for _, f := range []struct {
		name string
		v    []int
		max  int
	}{{"replicas", p.Replicas, 1 << 10}, {"grid", p.Grid, 1 << 12}, {"full_grid", p.FullGrid, 1 << 14}} {
		if n := len(f.v); n != 0 && n != 3 {
			return fmt.Errorf("%s.%s: want 3 counts (x y z), got %d", prefix, f.name, n)
		}
		for i, v := range f.v {
			if v < 1 || v > f.max {
				return fmt.Errorf("%s.%s[%d]: must be in [1, %d], got %d", prefix, f.name, i, f.max, v)
			}
		}
	}
	switch strings.ToLower(p.Differentiation) {
	case "", "ik", "ad":
	default:
		return fmt.Errorf("%s.differentiation: want ik or ad, got %q", prefix, p.Differentiation)
	}
	for _, f := range []struct {
		name string
		v    []Bytes
	}{{"initial_allreduces", p.InitialAllreduces}, {"kspace_allreduces", p.KSpaceAllreduces}, {"final_allreduces", p.FinalAllreduces}} {
		for i, b := range f.v {
			if b < 0 {
				return fmt.Errorf("%s.%s[%d]: must be ≥ 0, got %d", prefix, f.name, i, b)
			}
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"integrate_fraction", p.IntegrateFraction}, {"kspace_fraction", p.KSpaceFraction}} {
		if !(f.v >= 0 && f.v < 1) {
			return bad(f.name, "in [0, 1)", f.v)
		}
	}
	if p.IntegrateFraction+p.KSpaceFraction >= 1 {
		return fmt.Errorf("%s.kspace_fraction: integrate_fraction + kspace_fraction must be < 1, got %v", prefix, p.IntegrateFraction+p.KSpaceFraction)
	}
	return nil
}

// Swap is one swap of a halo operation: every rank sends Bytes to its
// neighbour along Dim (the upper one if Up) and receives from the other.
// A forward operation lists its swaps in LAMMPS's order: per dimension
// x, y, z, towards the lower neighbour, then towards the upper, repeated
// when the halo spans more than one subdomain.
type Swap struct {
	Dim   int
	Up    bool
	Bytes int64
}

// LAMMPSLayout is what the model derives from the configuration and the
// rank count: the decompositions and every message size of a step.
type LAMMPSLayout struct {
	Ranks      int
	Procs      [3]int     // atom (brick) decomposition px py pz
	Sub        [3]float64 // subdomain lengths (Å)
	Density    float64    // atoms / Å³
	Grid       [3]int     // PPPM grid
	GhostPlane [3]int     // ghost grid planes per side
	FFT        [2]int     // np1 × np2 of the FFT pencils
	// Halo operations (6 or more swaps: x−, x+, y−, y+, z−, z+ …).
	Forward, Reverse, Border, Exchange []Swap
	GridReverse, GridForward           []Swap
	// Per-destination bytes of the transposes.
	Brick2FFT, RowTranspose, ColTranspose int64
	FFTs                                  int // 3-D FFTs per step
}

// Layout derives the model's layout for ranks (≥ 1); p must be valid.
func (p LAMMPS) Layout(ranks int) LAMMPSLayout {
	p = p.withDefaults()
	var L LAMMPSLayout
	L.Ranks = ranks
	var box [3]float64
	vol, reps := 1.0, 1
	for d := 0; d < 3; d++ {
		box[d] = p.Box[d] * float64(p.Replicas[d])
		vol *= box[d]
		reps *= p.Replicas[d]
	}
	L.Density = float64(p.Atoms) * float64(reps) / vol
	L.Procs = procGrid3(ranks, box)
	for d := 0; d < 3; d++ {
		L.Sub[d] = box[d] / float64(L.Procs[d])
	}
	rc := p.PairCutoff + p.Skin
	atoms := func(per Bytes, ghost bool, depth float64) []Swap {
		var out []Swap
		for d := 0; d < 3; d++ {
			area := 1.0
			for e := 0; e < 3; e++ {
				if e == d {
					continue
				}
				a := L.Sub[e]
				if ghost && e < d { // earlier dimensions' ghosts travel on
					a += 2 * rc
				}
				area *= a
			}
			for _, w := range slabs(depth, L.Sub[d]) {
				b := int64(math.Round(L.Density * w * area * float64(per)))
				out = append(out, Swap{d, false, b}, Swap{d, true, b})
			}
		}
		return out
	}
	L.Forward = atoms(p.ForwardBytes, true, rc)
	if p.HaloBytes > 0 {
		for i := range L.Forward {
			L.Forward[i].Bytes = int64(p.HaloBytes)
		}
	}
	L.Reverse = atoms(p.ReverseBytes, true, rc)
	L.Border = atoms(p.BorderBytes, true, rc)
	L.Exchange = atoms(p.ExchangeBytes, false, p.MigrateDepth)
	if len(p.FullGrid) == 3 {
		L.Grid = [3]int{p.FullGrid[0], p.FullGrid[1], p.FullGrid[2]}
	} else {
		for d := 0; d < 3; d++ {
			L.Grid[d] = factorable(p.Grid[d] * p.Replicas[d])
		}
	}
	var owned [3]float64
	for d := 0; d < 3; d++ {
		owned[d] = float64(L.Grid[d]) / float64(L.Procs[d])
		h := box[d] / float64(L.Grid[d])
		L.GhostPlane[d] = p.Order/2 + int(math.Ceil(p.Skin/2/h))
	}
	realBytes := float64(p.PointBytes) / 2
	qty := 3
	L.FFTs = 4
	if strings.EqualFold(p.Differentiation, "ad") {
		qty, L.FFTs = 1, 2
	}
	planes := func(per float64) []Swap {
		var out []Swap
		for d := 0; d < 3; d++ {
			area := 1.0
			for e := 0; e < 3; e++ {
				if e == d {
					continue
				}
				a := owned[e]
				if e < d {
					a += 2 * float64(L.GhostPlane[e])
				}
				area *= a
			}
			for _, w := range slabs(float64(L.GhostPlane[d]), owned[d]) {
				b := int64(math.Round(w * area * per))
				out = append(out, Swap{d, false, b}, Swap{d, true, b})
			}
		}
		return out
	}
	L.GridReverse = planes(realBytes)
	L.GridForward = planes(realBytes * float64(qty))
	n := float64(L.Grid[0]) * float64(L.Grid[1]) * float64(L.Grid[2])
	P := float64(ranks)
	np1 := bifactor(ranks)
	L.FFT = [2]int{np1, ranks / np1}
	L.Brick2FFT = int64(math.Round(n * realBytes / (P * float64(L.Procs[0]))))
	L.RowTranspose = int64(math.Round(n * float64(p.PointBytes) / (P * float64(L.FFT[0]))))
	L.ColTranspose = int64(math.Round(n * float64(p.PointBytes) / (P * float64(L.FFT[1]))))
	return L
}

// slabs splits a halo of depth over subdomains of length l: one slab per
// subdomain it reaches (LAMMPS's "need"), the last one partial.
func slabs(depth, l float64) []float64 {
	if depth <= 0 || l <= 0 {
		return []float64{0}
	}
	var out []float64
	for left := depth; left > 1e-12; left -= l {
		out = append(out, math.Min(l, left))
	}
	return out
}

// procGrid3 is LAMMPS's processor grid: px·py·pz = n with the least
// subdomain surface for the box (first found on ties, px ascending).
func procGrid3(n int, box [3]float64) [3]int {
	best, bestArea := [3]int{n, 1, 1}, math.Inf(1)
	for px := 1; px <= n; px++ {
		if n%px != 0 {
			continue
		}
		m := n / px
		for py := 1; py <= m; py++ {
			if m%py != 0 {
				continue
			}
			pz := m / py
			a, b, c := box[0]/float64(px), box[1]/float64(py), box[2]/float64(pz)
			if area := a*b + b*c + a*c; area < bestArea-1e-9*area {
				best, bestArea = [3]int{px, py, pz}, area
			}
		}
	}
	return best
}

// bifactor gives the largest divisor of n that is ≤ √n (LAMMPS's FFT
// pencils: np1 × np2, np1 ≤ np2).
func bifactor(n int) int {
	for a := int(math.Sqrt(float64(n))); a > 1; a-- {
		if n%a == 0 {
			return a
		}
	}
	return 1
}

// factorable rounds n up to the next 2^a·3^b·5^c (PPPM's FFT sizes).
func factorable(n int) int {
	for ; ; n++ {
		m := n
		for _, f := range []int{2, 3, 5} {
			for m%f == 0 {
				m /= f
			}
		}
		if m == 1 {
			return n
		}
	}
}

type lammps struct {
	p      LAMMPS
	L      LAMMPSLayout
	n      int
	setup  int64
	step   int64
	nsteps int
	jit    jitter
	// neighbours: per swap, each rank's destination.
	nbr [3][2][]int32
	// communicators: 0 world, then brick x-lines, FFT rows, FFT columns.
	lines, rows, cols []int
	built             int // step of the last neighbour-list build
}

func newLAMMPS(s Spec) *source {
	var p LAMMPS
	if s.Params.LAMMPS != nil {
		p = *s.Params.LAMMPS
	}
	p = p.withDefaults()
	l := &lammps{p: p, n: s.Ranks, jit: newJitter(s.Seed, 1, s.Imbalance)}
	l.L = p.Layout(s.Ranks)
	st, _ := Defaults(KindLAMMPS)
	if s.StepTime > 0 {
		st = s.StepTime
	}
	l.step = ps(st)
	f := p.SetupFraction
	switch {
	case s.Steps > 0:
		l.nsteps = s.Steps
	case s.Duration > 0: // nominal compute: setup + steps × step_time
		l.nsteps = max(1, int(math.Round(float64(ps(s.Duration))*(1-f)/float64(l.step))))
	default:
		l.nsteps = RhodoSteps
	}
	l.setup = int64(float64(int64(l.nsteps)*l.step) * f / (1 - f))
	dims := l.L.Procs
	for d := 0; d < 3; d++ {
		l.nbr[d][0] = neighbours(dims, d, -1)
		l.nbr[d][1] = neighbours(dims, d, 1)
	}
	world := make([]int32, s.Ranks)
	for i := range world {
		world[i] = int32(i)
	}
	comms := [][]int32{world}
	group := func(members [][]int32) []int {
		var ids []int
		for _, m := range members {
			ids = append(ids, len(comms))
			comms = append(comms, m)
		}
		return ids
	}
	// Brick x-lines: ranks c + px·(…) with the same y and z coordinates.
	px := dims[0]
	lines := make([][]int32, s.Ranks/px)
	for r := 0; r < s.Ranks; r++ {
		lines[r/px] = append(lines[r/px], int32(r))
	}
	l.lines = group(lines)
	// FFT pencils: ip1 = r mod np1, ip2 = r / np1; rows share ip2.
	np1, np2 := l.L.FFT[0], l.L.FFT[1]
	rows := make([][]int32, np2)
	cols := make([][]int32, np1)
	for r := 0; r < s.Ranks; r++ {
		rows[r/np1] = append(rows[r/np1], int32(r))
		cols[r%np1] = append(cols[r%np1], int32(r))
	}
	l.rows = group(rows)
	l.cols = group(cols)
	return &source{e: newEmitter(s.Ranks, comms), s: l}
}

// steps: the set-up (k = 0) and the MD steps.
func (l *lammps) steps() int { return l.nsteps + 1 }

// LAMMPSStep says what step k (0-based) of an n-step run does.
type LAMMPSStep struct {
	Rebuild bool // exchange + borders instead of a forward comm
	Check   bool // the neighbour-list check Allreduce
	Thermo  bool // thermo output: ThermoAllreduces
}

// stepKind gives step k's structure, given the step of the last rebuild
// (p has its defaults).
func (p *LAMMPS) stepKind(k, n, built int) LAMMPSStep {
	var s LAMMPSStep
	s.Rebuild = k%p.ReneighborEvery == 0
	s.Check = k > 0 && k-built >= p.NeighborDelay
	s.Thermo = k == 0 || (k+1)%p.ThermoEvery == 0 || k == n-1
	return s
}

// Schedule lists the structure of every step of an n-step run.
func (p LAMMPS) Schedule(n int) []LAMMPSStep {
	p = p.withDefaults()
	out := make([]LAMMPSStep, n)
	built := 0
	for k := range out {
		out[k] = p.stepKind(k, n, built)
		if out[k].Rebuild {
			built = k
		}
	}
	return out
}

func (l *lammps) gen(e *emitter, k int) bool {
	if k == 0 {
		l.genSetup(e)
		return l.nsteps > 0
	}
	l.genStep(e, k-1)
	return k < l.nsteps
}

func (l *lammps) bcast(e *emitter, b int64) {
	e.coll(0, vef.Bcast, rootOnly(b), nonRoot(b))
}

// genSetup: the input script and the data file broadcast line by line
// and chunk by chunk from rank 0, then the quiet setup compute.
func (l *lammps) genSetup(e *emitter) {
	for i := 0; i < l.p.InputLines; i++ {
		l.bcast(e, 4)
		l.bcast(e, int64(l.p.LineBytes))
	}
	for left := int64(l.p.InputBytes); left > 0; {
		b := min(left, int64(max(1, l.p.ChunkBytes)))
		left -= b
		l.bcast(e, b)
	}
	for t := 0; t < l.n; t++ {
		e.compute(t, l.setup)
	}
}

func (l *lammps) compute(e *emitter, frac float64) {
	d := int64(float64(l.step) * frac)
	if d <= 0 {
		return
	}
	for t := 0; t < l.n; t++ {
		e.compute(t, l.jit.of(d))
	}
}

// halo runs one halo operation's swaps, forward order (x, y, z) or
// reverse (z, y, x, as LAMMPS's reverse comm).
func (l *lammps) halo(e *emitter, swaps []Swap, reverse bool) {
	for i := range swaps {
		s := swaps[i]
		if reverse { // back to the ghosts' owners, the other way
			s = swaps[len(swaps)-1-i]
			s.Up = !s.Up
		}
		up := 0
		if s.Up {
			up = 1
		}
		e.swap(l.nbr[s.Dim][up], s.Bytes)
	}
}

func (l *lammps) allreduces(e *emitter, sizes []Bytes) {
	for _, b := range sizes {
		e.coll(0, vef.Allreduce, constant(int64(b)), constant(int64(b)))
	}
}

func (l *lammps) alltoall(e *emitter, comms []int, b int64) {
	for _, c := range comms {
		e.coll(c, vef.Alltoall, constant(b), constant(0))
	}
}

// fft3d: three transposes, fast→mid in the rows, mid→slow and slow→out
// in the columns.
func (l *lammps) fft3d(e *emitter) {
	l.alltoall(e, l.rows, l.L.RowTranspose)
	l.alltoall(e, l.cols, l.L.ColTranspose)
	l.alltoall(e, l.cols, l.L.ColTranspose)
}

func (l *lammps) genStep(e *emitter, k int) {
	p, L := &l.p, &l.L
	s := p.stepKind(k, l.nsteps, l.built)
	if s.Rebuild {
		l.built = k
	}
	half := p.IntegrateFraction / 2
	l.compute(e, half)
	l.allreduces(e, p.InitialAllreduces)
	if s.Check {
		b := int64(p.CheckBytes)
		e.coll(0, vef.Allreduce, constant(b), constant(b))
	}
	if s.Rebuild {
		l.halo(e, L.Exchange, false)
		l.halo(e, L.Border, false)
	} else {
		l.halo(e, L.Forward, false)
	}
	l.compute(e, 1-p.IntegrateFraction-p.KSpaceFraction)
	// PPPM: charge assignment, ghost-grid reverse comm, brick → FFT
	// layout, the FFTs, ghost-grid forward comm of the field,
	// interpolation.
	l.compute(e, p.KSpaceFraction/2)
	l.halo(e, L.GridReverse, true)
	l.alltoall(e, l.lines, L.Brick2FFT)
	for i := 0; i < L.FFTs; i++ {
		l.fft3d(e)
	}
	l.halo(e, L.GridForward, false)
	l.compute(e, p.KSpaceFraction/2)
	l.allreduces(e, p.KSpaceAllreduces)
	l.halo(e, L.Reverse, true)
	for i := 0; i < p.ShakeComms; i++ {
		l.halo(e, L.Forward, false)
	}
	l.compute(e, half)
	l.allreduces(e, p.FinalAllreduces)
	if s.Thermo {
		for i := 0; i < p.ThermoAllreduces; i++ {
			e.coll(0, vef.Allreduce, constant(8), constant(8))
		}
	}
}
