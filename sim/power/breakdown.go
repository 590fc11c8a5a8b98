package power

import (
	"fmt"
	"strings"

	"github.com/lpictl/lpictl/sim/topo"
)

// SystemBreakdown is the system power of a network with every link awake, laid
// out as paper 000 Table 7 (docs/model.md §3.3): switches, nodes and links, idle
// (nodes at P_min) and at full load (nodes at P_max).
type SystemBreakdown struct {
	Topology string `json:"topology"`
	Preset   string `json:"preset"`
	// Counts: Links is the Table 7 link count, switch ports + NICs
	// (topo.Table7Links), not the number of cables.
	Switches int `json:"switches"`
	Nodes    int `json:"nodes"`
	Links    int `json:"links"`
	// Unit powers in watts: a switch without its ports, a node idle and
	// fully loaded, a link awake (wake_power_w).
	SwitchW  float64 `json:"switch_w"`
	NodeMinW float64 `json:"node_min_w"`
	NodeMaxW float64 `json:"node_max_w"`
	LinkW    float64 `json:"link_w"`
	Idle     AtLoad  `json:"idle"`
	Full     AtLoad  `json:"full"`
}

// AtLoad is the power of each component class at one node load.
type AtLoad struct {
	Switches Share `json:"switches"`
	Nodes    Share `json:"nodes"`
	Links    Share `json:"links"`
	// Network is switches + links (paper 000 §4.2).
	Network Share   `json:"network"`
	TotalW  float64 `json:"total_w"`
}

// Share is a power in watts and its percentage of the load's total.
type Share struct {
	W   float64 `json:"w"`
	Pct float64 `json:"pct"`
}

// Breakdown computes the Table 7 breakdown of t with preset p's figures.
// Links count topo.Table7Links(t) ends at wake_power_w each: for the
// Megafly-4160 the paper's 499.2 kW is 20800 × 24 W.
func Breakdown(t topo.Topology, p *Preset) SystemBreakdown {
	b := SystemBreakdown{
		Topology: t.Name(),
		Preset:   p.Name,
		Switches: t.Switches(),
		Nodes:    t.Nodes(),
		Links:    topo.Table7Links(t),
		SwitchW:  p.System.SwitchW,
		NodeMinW: p.System.NodeMinW,
		NodeMaxW: p.System.NodeMaxW,
		LinkW:    p.WakePowerW,
	}
	sw := float64(b.Switches) * b.SwitchW
	links := float64(b.Links) * b.LinkW
	b.Idle = newLoad(sw, float64(b.Nodes)*b.NodeMinW, links)
	b.Full = newLoad(sw, float64(b.Nodes)*b.NodeMaxW, links)
	return b
}

func newLoad(sw, nodes, links float64) AtLoad {
	total := sw + nodes + links
	share := func(w float64) Share {
		s := Share{W: w}
		if total > 0 {
			s.Pct = 100 * w / total
		}
		return s
	}
	return AtLoad{
		Switches: share(sw),
		Nodes:    share(nodes),
		Links:    share(links),
		Network:  share(sw + links),
		TotalW:   total,
	}
}

// String formats the breakdown as Table 7 does.
func (b SystemBreakdown) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, preset %s\n", b.Topology, b.Preset)
	fmt.Fprintf(&sb, "%-8s %-16s %7s %22s %22s\n", "element", "power/unit", "count", "idle", "full load")
	row := func(name, unit string, n int, idle, full Share) {
		fmt.Fprintf(&sb, "%-8s %-16s %7d %12s (%6.2f %%) %12s (%6.2f %%)\n",
			name, unit, n, FormatWatts(idle.W), idle.Pct, FormatWatts(full.W), full.Pct)
	}
	row("switch", fmt.Sprintf("%g W", b.SwitchW), b.Switches, b.Idle.Switches, b.Full.Switches)
	row("node", fmt.Sprintf("%g W - %g W", b.NodeMinW, b.NodeMaxW), b.Nodes, b.Idle.Nodes, b.Full.Nodes)
	row("link", fmt.Sprintf("%g W", b.LinkW), b.Links, b.Idle.Links, b.Full.Links)
	fmt.Fprintf(&sb, "%-8s %-16s %7s %12s (%6.2f %%) %12s (%6.2f %%)\n", "network", "switch + link", "",
		FormatWatts(b.Idle.Network.W), b.Idle.Network.Pct, FormatWatts(b.Full.Network.W), b.Full.Network.Pct)
	fmt.Fprintf(&sb, "%-8s %-16s %7s %12s %10s %12s\n", "total", "", "", FormatWatts(b.Idle.TotalW), "", FormatWatts(b.Full.TotalW))
	return sb.String()
}

// FormatWatts prints a power with an SI prefix and four significant
// digits: 499.2 kW, 4.087 MW, 24 W.
func FormatWatts(w float64) string {
	units := []string{"W", "kW", "MW", "GW"}
	i := 0
	for i < len(units)-1 && (w >= 1000 || w <= -1000) {
		w /= 1000
		i++
	}
	return fmt.Sprintf("%.4g %s", w, units[i])
}
