package topo

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestDescribeTiny checks Describe against figures worked out by hand.
func TestDescribeTiny(t *testing.T) {
	cases := []struct {
		name string
		c    Config
		want Description
	}{
		{
			// 5 groups × (2 leaves + 2 spines), 2 nodes per leaf, 2 globals per
			// spine: 20 nodes, 20 switches of radix 4. Ordered pairs: same leaf
			// 10 leaves × 2 = 20 at 2 hops; same group, other leaf 5 × (4·3 − 4)
			// = 40 at 4; other group 20 × 16 = 320 at 5. Mean 1800/380.
			"megafly", Config{Kind: KindMegafly, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2},
			Description{
				Name: "megafly-20", Nodes: 20, Switches: 20, Roles: map[string]int{"leaf": 10, "spine": 10},
				Ports: 80, Cables: 50, InjectionCables: 20, LocalCables: 20, GlobalCables: 10,
				Table7Links: 100, Diameter: 5, MeanHops: 1800.0 / 380, HopHistogram: []int64{0, 0, 20, 0, 40, 320},
			},
		},
		{
			// A ring of 3 switches, one node each, radix 24 (21 ports idle):
			// every pair is 3 hops (NIC, ring, NIC).
			"torus ring", Config{Kind: KindTorus3D, Dims: []int{3, 1, 1}, NodesPerSwitch: 1},
			Description{
				Name: "torus3d-3", Nodes: 3, Switches: 3, Roles: map[string]int{"router": 3},
				Ports: 72, Cables: 6, InjectionCables: 3, LocalCables: 3, UnconnectedPorts: 63,
				Table7Links: 75, Diameter: 3, MeanHops: 3, HopHistogram: []int64{0, 0, 0, 6},
			},
		},
		{
			// The 2-ary 2-tree: 4 nodes, 2 leaves, 2 tops using 2 of 4 ports.
			// Pairs: same leaf 2 × 2 = 4 at 2 hops; other leaf 4 × 2 = 8 at 4.
			"fattree", Config{Kind: KindFatTree, Radix: 4, Levels: 2},
			Description{
				Name: "fattree-4", Nodes: 4, Switches: 4, Roles: map[string]int{"leaf": 2, "top": 2},
				Ports: 16, Cables: 8, InjectionCables: 4, LocalCables: 4, UnconnectedPorts: 4,
				Table7Links: 20, Diameter: 4, MeanHops: 40.0 / 12, HopHistogram: []int64{0, 0, 4, 0, 8},
			},
		},
		{
			// HyperX 3×4, 2 nodes per switch, radix 2 + 2 + 3 = 7. Pairs: same
			// switch 12 × 2 = 24 at 2 hops; a switch differing in one
			// coordinate (5 per switch) 12 × 5 × 4 = 240 at 3; in both
			// (2 × 3 per switch) 12 × 6 × 4 = 288 at 4. Mean 1920/552.
			"hyperx", Config{Kind: KindHyperX, Dims: []int{3, 4}, NodesPerSwitch: 2},
			Description{
				Name: "hyperx-24", Nodes: 24, Switches: 12, Roles: map[string]int{"router": 12},
				Ports: 84, Cables: 54, InjectionCables: 24, LocalCables: 30,
				Table7Links: 108, Diameter: 4, MeanHops: 1920.0 / 552, HopHistogram: []int64{0, 0, 24, 240, 288},
			},
		},
		{
			// A single switch with one node: no pairs.
			"one node", Config{Kind: KindFBFly, Dims: []int{1}, NodesPerSwitch: 1},
			Description{
				Name: "fbfly-1", Nodes: 1, Switches: 1, Roles: map[string]int{"router": 1},
				Ports: 1, Cables: 1, InjectionCables: 1, Table7Links: 2, HopHistogram: []int64{},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Describe(mustBuild(t, tc.c))
			if math.Abs(got.MeanHops-tc.want.MeanHops) > 1e-12 {
				t.Errorf("mean hops %v, want %v", got.MeanHops, tc.want.MeanHops)
			}
			got.MeanHops = tc.want.MeanHops
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestDescribeMatchesBruteForce compares Describe's per-switch shortcut
// with Hops over every ordered node pair.
func TestDescribeMatchesBruteForce(t *testing.T) {
	for _, c := range small() {
		tp := mustBuild(t, c)
		d := Describe(tp)
		var hist []int64
		for src := range tp.Nodes() {
			for dst := range tp.Nodes() {
				if src == dst {
					continue
				}
				h := Hops(tp, src, dst)
				for len(hist) <= h {
					hist = append(hist, 0)
				}
				hist[h]++
			}
		}
		if hist == nil {
			hist = []int64{}
		}
		if !reflect.DeepEqual(hist, d.HopHistogram) {
			t.Errorf("%s: histogram %v, brute force %v", tp.Name(), d.HopHistogram, hist)
		}
	}
}

func TestDescribeJSON(t *testing.T) {
	d := Describe(mustBuild(t, Config{Kind: KindFatTree, Radix: 4, Levels: 2}))
	j, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"name":"fattree-4"`, `"switches_by_role":{"leaf":2,"top":2}`, `"table7_links":20`,
		`"mean_hops":3.33`, `"hop_histogram":[0,0,4,0,8]`, `"unconnected_ports":4`} {
		if !strings.Contains(string(j), key) {
			t.Errorf("JSON lacks %s: %s", key, j)
		}
	}
	if s := d.String(); !strings.Contains(s, "hops          2: 4, 4: 8\n") || !strings.Contains(s, "(2 leaf, 2 top)") {
		t.Errorf("String:\n%s", s)
	}
}
