package powar

import "testing"

// TestAggregatesAlgorithm3 steps Algorithm 3 by hand on one switch with
// two aggregates of 4 members, capacity 100 bytes per member per cycle,
// Ton 0.5, Toff 0.25. Each row is one checking cycle's bytes on each
// aggregate; the selectable counts are the ones the pseudo-code gives at
// the end of that cycle (utilisation fc / (Num_Sel_Ports · max)):
//
//	cycle  fc0  sel0 → u0            → sel0 | fc1  sel1 → u1         → sel1
//	0      60   1    0.6  > Ton      2      | 10   1    0.1          1 (keeps 1)
//	1      110  2    0.55 > Ton      3      | 50   1    0.5 = Ton    1
//	2      200  3    0.667 > Ton     4      | 51   1    0.51 > Ton   2
//	3      400  4    1.0 (all sel)   4      | 40   2    0.2 < Toff   1
//	4      99   4    0.2475 < Toff   3      | 0    1    0            1
//	5      75   3    0.25 (band)     3      | 0    1    0            1
//	6      0    3    0               2      | 0
//	7      0    2    0               1      |
//	8      0    1    0               1      |
//
// Aggregate 1's counts stop at cycle 5 and aggregate 0's at cycle 5 too:
// cycles 6–8 are idle, applied lazily when cycle 9 reads Sel.
func TestAggregatesAlgorithm3(t *testing.T) {
	th := DefaultThresholds()
	a := NewAggregates(2, 2, 4, 1)
	const sw, capa = 1, 100.0
	rows := []struct {
		fc0, fc1     int64
		sel0, sel1   int // at the start of the cycle
		want0, want1 int // at its end
	}{
		{60, 10, 1, 1, 2, 1},
		{110, 50, 2, 1, 3, 1},
		{200, 51, 3, 1, 4, 2},
		{400, 40, 4, 2, 4, 1},
		{99, 0, 4, 1, 3, 1},
		{75, 0, 3, 1, 3, 1},
	}
	for c, r := range rows {
		now := int64(c)
		if s0, s1 := a.Sel(th, sw, 0, now, capa), a.Sel(th, sw, 1, now, capa); s0 != r.sel0 || s1 != r.sel1 {
			t.Fatalf("cycle %d: sel %d %d at the start, want %d %d", c, s0, s1, r.sel0, r.sel1)
		}
		// The bytes arrive as several packets.
		a.Add(th, sw, 0, now, capa, r.fc0/2)
		a.Add(th, sw, 0, now, capa, r.fc0-r.fc0/2)
		if r.fc1 > 0 {
			a.Add(th, sw, 1, now, capa, r.fc1)
		}
		if s0, s1 := a.Sel(th, sw, 0, now+1, capa), a.Sel(th, sw, 1, now+1, capa); s0 != r.want0 || s1 != r.want1 {
			t.Fatalf("cycle %d: sel %d %d at the end, want %d %d", c, s0, s1, r.want0, r.want1)
		}
	}
	// Cycles 6, 7, 8 idle: aggregate 0 goes 3 → 2 → 1 → 1 (at least one).
	if s := a.Sel(th, sw, 0, 9, capa); s != 1 {
		t.Fatalf("after idle cycles: sel %d, want 1", s)
	}
	// Switch 0 was never touched: one selectable member each.
	if a.Sel(th, 0, 0, 9, capa) != 1 || a.Sel(th, 0, 1, 9, capa) != 1 || a.Width() != 4 {
		t.Fatal("untouched switch: want one selectable member of 4")
	}
}

// TestAggregatesLazy: lazily applied cycles, worked by hand.
//   - Three busy cycles (400 bytes each, capacity 100): 1 → 2 → 3 → 4,
//     then seven idle cycles 3..9 bring it back down to 1 (read at 10).
//   - An aggregate at 4 selectable counted 40 bytes in cycle 10 (u = 40 /
//     400 = 0.1 < Toff: 3) then idle cycle 11 (2), read at cycle 12: 2.
func TestAggregatesLazy(t *testing.T) {
	th := DefaultThresholds()
	a := NewAggregates(1, 1, 4, 1)
	for c := range int64(3) {
		a.Add(th, 0, 0, c, 100, 400)
	}
	if s := a.Sel(th, 0, 0, 3, 100); s != 4 {
		t.Fatalf("sel %d after three busy cycles, want 4", s)
	}
	if s := a.Sel(th, 0, 0, 10, 100); s != 1 {
		t.Fatalf("sel %d after seven idle cycles, want 1", s)
	}
	a.agg[0] = Switch{Cycle: 10, Count: 40, Sel: 4}
	if s := a.Sel(th, 0, 0, 12, 100); s != 2 {
		t.Fatalf("sel %d, want 2", s)
	}
}

// TestSelectAggregated: a switch whose ports 4–7 are the DOR aggregate D
// and 12–15 another minimal aggregate (both in P), on constructed states.
func TestSelectAggregated(t *testing.T) {
	const (
		d    = uint64(0xf0)   // ports 4–7
		y    = uint64(0xf000) // ports 12–15
		p    = d | y
		all  = ^uint64(0)
		none = uint64(0)
	)
	bit := func(ps ...int) uint64 {
		var m uint64
		for _, q := range ps {
			m |= 1 << uint(q)
		}
		return m
	}
	for _, c := range []struct {
		name                       string
		adaptive, sel, free, awake uint64
		rrp                        int
		port, next                 int
		how                        How
	}{
		{"awake beats sleeping, round-robin from rrp", p, bit(4, 5, 12, 13), all, bit(4, 13), 6, 13, 14, AdaptiveAwake},
		{"wrap: rrp past every port", p, bit(4, 5, 12, 13), all, bit(4, 13), 14, 4, 5, AdaptiveAwake},
		{"only sleeping free: first from rrp", p, bit(4, 5, 12, 13), bit(5, 12), bit(4, 13), 6, 12, 13, AdaptiveSleeping},
		{"busy awake skipped", p, bit(4, 5), bit(5), bit(4), 0, 5, 6, AdaptiveSleeping},
		{"non-selectable awake skipped", p, bit(4, 12), all, bit(5, 13), 0, 4, 5, AdaptiveSleeping},
		{"P empty: D, awake first, rrp kept", none, bit(4, 5, 6), bit(4, 6), bit(6), 5, 6, 5, Deterministic},
		{"P empty: D sleeping, round-robin, rrp kept", none, bit(4, 5, 6), bit(4, 6), none, 5, 6, 5, Deterministic},
		{"P all busy, D not in P: D", y, bit(4, 12), bit(4), bit(4), 0, 4, 0, Deterministic},
		{"nothing free: queue on D's first selectable from rrp", p, bit(4, 5, 12), none, all, 5, 5, 6, Queued},
		{"nothing free, wrap", p, bit(4, 5, 12), none, all, 9, 4, 5, Queued},
		{"no selectable member of D: any of D", p, bit(12), bit(13), all, 0, 4, 5, Queued},
	} {
		port, next, how := SelectAggregated(c.adaptive, d, c.sel, c.free, c.awake, c.rrp)
		if port != c.port || next != c.next || how != c.how {
			t.Errorf("%s: port %d next %d how %d, want %d %d %d", c.name, port, next, how, c.port, c.next, c.how)
		}
	}
}

func BenchmarkSelectAggregated(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		SelectAggregated(0xf0f0, 0xf0, 0x3030, uint64(i)&0xffff, uint64(i)>>3&0xffff, i&31)
	}
}
