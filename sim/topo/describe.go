package topo

import (
	"fmt"
	"sort"
	"strings"
)

// Grouped is implemented by topologies made of groups (Megafly, dragonfly,
// a fat tree's pods): a natural unit to partition a parallel simulation by.
type Grouped interface {
	Groups() int
	SwitchGroup(s int) int
}

// Ports is the number of switch ports, Σ Radix(s), connected or not.
func Ports(t Topology) int {
	n := 0
	for s := range t.Switches() {
		n += t.Radix(s)
	}
	return n
}

// Table7Links is the link count of paper 000 Table 7 (docs/model.md §3.2): "the
// number of links on every switch multiplied by the radix, plus the number
// of NICs", i.e. Ports(t) + Nodes(). It counts link ends on switches plus
// NICs, not cables: the Megafly-4160 has 1040 × 16 + 4160 = 20800 of them
// but 10400 cables. The paper's link power (20800 × 24 W = 499.2 kW) uses
// it, so sim/power's Table 7 breakdown does too.
func Table7Links(t Topology) int { return Ports(t) + t.Nodes() }

// Description summarises a topology (for `lpictl sim topo --json` and
// docs/topologies.md).
type Description struct {
	Name     string         `json:"name"`
	Nodes    int            `json:"nodes"`
	Switches int            `json:"switches"`
	Roles    map[string]int `json:"switches_by_role"`
	// Ports is Σ radix over the switches, connected or not.
	Ports int `json:"ports"`
	// Cables is the number of physical links, by class below.
	Cables          int `json:"cables"`
	InjectionCables int `json:"injection_cables"`
	LocalCables     int `json:"local_cables"`
	GlobalCables    int `json:"global_cables"`
	// UnconnectedPorts are switch ports without a cable.
	UnconnectedPorts int `json:"unconnected_ports"`
	// Table7Links is paper 000 Table 7's count, ports + nodes (see Table7Links).
	Table7Links int `json:"table7_links"`
	// Diameter is the largest node-to-node hop count (links crossed,
	// injection and ejection included) under the topology's routing.
	Diameter int `json:"diameter"`
	// MeanHops is the mean hop count over all ordered pairs of distinct nodes.
	MeanHops float64 `json:"mean_hops"`
	// HopHistogram[h] is the number of ordered pairs of distinct nodes
	// whose route crosses h links.
	HopHistogram []int64 `json:"hop_histogram"`
}

// Describe computes t's Description. The hop figures follow t's routing
// (Hops), not graph distances. They are computed per pair of node-bearing
// switches, weighted by their node counts, which assumes — as holds for
// every topology of this package — that Distance(s, dst) depends on dst
// only through the switch dst is attached to. Cost: O(A²) Distance calls
// for A node-bearing switches, plus one Links() call.
func Describe(t Topology) Description {
	d := Description{
		Name:        t.Name(),
		Nodes:       t.Nodes(),
		Switches:    t.Switches(),
		Roles:       map[string]int{},
		Ports:       Ports(t),
		Table7Links: Table7Links(t),
	}
	for s := range d.Switches {
		d.Roles[t.SwitchRole(s)]++
	}
	connected := 0
	for _, l := range t.Links() {
		d.Cables++
		switch l.Class {
		case Injection:
			d.InjectionCables++
		case Local:
			d.LocalCables++
		case Global:
			d.GlobalCables++
		}
		for _, e := range [2]End{l.A, l.B} {
			if e.Kind == SwitchEnd {
				connected++
			}
		}
	}
	d.UnconnectedPorts = d.Ports - connected

	// Node-bearing switches, their node counts and a representative node.
	count := make([]int64, d.Switches)
	rep := make([]int, d.Switches)
	var sws []int
	for n := range d.Nodes {
		sw, _ := t.Attach(n)
		if count[sw] == 0 {
			rep[sw] = n
			sws = append(sws, sw)
		}
		count[sw]++
	}
	sort.Ints(sws)
	var hist []int64
	add := func(h int, pairs int64) {
		for len(hist) <= h {
			hist = append(hist, 0)
		}
		hist[h] += pairs
	}
	for _, a := range sws {
		na := count[a]
		for _, b := range sws {
			pairs := na * count[b]
			if a == b {
				pairs = na * (na - 1)
			}
			if pairs == 0 {
				continue
			}
			add(1+t.Distance(a, rep[b]), pairs)
		}
	}
	var sum, total int64
	for h, c := range hist {
		if c > 0 {
			d.Diameter = h
		}
		sum += int64(h) * c
		total += c
	}
	if total > 0 {
		d.MeanHops = float64(sum) / float64(total)
	}
	if hist == nil {
		hist = []int64{}
	}
	d.HopHistogram = hist
	return d
}

// String formats the description as aligned text.
func (d Description) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "topology      %s\n", d.Name)
	fmt.Fprintf(&b, "nodes         %d\n", d.Nodes)
	roles := make([]string, 0, len(d.Roles))
	for r := range d.Roles {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	parts := make([]string, len(roles))
	for i, r := range roles {
		parts[i] = fmt.Sprintf("%d %s", d.Roles[r], r)
	}
	fmt.Fprintf(&b, "switches      %d (%s)\n", d.Switches, strings.Join(parts, ", "))
	fmt.Fprintf(&b, "ports         %d (%d unconnected)\n", d.Ports, d.UnconnectedPorts)
	fmt.Fprintf(&b, "cables        %d (%d injection, %d local, %d global)\n",
		d.Cables, d.InjectionCables, d.LocalCables, d.GlobalCables)
	fmt.Fprintf(&b, "table 7 links %d (ports + nodes)\n", d.Table7Links)
	fmt.Fprintf(&b, "diameter      %d hops\n", d.Diameter)
	fmt.Fprintf(&b, "mean hops     %.4f\n", d.MeanHops)
	fmt.Fprintf(&b, "hops          ")
	first := true
	for h, c := range d.HopHistogram {
		if c == 0 {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%d: %d", h, c)
	}
	b.WriteString("\n")
	return b.String()
}
