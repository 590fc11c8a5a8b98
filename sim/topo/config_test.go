package topo

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		c    Config
		want string // error substring; "" = valid
	}{
		{"default", Default(), ""},
		{"zero is megafly-4160", Config{}, ""},
		{"kind case", Config{Kind: " Torus3D "}, ""},
		{"unknown kind", Config{Kind: "hypercube"}, `topology.kind: unknown kind "hypercube"`},
		{"negative", Config{Kind: KindMegafly, Leaves: -1}, "topology.leaves: must be positive"},
		{"negative radix", Config{Kind: KindFatTree, Radix: -4}, "topology.radix: must be positive"},
		{"unused field", Config{Kind: KindTorus3D, Spines: 4}, "topology.spines: not used by kind torus3d"},
		{"unused dims", Config{Kind: KindMegafly, Dims: []int{2}}, "topology.dims: not used by kind megafly"},
		{"unused levels", Config{Kind: KindDragonfly, Levels: 2}, "topology.levels: not used by kind dragonfly"},
		{"megafly radix 1", Config{Kind: KindMegafly, Radix: 1}, "topology.radix: 1 is too small for a megafly"},
		{"megafly radix too small for leaf", Config{Kind: KindMegafly, Radix: 4, Leaves: 2, Spines: 2, NodesPerSwitch: 3, GlobalLinks: 2},
			"topology.radix: 4 is too small for a megafly leaf with 3 nodes and 2 spines (needs 5 ports)"},
		{"megafly radix too small for spine", Config{Kind: KindMegafly, Radix: 16, Leaves: 9},
			"topology.radix: 16 is too small for a megafly spine with 9 leaves and 8 global links"},
		{"megafly too many groups", Config{Kind: KindMegafly, Groups: 66}, "topology.groups: 66 is more than spines × global_links + 1 = 65"},
		{"megafly fewer groups", Config{Kind: KindMegafly, Groups: 10}, ""},
		{"megafly too big", Config{Kind: KindMegafly, Radix: 200}, "more than the limit"},
		{"radix limit", Config{Kind: KindMegafly, Radix: MaxRadix + 2}, "topology.radix: 4098 exceeds the limit"},
		{"fattree odd", Config{Kind: KindFatTree, Radix: 15}, "topology.radix: 15 must be even"},
		{"fattree radix 2", Config{Kind: KindFatTree, Radix: 2}, "topology.radix: 2 is too small for a fattree"},
		{"rlft levels", Config{Kind: KindRLFT, Levels: 9}, "topology.levels: 9 exceeds the limit"},
		{"rlft too big", Config{Kind: KindRLFT, Radix: 64, Levels: 5}, "more than"},
		{"torus 2 dims", Config{Kind: KindTorus3D, Dims: []int{4, 4}}, "topology.dims: a torus3d needs 3 sides, got 2"},
		{"torus zero side", Config{Kind: KindTorus3D, Dims: []int{4, 0, 4}}, "topology.dims[1]: must be ≥ 1, got 0"},
		{"torus radix", Config{Kind: KindTorus3D, Radix: 9}, "topology.radix: 9 is too small for a torus3d switch with 4 nodes"},
		{"torus big nodes", Config{Kind: KindTorus3D, NodesPerSwitch: 30}, ""},
		{"fbfly radix", Config{Kind: KindFBFly, Radix: 21}, "topology.radix: 21 is too small for a fbfly switch with 8 nodes and every other router of each dimension (needs 22 ports)"},
		{"fbfly 1D", Config{Kind: KindFBFly, Dims: []int{32}, NodesPerSwitch: 32}, ""},
		{"fbfly negative side", Config{Kind: KindFBFly, Dims: []int{-1, 2}}, "topology.dims[0]: must be ≥ 1"},
		{"fbfly many dims", Config{Kind: KindFBFly, Dims: make([]int, 9)}, "topology.dims: 9 dimensions exceed"},
		{"hyperx radix", Config{Kind: KindHyperX, Dims: []int{3, 4}, NodesPerSwitch: 2, Radix: 6}, "topology.radix: 6 is too small for a hyperx switch with 2 nodes and every other router of each dimension (needs 7 ports)"},
		{"hyperx zero side", Config{Kind: KindHyperX, Dims: []int{3, 0}}, "topology.dims[1]: must be ≥ 1"},
		{"hyperx groups", Config{Kind: KindHyperX, Groups: 3}, "topology.groups: not used by kind hyperx"},
		{"dragonfly radix 2", Config{Kind: KindDragonfly, Radix: 2}, "topology.radix: 2 is too small for a balanced dragonfly"},
		{"dragonfly radix small", Config{Kind: KindDragonfly, Radix: 14, Routers: 10}, "topology.radix: 14 is too small for a dragonfly router with 3 nodes, 9 local and 3 global links (needs 15 ports)"},
		{"dragonfly groups", Config{Kind: KindDragonfly, Groups: 34}, "topology.groups: 34 is more than routers × global_links + 1 = 33"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			_, berr := Build(tc.c)
			if (err == nil) != (berr == nil) {
				t.Fatalf("Validate %v but Build %v", err, berr)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("no error, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q, want %q", err, tc.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "topology") {
				t.Fatalf("error %q does not name the topology field", err)
			}
		})
	}
}

// TestDefaultsNormalized checks the zero-means-default rules.
func TestDefaultsNormalized(t *testing.T) {
	cases := []struct {
		c    Config
		want Config
	}{
		{Config{}, Default()},
		{Config{Kind: KindMegafly, Radix: 36}, Config{Kind: KindMegafly, Groups: 325, Leaves: 18, Spines: 18, NodesPerSwitch: 18, GlobalLinks: 18, Radix: 36}},
		{Config{Kind: KindRLFT}, Config{Kind: KindRLFT, Radix: 26, Levels: 3}},
		{Config{Kind: KindFatTree}, Config{Kind: KindFatTree, Radix: 16, Levels: 3}},
		{Config{Kind: KindTorus3D}, Config{Kind: KindTorus3D, Dims: []int{10, 10, 10}, NodesPerSwitch: 4, Radix: 24}},
		{Config{Kind: KindTorus3D, NodesPerSwitch: 20}, Config{Kind: KindTorus3D, Dims: []int{10, 10, 10}, NodesPerSwitch: 20, Radix: 26}},
		{Config{Kind: KindDragonfly}, Config{Kind: KindDragonfly, Groups: 33, Routers: 8, NodesPerSwitch: 4, GlobalLinks: 4}},
		{Config{Kind: KindDragonfly, Radix: 31}, Config{Kind: KindDragonfly, Groups: 129, Routers: 16, NodesPerSwitch: 8, GlobalLinks: 8, Radix: 31}},
		{Config{Kind: KindFBFly}, Config{Kind: KindFBFly, Dims: []int{8, 8}, NodesPerSwitch: 8, Radix: 22}},
		{Config{Kind: KindHyperX}, Config{Kind: KindHyperX, Dims: []int{4, 4, 4}, NodesPerSwitch: 4, Radix: 13}},
		{Config{Kind: "HyperX", Dims: []int{2, 8}}, Config{Kind: KindHyperX, Dims: []int{2, 8}, NodesPerSwitch: 4, Radix: 12}},
	}
	for _, tc := range cases {
		got, err := tc.c.Normalized()
		if err != nil {
			t.Fatalf("%+v: %v", tc.c, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Normalized(%+v) = %+v, want %+v", tc.c, got, tc.want)
		}
		// Normalizing is idempotent and builds the same network.
		again, err := got.Normalized()
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Normalized is not idempotent: %+v → %+v (%v)", got, again, err)
		}
		a, b := mustBuild(t, tc.c), mustBuild(t, got)
		if a.Name() != b.Name() || Table7Links(a) != Table7Links(b) {
			t.Errorf("%+v and its normalized form build different networks", tc.c)
		}
	}
}

func TestConfigYAML(t *testing.T) {
	src := "kind: torus3d\ndims: [4, 5, 6]\nnodes_per_switch: 2\n"
	var c Config
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	if want := (Config{Kind: KindTorus3D, Dims: []int{4, 5, 6}, NodesPerSwitch: 2}); !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v", c)
	}
	out, err := yaml.Marshal(Default())
	if err != nil {
		t.Fatal(err)
	}
	if want := "kind: megafly\ngroups: 65\nleaves: 8\nspines: 8\nnodes_per_switch: 8\nglobal_links: 8\n"; string(out) != want {
		t.Fatalf("Default() marshals as\n%s", out)
	}
	j, _ := json.Marshal(Config{Kind: KindRLFT, Radix: 26})
	if string(j) != `{"kind":"rlft","radix":26}` {
		t.Fatalf("json %s", j)
	}
}
