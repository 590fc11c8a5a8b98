package power

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/topo"
)

// TestBreakdownTable7 reproduces paper 000 Table 7 (docs/model.md §3.3) with the
// default preset: counts, powers and shares, idle and at full load. The
// paper prints powers to four significant digits and shares to 0.01 %.
func TestBreakdownTable7(t *testing.T) {
	type row struct{ idleW, idlePct, fullW, fullPct float64 }
	cases := []struct {
		name                   string
		cfg                    topo.Config
		switches, nodes, links int
		sw, node, link         row
		idleTotalW, fullTotalW float64
		idleNetPct, fullNetPct float64
	}{
		{
			"megafly", topo.Default(), 1040, 4160, 20800,
			row{260e3, 6.36, 260e3, 4.52},
			row{3.328e6, 81.42, 4.992e6, 86.80},
			row{499.2e3, 12.21, 499.2e3, 8.68},
			4.087e6, 5.751e6,
			// 759.2/4087.2 = 18.575 %: Table 8 prints 18.58 %, the §4.2 text
			// "18.57 % … idling, and up to 13.2 % under full load".
			18.58, 13.20,
		},
		{
			"torus", topo.Config{Kind: topo.KindTorus3D}, 1000, 4000, 28000,
			row{250e3, 6.07, 250e3, 4.37},
			row{3.2e6, 77.63, 4.800e6, 83.89},
			row{672e3, 16.3, 672e3, 11.74},
			4.122e6, 5.722e6,
			22.37, 16.11, // not printed by the paper: 922/4122, 922/5722
		},
		{
			"rlft", topo.Config{Kind: topo.KindRLFT}, 845, 4394, 26364,
			row{211.250e3, 4.85, 211.250e3, 3.45},
			row{3.515e6, 80.64, 5.273e6, 86.20},
			row{632.736e3, 14.52, 632.736e3, 10.34},
			4.359e6, 6.117e6,
			19.36, 13.80,
		},
	}
	p, err := Load("eee-400g")
	if err != nil {
		t.Fatal(err)
	}
	// close4 compares to the paper's four significant digits.
	close4 := func(got, want float64) bool { return math.Abs(got-want) <= 0.0005*math.Abs(want)+1e-9 }
	pct := func(got, want float64) bool { return math.Abs(got-want) <= 0.005+1e-9 }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := topo.Build(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			b := Breakdown(tp, p)
			if b.Switches != tc.switches || b.Nodes != tc.nodes || b.Links != tc.links {
				t.Fatalf("counts %d/%d/%d, want %d/%d/%d", b.Switches, b.Nodes, b.Links, tc.switches, tc.nodes, tc.links)
			}
			if b.SwitchW != 250 || b.NodeMinW != 800 || b.NodeMaxW != 1200 || b.LinkW != 24 {
				t.Fatalf("unit powers %v %v %v %v", b.SwitchW, b.NodeMinW, b.NodeMaxW, b.LinkW)
			}
			check := func(what string, got Share, wantW, wantPct float64) {
				if !close4(got.W, wantW) || !pct(got.Pct, wantPct) {
					t.Errorf("%s: %s (%.3f %%), want %s (%.2f %%)", what, FormatWatts(got.W), got.Pct, FormatWatts(wantW), wantPct)
				}
			}
			check("idle switches", b.Idle.Switches, tc.sw.idleW, tc.sw.idlePct)
			check("idle nodes", b.Idle.Nodes, tc.node.idleW, tc.node.idlePct)
			check("idle links", b.Idle.Links, tc.link.idleW, tc.link.idlePct)
			check("full switches", b.Full.Switches, tc.sw.fullW, tc.sw.fullPct)
			check("full nodes", b.Full.Nodes, tc.node.fullW, tc.node.fullPct)
			check("full links", b.Full.Links, tc.link.fullW, tc.link.fullPct)
			check("idle network", b.Idle.Network, tc.sw.idleW+tc.link.idleW, tc.idleNetPct)
			check("full network", b.Full.Network, tc.sw.fullW+tc.link.fullW, tc.fullNetPct)
			if !close4(b.Idle.TotalW, tc.idleTotalW) || !close4(b.Full.TotalW, tc.fullTotalW) {
				t.Errorf("totals %s / %s, want %s / %s", FormatWatts(b.Idle.TotalW), FormatWatts(b.Full.TotalW),
					FormatWatts(tc.idleTotalW), FormatWatts(tc.fullTotalW))
			}
			for _, l := range []AtLoad{b.Idle, b.Full} {
				if s := l.Switches.Pct + l.Nodes.Pct + l.Links.Pct; math.Abs(s-100) > 1e-9 {
					t.Errorf("shares add up to %v %%", s)
				}
			}
			t.Logf("\n%s", b)
		})
	}
}

// TestBreakdownExact pins the Megafly figures exactly (docs/model.md §3.3: 499.2 kW
// = 20800 × 24 W).
func TestBreakdownExact(t *testing.T) {
	p, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	tp, _ := topo.Build(topo.Default())
	b := Breakdown(tp, p)
	if b.Idle.Links.W != 499200 || b.Idle.Switches.W != 260000 || b.Idle.Nodes.W != 3328000 ||
		b.Full.Nodes.W != 4992000 || b.Idle.TotalW != 4087200 || b.Full.TotalW != 5751200 {
		t.Fatalf("%+v", b)
	}
	j, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"topology":"megafly-4160"`, `"preset":"eee-400g"`, `"links":20800`, `"total_w":4087200`} {
		if !strings.Contains(string(j), key) {
			t.Errorf("JSON lacks %s: %s", key, j)
		}
	}
	s := b.String()
	for _, want := range []string{"499.2 kW", "4.087 MW", "5.751 MW", "( 12.21 %)", "(  8.68 %)", "20800"} {
		if !strings.Contains(s, want) {
			t.Errorf("String lacks %q:\n%s", want, s)
		}
	}
}

func TestFormatWatts(t *testing.T) {
	for _, tc := range []struct {
		w    float64
		want string
	}{{24, "24 W"}, {9.6, "9.6 W"}, {499200, "499.2 kW"}, {4087200, "4.087 MW"}, {211250, "211.2 kW"}, {0, "0 W"}, {2.5e9, "2.5 GW"}} {
		if got := FormatWatts(tc.w); got != tc.want {
			t.Errorf("FormatWatts(%v) = %q, want %q", tc.w, got, tc.want)
		}
	}
}
