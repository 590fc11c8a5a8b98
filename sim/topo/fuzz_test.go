package topo

import (
	"math/rand/v2"
	"testing"
)

// FuzzBuild feeds random small configs to Validate and Build: either an
// error naming a topology field, or a network whose wiring is consistent
// and whose routes all terminate at the destination with length Distance.
func FuzzBuild(f *testing.F) {
	f.Add(uint8(0), int8(0), int8(2), int8(2), int8(2), int8(2), int8(0), int8(0), int8(0), int8(0), int8(0))
	f.Add(uint8(1), int8(0), int8(0), int8(0), int8(0), int8(0), int8(6), int8(3), int8(0), int8(0), int8(0))
	f.Add(uint8(2), int8(0), int8(0), int8(0), int8(0), int8(0), int8(8), int8(2), int8(0), int8(0), int8(0))
	f.Add(uint8(3), int8(0), int8(0), int8(0), int8(1), int8(0), int8(0), int8(0), int8(3), int8(2), int8(4))
	f.Add(uint8(4), int8(5), int8(3), int8(0), int8(2), int8(2), int8(0), int8(0), int8(0), int8(0), int8(0))
	f.Add(uint8(5), int8(0), int8(0), int8(0), int8(2), int8(0), int8(0), int8(0), int8(4), int8(3), int8(0))
	f.Add(uint8(0), int8(-1), int8(0), int8(0), int8(0), int8(0), int8(1), int8(0), int8(0), int8(0), int8(0))
	f.Fuzz(func(t *testing.T, kind uint8, groups, leaves, spines, nodes, globals, radix, levels, d0, d1, d2 int8) {
		kinds := Kinds()
		c := Config{
			Kind:           kinds[int(kind)%len(kinds)],
			Groups:         int(groups) % 12,
			NodesPerSwitch: int(nodes) % 5,
			GlobalLinks:    int(globals) % 5,
			Radix:          int(radix) % 14,
			Levels:         int(levels) % 5,
		}
		switch c.Kind {
		case KindMegafly:
			c.Leaves, c.Spines = int(leaves)%5, int(spines)%5
		case KindDragonfly:
			c.Routers = int(leaves) % 6
		}
		if kind >= 128 { // sometimes set a field the kind does not use
			c.Spines, c.Routers = int(spines)%3, int(leaves)%3
		}
		for i, v := range []int8{d0, d1, d2} {
			if v != 0 || i < int(kind)%4 {
				c.Dims = append(c.Dims, int(v)%6)
			}
		}
		tp, err := Build(c)
		if verr := c.Validate(); (err == nil) != (verr == nil) {
			t.Fatalf("%+v: Build %v, Validate %v", c, err, verr)
		}
		if err != nil {
			if msg := err.Error(); len(msg) < 9 || msg[:8] != "topology" {
				t.Fatalf("%+v: error %q does not name a topology field", c, err)
			}
			return
		}
		if tp.Nodes() > 20000 {
			return // valid but too big to walk in a fuzz iteration
		}
		checkWiring(t, tp)
		rng := rand.New(rand.NewPCG(uint64(tp.Nodes()), uint64(tp.Switches())))
		pairs := tp.Switches() * tp.Nodes()
		for i := range min(pairs, 3000) {
			s, dst := i/tp.Nodes(), i%tp.Nodes()
			if pairs > 3000 {
				s, dst = rng.IntN(tp.Switches()), rng.IntN(tp.Nodes())
			}
			if hops, _ := walk(t, tp, s, dst); hops != tp.Distance(s, dst) {
				t.Fatalf("%s: Distance(%d, %d) = %d, walked %d", tp.Name(), s, dst, tp.Distance(s, dst), hops)
			}
		}
	})
}
