package main

import (
	"strings"
	"testing"
)

// TestSimRunRoutingRefusals: the issue 25 reproducers on
// configs/sim/quick.yaml through the CLI: a trunked torus without a
// dateline under POWAR (defect 5) and an explicit zero load (defect 7) are
// bad input (exit 2, one line naming the key); PAL's baseline routing ugal
// on a HyperX runs, and so do the configurations the traffic classes made
// deadlock-free: a dateline torus of one cable per neighbour (Table 7's
// wiring) and the dragonfly.
func TestSimRunRoutingRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		code int
		want string
		json string // in stdout when it runs
	}{
		{"torus-powar-no-dateline", []string{"topology={kind: torus3d, dims: [4,4,4], trunk: 4}", "routing.kind=powar", "workload.synthetic.load=0.3"}, 2,
			"lpictl: ../../configs/sim/quick.yaml: topology.dateline: a torus3d whose rings have 4 or more switches (topology.dims [4 4 4]) can deadlock without a dateline", ""},
		{"zero-load", []string{"workload.synthetic.load=0"}, 2,
			"lpictl: ../../configs/sim/quick.yaml: workload.synthetic.load: 0 is not a value of this key (leave the key out for its default)\n", ""},
		{"ugal-hyperx", []string{"topology={kind: hyperx, dims: [2, 2]}", "routing.kind=ugal", "workload.duration=5us"}, 0, "", `"ugal"`},
		{"torus-dateline-one-cable", []string{"topology={kind: torus3d, dims: [4,4,4], dateline: true}", "workload.duration=5us"}, 0, "", `"topology": "torus3d-256"`},
		{"dragonfly", []string{"topology={kind: dragonfly, routers: 4, global_links: 2}", "workload.duration=5us"}, 0, "", `"topology": "dragonfly-`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"sim", "run", "-c", "../../configs/sim/quick.yaml", "--json", "--deterministic"}
			for _, s := range tc.sets {
				args = append(args, "--set", s)
			}
			code, out, errs := lpictl(t, args...)
			if code != tc.code || !strings.HasPrefix(errs, tc.want) || strings.Count(errs, "\n") > 1 {
				t.Fatalf("exit %d, stderr %q\nwant exit %d, %q", code, errs, tc.code, tc.want)
			}
			if tc.code == 0 && !strings.Contains(out, tc.json) {
				t.Errorf("no %s in %s", tc.json, out)
			}
		})
	}
}
