package apps

import (
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// cube10 is a 10 Å cube of 1000 atoms (density 1) with a 3 Å ghost
// cut-off and a 10³ PPPM grid: every size below is worked out by hand.
func cube10() LAMMPS {
	return LAMMPS{Atoms: 1000, Box: []float64{10, 10, 10}, Replicas: []int{1, 1, 1},
		PairCutoff: 2, Skin: 1, Grid: []int{10, 10, 10}, MigrateDepth: 0.1}
}

// TestLAMMPSLayoutByHand checks the derived sizes against hand
// calculations (docs/workloads.md gives the formulas).
func TestLAMMPSLayoutByHand(t *testing.T) {
	tests := []struct {
		name  string
		p     LAMMPS
		ranks int
		want  LAMMPSLayout
	}{{
		// 8 ranks: 2×2×2 subdomains of 5 Å. Ghost slabs of 3 Å:
		// x 3·5·5 = 75 atoms, y 3·(5+6)·5 = 165, z 3·11·11 = 363;
		// × 24 B (forward, reverse) or 64 B (border). Exchange: 0.1·5·5
		// = 2.5 atoms × 800 B. Grid: 5 planes owned, h = 1 Å, ghosts
		// 5/2 + ⌈0.5/1⌉ = 3 planes: 75, 165, 363 points × 8 B (reverse)
		// or × 24 B (3 field components). FFT: 8 = 2 × 4, N = 1000:
		// brick→FFT 1000·8/(8·2) = 500, rows 1000·16/(8·2) = 1000,
		// columns 1000·16/(8·4) = 500.
		name: "cube 8 ranks", p: cube10(), ranks: 8,
		want: LAMMPSLayout{Ranks: 8, Procs: [3]int{2, 2, 2}, Sub: [3]float64{5, 5, 5}, Density: 1,
			Grid: [3]int{10, 10, 10}, GhostPlane: [3]int{3, 3, 3}, FFT: [2]int{2, 4},
			Forward:     []Swap{{0, false, 1800}, {0, true, 1800}, {1, false, 3960}, {1, true, 3960}, {2, false, 8712}, {2, true, 8712}},
			Reverse:     []Swap{{0, false, 1800}, {0, true, 1800}, {1, false, 3960}, {1, true, 3960}, {2, false, 8712}, {2, true, 8712}},
			Border:      []Swap{{0, false, 4800}, {0, true, 4800}, {1, false, 10560}, {1, true, 10560}, {2, false, 23232}, {2, true, 23232}},
			Exchange:    []Swap{{0, false, 2000}, {0, true, 2000}, {1, false, 2000}, {1, true, 2000}, {2, false, 2000}, {2, true, 2000}},
			GridReverse: []Swap{{0, false, 600}, {0, true, 600}, {1, false, 1320}, {1, true, 1320}, {2, false, 2904}, {2, true, 2904}},
			GridForward: []Swap{{0, false, 1800}, {0, true, 1800}, {1, false, 3960}, {1, true, 3960}, {2, false, 8712}, {2, true, 8712}},
			Brick2FFT:   500, RowTranspose: 1000, ColTranspose: 500, FFTs: 4},
	}, {
		// 64 ranks: 4×4×4 subdomains of 2.5 Å < 3 Å: two slabs per
		// direction (2.5 and 0.5 Å). x: 2.5·6.25 = 15.625 atoms → 375 B,
		// 0.5·6.25 → 75 B; y: area 8.5·2.5 → 1275, 255; z: 8.5·8.5 →
		// 4335, 867. Grid: 2.5 planes owned, 3 ghost planes → slabs of
		// 2.5 and 0.5 planes; ad: 1 field component, 2 FFTs.
		// FFT 64 = 8 × 8: rows and columns 1000·16/(64·8) = 31.25 → 31.
		name: "cube 64 ranks, ad", p: func() LAMMPS { p := cube10(); p.Differentiation = "ad"; return p }(), ranks: 64,
		want: LAMMPSLayout{Ranks: 64, Procs: [3]int{4, 4, 4}, Sub: [3]float64{2.5, 2.5, 2.5}, Density: 1,
			Grid: [3]int{10, 10, 10}, GhostPlane: [3]int{3, 3, 3}, FFT: [2]int{8, 8},
			Forward: []Swap{{0, false, 375}, {0, true, 375}, {0, false, 75}, {0, true, 75},
				{1, false, 1275}, {1, true, 1275}, {1, false, 255}, {1, true, 255},
				{2, false, 4335}, {2, true, 4335}, {2, false, 867}, {2, true, 867}},
			Reverse: []Swap{{0, false, 375}, {0, true, 375}, {0, false, 75}, {0, true, 75},
				{1, false, 1275}, {1, true, 1275}, {1, false, 255}, {1, true, 255},
				{2, false, 4335}, {2, true, 4335}, {2, false, 867}, {2, true, 867}},
			// 64 B × the forward atoms: 1000, 200, 3400, 680, 11560, 2312.
			Border: []Swap{{0, false, 1000}, {0, true, 1000}, {0, false, 200}, {0, true, 200},
				{1, false, 3400}, {1, true, 3400}, {1, false, 680}, {1, true, 680},
				{2, false, 11560}, {2, true, 11560}, {2, false, 2312}, {2, true, 2312}},
			// 0.1·2.5·2.5 = 0.625 atoms × 800 B.
			Exchange: []Swap{{0, false, 500}, {0, true, 500}, {1, false, 500}, {1, true, 500}, {2, false, 500}, {2, true, 500}},
			// points × 8 B: x 2.5·6.25 = 15.625 → 125, 0.5·6.25 → 25;
			// y area 8.5·2.5 → 425, 85; z 8.5² → 1445, 289.
			GridReverse: []Swap{{0, false, 125}, {0, true, 125}, {0, false, 25}, {0, true, 25},
				{1, false, 425}, {1, true, 425}, {1, false, 85}, {1, true, 85},
				{2, false, 1445}, {2, true, 1445}, {2, false, 289}, {2, true, 289}},
			GridForward: []Swap{{0, false, 125}, {0, true, 125}, {0, false, 25}, {0, true, 25},
				{1, false, 425}, {1, true, 425}, {1, false, 85}, {1, true, 85},
				{2, false, 1445}, {2, true, 1445}, {2, false, 289}, {2, true, 289}},
			Brick2FFT: 31, RowTranspose: 31, ColTranspose: 31, FFTs: 2},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.p.Layout(tc.ranks)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("layout\n got  %+v\n want %+v", got, tc.want)
			}
		})
	}
}

// TestLAMMPSRhodoLayout: the default rhodopsin replicated 8×8×8 on the
// paper's 4160 ranks, by hand.
func TestLAMMPSRhodoLayout(t *testing.T) {
	L := DefaultLAMMPS().Layout(4160)
	// Box 440 × 616 × 588.608 Å; 16 384 000 atoms.
	rho := 32000.0 * 512 / (440 * 616 * 588.608)
	if math.Abs(L.Density-rho) > 1e-12 {
		t.Errorf("density %v, want %v", L.Density, rho)
	}
	// 4160 = 13·20·16: subdomains 33.85 × 30.8 × 36.79 Å (the least
	// surface of the factorisations).
	if L.Procs != [3]int{13, 20, 16} {
		t.Errorf("procs %v", L.Procs)
	}
	// Grid 25·8 = 200, 32·8 = 256 (both 2^a·3^b·5^c).
	if L.Grid != [3]int{200, 256, 256} || L.FFT != [2]int{64, 65} {
		t.Errorf("grid %v, fft %v", L.Grid, L.FFT)
	}
	// x forward swap: ρ · 12 Å · 30.8 · 36.788 × 24 B.
	x := int64(math.Round(rho * 12 * (616.0 / 20) * (588.608 / 16) * 24))
	if L.Forward[0].Bytes != x || len(L.Forward) != 6 {
		t.Errorf("forward x %d, want %d (%d swaps)", L.Forward[0].Bytes, x, len(L.Forward))
	}
	// Transposes: 200·256·256 points × 16 B / 4160 ranks / 64 or 65.
	n := 200.0 * 256 * 256 * 16 / 4160
	if L.RowTranspose != int64(math.Round(n/64)) || L.ColTranspose != int64(math.Round(n/65)) {
		t.Errorf("transposes %d %d", L.RowTranspose, L.ColTranspose)
	}
}

func TestLAMMPSFactors(t *testing.T) {
	for _, tc := range []struct{ n, bif int }{{4160, 64}, {8, 2}, {7, 1}, {36, 6}, {1, 1}} {
		if got := bifactor(tc.n); got != tc.bif {
			t.Errorf("bifactor(%d) = %d, want %d", tc.n, got, tc.bif)
		}
	}
	for n, want := range map[int]int{25: 25, 175: 180, 7: 8, 31: 32, 200: 200, 97: 100} {
		if got := factorable(n); got != want {
			t.Errorf("factorable(%d) = %d, want %d", n, got, want)
		}
	}
	// 12 ranks on 30×10×10: 3·2·2 gives 10×5×5 subdomains, surface
	// 50+25+50 = 125, found before 6·1·2 (also 125); 12·1·1 gives 150.
	if got := procGrid3(12, [3]float64{30, 10, 10}); got != [3]int{3, 2, 2} {
		t.Errorf("procGrid3 = %v", got)
	}
	p := DefaultLAMMPS()
	p.Replicas = []int{7, 1, 1}
	if g := p.Layout(8).Grid; g != [3]int{180, 32, 32} { // 175 → 180
		t.Errorf("grid %v", g)
	}
}

// TestLAMMPSSchedule: rebuilds every 10 steps, the displacement check
// from 5 steps after a rebuild, thermo at the first, every 50th and the
// last step (in.rhodo: thermo 50, run 100).
func TestLAMMPSSchedule(t *testing.T) {
	p := DefaultLAMMPS()
	var rebuild, check, thermo []int
	for k, s := range p.Schedule(100) {
		if s.Rebuild {
			rebuild = append(rebuild, k)
		}
		if s.Check {
			check = append(check, k)
		}
		if s.Thermo {
			thermo = append(thermo, k)
		}
	}
	if want := []int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}; !reflect.DeepEqual(rebuild, want) {
		t.Errorf("rebuilds %v", rebuild)
	}
	// The check of step 10 is the one that triggers its rebuild: 5–10,
	// 15–20, …, 85–90, 95–99.
	if len(check) != 9*6+5 || check[0] != 5 || check[5] != 10 || check[6] != 15 || check[58] != 99 {
		t.Errorf("checks %v", check)
	}
	if want := []int{0, 49, 99}; !reflect.DeepEqual(thermo, want) {
		t.Errorf("thermo %v", thermo)
	}
}

type lammpsCounts struct {
	bcast      []int64          // sizes in order
	allreduce  map[int64]int    // size → operations
	alltoall   map[[2]int64]int // (communicator size, bytes) → operations
	msgs       int
	msgBytes   int64
	compute    int64 // task 0's compute (ps)
	firstComms int
}

func countLAMMPS(t *testing.T, s Spec) lammpsCounts {
	t.Helper()
	src, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	c := lammpsCounts{allreduce: map[int64]int{}, alltoall: map[[2]int64]int{}, firstComms: len(src.Comms())}
	seen := map[int64]bool{}
	comms := src.Comms()
	var r vef.Record
	for {
		err := src.Next(&r)
		if errors.Is(err, io.EOF) {
			return c
		}
		if err != nil {
			t.Fatal(err)
		}
		if (r.Kind == vef.Message && r.Src == 0) || (r.Kind == vef.Collective && r.Src == 0) {
			c.compute += r.Time
		}
		if r.Kind == vef.Message {
			c.msgs++
			c.msgBytes += r.Bytes
			continue
		}
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		switch r.Op {
		case vef.Bcast:
			c.bcast = append(c.bcast, r.Bytes)
		case vef.Allreduce:
			c.allreduce[r.Bytes]++
		case vef.Alltoall:
			c.alltoall[[2]int64{int64(len(comms[r.Comm])), r.Bytes}]++
		default:
			t.Errorf("unexpected op %v", r.Op)
		}
	}
}

// TestLAMMPSSteps generates 2 steps of the 8-rank cube and counts what
// they hold against the hand calculation of TestLAMMPSLayoutByHand.
func TestLAMMPSSteps(t *testing.T) {
	p := cube10()
	p.InputLines, p.InputBytes, p.ChunkBytes = 3, 100, 64
	p.SetupFraction = 0.5
	c := countLAMMPS(t, Spec{Kind: KindLAMMPS, Ranks: 8, Steps: 2, StepTime: time.Millisecond, Params: Params{LAMMPS: &p}})
	// Setup: 3 lines × (4 B, 64 B), then the data file in 64 + 36 B.
	if want := []int64{4, 64, 4, 64, 4, 64, 64, 36}; !reflect.DeepEqual(c.bcast, want) {
		t.Errorf("bcasts %v, want %v", c.bcast, want)
	}
	// Per step 2 + 1 + 2 NPT/PPPM Allreduces (8, 48 | 48 | 8, 48); both
	// steps are thermo steps (first and last): + 10 × 8 B. No check
	// (step 1 is 1 < 5 steps after the rebuild).
	if want := map[int64]int{8: 2 * (2 + 10), 48: 2 * 3}; !reflect.DeepEqual(c.allreduce, want) {
		t.Errorf("allreduces %v, want %v", c.allreduce, want)
	}
	// Per step: brick→FFT in the 4 x-lines of 2 ranks (500 B); 4 FFTs of
	// one transpose in the 4 rows of 2 (1000 B) and two in the 2
	// columns of 4 (500 B).
	if want := map[[2]int64]int{{2, 500}: 2 * 4, {2, 1000}: 2 * 4 * 4, {4, 500}: 2 * 4 * 2 * 2}; !reflect.DeepEqual(c.alltoall, want) {
		t.Errorf("alltoalls %v, want %v", c.alltoall, want)
	}
	// Halo swaps, 8 messages each. Step 0 (rebuild): exchange, borders,
	// grid reverse, grid forward, force reverse, SHAKE forward = 36
	// swaps; step 1: forward instead of exchange + borders = 30 swaps.
	if c.msgs != 8*(36+30) {
		t.Errorf("%d messages, want %d", c.msgs, 8*(36+30))
	}
	per := func(a, b, c int64) int64 { return 2 * (a + b + c) }
	step0 := per(2000, 2000, 2000) + per(4800, 10560, 23232) + per(600, 1320, 2904) + 3*per(1800, 3960, 8712)
	step1 := per(1800, 3960, 8712) + per(600, 1320, 2904) + 3*per(1800, 3960, 8712)
	if want := 8 * (step0 + step1); c.msgBytes != want {
		t.Errorf("%d message bytes, want %d", c.msgBytes, want)
	}
	// Compute: setup 0.5/0.5 × 2 ms, then 2 × 1 ms.
	if want := int64(4e9); c.compute != want {
		t.Errorf("task 0 computes %d ps, want %d", c.compute, want)
	}
	// Communicators: world, 4 x-lines, 4 FFT rows, 2 FFT columns.
	if c.firstComms != 1+4+4+2 {
		t.Errorf("%d communicators", c.firstComms)
	}
}

func TestLAMMPSDeterministic(t *testing.T) {
	gen := func(seed uint64) []vef.Record {
		p := cube10()
		src, err := New(Spec{Kind: KindLAMMPS, Ranks: 8, Steps: 3, Imbalance: 0.1, Seed: seed, Params: Params{LAMMPS: &p}})
		if err != nil {
			t.Fatal(err)
		}
		var out []vef.Record
		var r vef.Record
		for src.Next(&r) == nil {
			out = append(out, r)
		}
		return out
	}
	a, b, c := gen(1), gen(1), gen(2)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different records")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds, same records")
	}
}

func TestLAMMPSValidate(t *testing.T) {
	for _, tc := range []struct {
		p    LAMMPS
		want string
	}{
		{LAMMPS{SetupFraction: 1}, "workload.lammps.setup_fraction: must be in [0, 1)"},
		{LAMMPS{HaloBytes: -1}, "workload.lammps.halo_bytes: must be ≥ 0"},
		{LAMMPS{Box: []float64{1, 2}}, "workload.lammps.box: want 3 lengths"},
		{LAMMPS{Box: []float64{1, 0, 2}}, "workload.lammps.box[1]: must be > 0"},
		{LAMMPS{Replicas: []int{1, 0, 1}}, "workload.lammps.replicas[1]: must be in [1, 1024]"},
		{LAMMPS{Grid: []int{1, 2, 3, 4}}, "workload.lammps.grid: want 3 counts"},
		{LAMMPS{Differentiation: "fd"}, `workload.lammps.differentiation: want ik or ad, got "fd"`},
		{LAMMPS{Order: 9}, "workload.lammps.order: must be in 2..7"},
		{LAMMPS{Skin: math.NaN()}, "workload.lammps.skin: must be a finite number ≥ 0"},
		{LAMMPS{KSpaceAllreduces: []Bytes{8, -1}}, "workload.lammps.kspace_allreduces[1]: must be ≥ 0"},
		{LAMMPS{IntegrateFraction: 0.5, KSpaceFraction: 0.5}, "workload.lammps.kspace_fraction: integrate_fraction + kspace_fraction must be < 1"},
		{LAMMPS{ThermoEvery: -2}, "workload.lammps.thermo_every: must be ≥ 0"},
	} {
		err := tc.p.Validate("workload.lammps")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: got %v, want %q", tc.p, err, tc.want)
		}
	}
	d := DefaultLAMMPS()
	if err := d.Validate("workload.lammps"); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (&LAMMPS{}).Validate("workload.lammps"); err != nil {
		t.Errorf("empty section: %v", err)
	}
}

// TestLAMMPSDefaultRun: without steps or duration the model runs
// in.rhodo's 100 steps, and the default duration gives the same.
func TestLAMMPSDefaultRun(t *testing.T) {
	st, dur := Defaults(KindLAMMPS)
	for _, s := range []Spec{{Kind: KindLAMMPS, Ranks: 8}, {Kind: KindLAMMPS, Ranks: 8, Duration: dur}} {
		src, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		l := src.(*source).s.(*lammps)
		// setup = 0.45/0.55 × 100 × 12.2 ms = 0.99818 s.
		if l.nsteps != RhodoSteps || l.step != ps(st) || math.Abs(float64(l.setup)-0.45/0.55*100*12.2e9) > 1 {
			t.Errorf("%+v: %d steps of %d ps, setup %d ps", s, l.nsteps, l.step, l.setup)
		}
	}
}
