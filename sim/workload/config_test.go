package workload

import (
	"strings"
	"testing"

	"github.com/lpictl/lpictl/configs"
)

type scenario struct {
	Workload Config `yaml:"workload"`
}

func TestConfigErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"workload: {kind: lammps, ranks: -1}", "workload.ranks: must be ≥ 0"},
		{"workload: {kind: nope}", `workload.kind: unknown kind "nope"`},
		{"workload: {ranks: 4}", "workload.kind: missing"},
		{"workload: {kind: vef}", "workload.file: kind vef needs a trace file"},
		{"workload: {kind: lammps, steps: 3, duration: 1s}", "workload.duration: set steps or duration, not both"},
		{"workload: {kind: lammps, mapping: spiral}", `workload.mapping: unknown mapping "spiral"`},
		{"workload: {kind: lammps, mapping: file}", "workload.mapping_file: mapping file needs a file"},
		{"workload: {kind: lammps, imbalance: 1.5}", "workload.imbalance: must be in [0, 1)"},
		{"workload: {kind: lammps, patmos: {tally_bytes: 8}}", "workload.patmos: section set, but kind is lammps"},
		{"workload: {kind: lammps, lammps: {setup_fraction: 1}}", "workload.lammps.setup_fraction: must be in [0, 1)"},
		{"workload: {kind: stencil, stencil: {dims: 4}}", "workload.stencil.dims: want 2 or 3"},
		{"workload: {kind: synthetic, synthetic: {pattern: zigzag}}", `workload.synthetic.pattern: unknown pattern "zigzag"`},
		{"workload: {kind: synthetic, ranks: 6, synthetic: {pattern: bitreverse}}", "workload.synthetic.pattern: bitreverse needs a power-of-two"},
		{"workload: {kind: lammps, collectives: {allreduce_large: tree}}", `workload.collectives.allreduce_large: unknown algorithm "tree"`},
		{"workload: {kind: lammps, repeat: 2}", "workload.repeat: only for jobs"},
		{"workload: {jobs: [{kind: lammps, ranks: 4, mapping: random}]}", "workload.jobs[0]: mapping, mapping_file, ranks_per_node, intra_latency, intra_bandwidth, seed, window, blocking_sends and collectives apply to the whole workload"},
		{"workload: {jobs: [{kind: lammps, ranks: 4}, {kind: bad}]}", `workload.jobs[1].kind: unknown kind "bad"`},
		{"workload: {kind: ti, file: t.txt, blocking_sends: true}", "workload.blocking_sends: not for kind ti"},
		{"workload: {blocking_sends: true, jobs: [{kind: lammps, ranks: 4}, {kind: goal, file: g.goal}]}", "workload.blocking_sends: not with a goal job (jobs[1]"},
		{"workload: {jobs: [{kind: lammps, ranks: 4, blocking_sends: true}]}", "workload.jobs[0]: mapping, mapping_file, ranks_per_node, intra_latency, intra_bandwidth, seed, window, blocking_sends and collectives"},
		{"workload: {kind: lammps, jobs: [{kind: lammps}]}", `workload.kind: "lammps" with jobs`},
	}
	for _, tc := range tests {
		var s scenario
		if err := configs.Decode([]byte(tc.yaml), "s.yaml", &s, nil); err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		err := s.Workload.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.yaml, err, tc.want)
		}
	}
	var s scenario
	err := configs.Decode([]byte("workload: {kind: lammps, lammps: {halo: 3}}"), "s.yaml", &s, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown key "workload.lammps.halo"`) {
		t.Errorf("strict decoding: %v", err)
	}
	err = configs.Decode([]byte("workload: {kind: lammps}"), "s.yaml", &s, []string{"workload.lammps.halo_bytes=64KiB", "workload.ranks=8"})
	if err != nil || s.Workload.LAMMPS.HaloBytes != 64<<10 || s.Workload.Ranks != 8 {
		t.Errorf("--set: %v %+v", err, s.Workload)
	}
}

func TestBuildErrors(t *testing.T) {
	for cfg, want := range map[*Config]string{
		{Kind: "lammps", Ranks: 100}:                            "workload.ranks: 100 ranks do not fit on 64 nodes",
		{Kind: "vef", File: "/nonexistent.vef"}:                 "workload.file: open /nonexistent.vef",
		{Jobs: []Config{{Kind: "lammps"}}}:                      "workload.jobs[0].ranks: each job needs its number of ranks",
		{Kind: "lammps", Mapping: "file", MappingFile: "/nope"}: "workload.mapping_file: open /nope",
	} {
		if _, err := Build(*cfg, 64, 1); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%+v: %v, want %s", *cfg, err, want)
		}
	}
}

func FuzzConfig(f *testing.F) {
	f.Add("workload: {kind: lammps, ranks: 8, steps: 2}")
	f.Add("workload: {jobs: [{kind: stencil, ranks: 4, steps: 1}, {kind: synthetic, ranks: 4, duration: 1us}]}")
	f.Add("workload: {kind: synthetic, ranks: 8, duration: 2us, synthetic: {pattern: bitreverse, arrivals: onoff}}")
	f.Fuzz(func(t *testing.T, text string) {
		var s scenario
		if err := configs.Decode([]byte(text), "f.yaml", &s, nil); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if err := s.Workload.Validate(); err != nil {
			if !strings.HasPrefix(err.Error(), "workload") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error does not name the field: %q", err)
			}
			return
		}
		// Build small valid workloads (no files) and replay them.
		c := s.Workload
		small := c.File == "" && c.MappingFile == "" && c.Ranks <= 16 && c.Steps <= 4 && c.Duration <= 5000 && len(c.Jobs) == 0 &&
			c.StepTime <= 1000000 && c.Kind != "vef"
		if !small {
			return
		}
		w, err := Build(c, 16, 1)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "workload") {
				t.Fatalf("build error %q", err)
			}
			return
		}
		_ = w
	})
}
