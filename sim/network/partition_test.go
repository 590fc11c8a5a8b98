package network

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/topo"
)

// TestPartitionPorts checks how a parallel run splits the network
// (partitionPorts): a switch's ports and its nodes' NICs in one partition;
// a grouped topology's groups whole, dealt in turn (with groups of equal
// ports, group g in partition g mod parts, so that neighbouring groups
// never share one), the partitions' ports within two groups' of each
// other; other topologies' switches in runs by number.
func TestPartitionPorts(t *testing.T) {
	for _, c := range []struct {
		name string
		tc   topo.Config
	}{
		{"megafly", topo.Config{Kind: topo.KindMegafly, Groups: 9, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 4}},
		{"dragonfly", topo.Config{Kind: topo.KindDragonfly, Routers: 4, NodesPerSwitch: 2, GlobalLinks: 2}},
		{"rlft", topo.Config{Kind: topo.KindRLFT, Radix: 8, Levels: 3}},
		{"torus", topo.Config{Kind: topo.KindTorus3D, Dims: []int{3, 3, 3}}},
	} {
		tp, err := topo.Build(c.tc)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n, err := New(tp, table6(eee.AlwaysOn, 0))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g, grouped := tp.(topo.Grouped)
		for _, parts := range []int{2, 3, 4} {
			part := n.partitionPorts(parts)
			swPart := make([]int, tp.Switches())
			for s := range swPart {
				swPart[s] = -1
			}
			ports := make([]int, parts)
			for i, q := range part {
				if int(q) >= parts {
					t.Fatalf("%s, %d parts: port %d in partition %d", c.name, parts, i, q)
				}
				sw := int(n.ports[i].sw)
				if sw < 0 {
					sw, _ = tp.Attach(i) // a NIC: with its switch
				}
				if swPart[sw] >= 0 && swPart[sw] != int(q) {
					t.Fatalf("%s, %d parts: switch %d in partitions %d and %d", c.name, parts, sw, swPart[sw], q)
				}
				swPart[sw] = int(q)
				ports[q]++
			}
			if !grouped {
				for s := 1; s < len(swPart); s++ {
					if swPart[s] < swPart[s-1] {
						t.Fatalf("%s, %d parts: switch %d in partition %d after %d: not in runs", c.name, parts, s, swPart[s], swPart[s-1])
					}
				}
				continue
			}
			groupPart := make([]int, g.Groups())
			for s, q := range swPart {
				groupPart[g.SwitchGroup(s)] = q
			}
			for s, q := range swPart {
				if groupPart[g.SwitchGroup(s)] != q {
					t.Fatalf("%s, %d parts: group %d split", c.name, parts, g.SwitchGroup(s))
				}
			}
			if c.name == "megafly" || c.name == "dragonfly" {
				for gr, q := range groupPart {
					if q != gr%parts {
						t.Fatalf("%s, %d parts: group %d in partition %d, want %d (dealt in turn)", c.name, parts, gr, q, gr%parts)
					}
				}
			}
			most, least := ports[0], ports[0]
			for _, k := range ports {
				most, least = max(most, k), min(least, k)
			}
			perGroup := len(part) / g.Groups()
			if most-least > 2*perGroup {
				t.Errorf("%s, %d parts: ports per partition %v, more than two groups' apart", c.name, parts, ports)
			}
		}
	}
}

// TestParallelControllersInUse: a parallel run builds the controllers a
// run on one thread builds, no more (a port builds its own as its first
// idle period begins, txEnd), even where most ports never send: the
// partitions' slots in use add up to one thread's, and the outputs are
// one thread's.
func TestParallelControllersInUse(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Radix: 8})
	if err != nil {
		t.Fatal(err)
	}
	run := func(threads int) (*Network, int32) {
		p := deepSleepPBC()
		p.Threads = threads
		n := build(t, tp, p)
		attachConfig(t, n, synthetic("uniform", 9600, 0.02, 2*time.Microsecond), 1)
		if err := n.Run(t.Context(), 0, nil); err != nil {
			t.Fatal(err)
		}
		used := n.nSlots
		for _, c := range n.parts {
			used += c.nSlots
		}
		return n, used
	}
	seq, want := run(1)
	par, got := run(2)
	if len(par.parts) != 2 || par.fellBack {
		t.Fatalf("%d partitions, fell back %v: not a parallel run", len(par.parts), par.fellBack)
	}
	if want == 0 || int(want) > len(seq.ports)/2 {
		t.Fatalf("%d of %d ports have a controller: want some, most idle", want, len(seq.ports))
	}
	if got != want {
		t.Errorf("two threads built %d controllers, one thread %d", got, want)
	}
	a, err := json.Marshal(seq.Result())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(par.Result())
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("results differ:\n%s\nwant\n%s", b, a)
	}
}
