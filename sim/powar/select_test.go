package powar

import (
	"math/rand/v2"
	"testing"
)

// portState is one up port's state in a hand case.
type portState struct{ busy, awake, selectable bool }

// masks turns the states of up ports first, first+1, … into Select's
// inputs.
func masks(first int, ps []portState) (eligible, awake uint64) {
	for i, s := range ps {
		b := uint64(1) << uint(first+i)
		if !s.busy && s.selectable {
			eligible |= b
		}
		if s.awake {
			awake |= b
		}
	}
	return eligible, awake
}

// TestSelectHand: a switch of radix 8 (a 4-ary tree: down ports 0–3, up
// ports 4–7, all four up ports adaptive candidates) in given states; the
// expected port follows Algorithm 1 by hand.
func TestSelectHand(t *testing.T) {
	free := portState{awake: true, selectable: true}
	asleep := portState{selectable: true}
	busy := portState{busy: true, awake: true, selectable: true}
	off := portState{awake: true} // awake but not selectable
	for _, c := range []struct {
		name      string
		ps        []portState // ports 4, 5, 6, 7
		rrp       int
		port, rrn int
		ok        bool
	}{
		{"all free, pointer at 0: first up port", []portState{free, free, free, free}, 0, 4, 5, true},
		{"all free, pointer at 6", []portState{free, free, free, free}, 6, 6, 7, true},
		{"awake beats sleeping in round-robin order", []portState{free, free, asleep, asleep}, 6, 4, 5, true},
		{"awake after the pointer beats sleeping before it", []portState{asleep, asleep, asleep, free}, 4, 7, 8, true},
		{"busy awake port skipped for a sleeping one", []portState{busy, asleep, off, off}, 4, 5, 6, true},
		{"only sleeping: first in round-robin order", []portState{asleep, asleep, asleep, asleep}, 6, 6, 7, true},
		{"pointer past the last port wraps", []portState{asleep, free, free, asleep}, 8, 5, 6, true},
		{"non-selectable awake port never chosen", []portState{asleep, off, off, off}, 5, 4, 5, true},
		{"all busy or non-selectable: NULL, pointer kept", []portState{busy, off, busy, off}, 5, 0, 5, false},
	} {
		el, aw := masks(4, c.ps)
		port, next, ok := Select(el, aw, c.rrp)
		if ok != c.ok || (ok && (port != c.port || next != c.rrn)) || (!ok && next != c.rrp) {
			t.Errorf("%s: Select = %d, %d, %v; want %d, %d, %v", c.name, port, next, ok, c.port, c.rrn, c.ok)
		}
	}
}

// algorithm1 is Algorithm 1's adaptive part transcribed literally: a loop
// over i = 0..n−1 of p = (rrp + i) mod n.
func algorithm1(n, rrp int, cand, busy, sel, awake []bool) (int, int, bool) {
	pSleep := -1
	for i := range n {
		p := (rrp + i) % n
		if cand[p] && !busy[p] && sel[p] {
			if awake[p] {
				return p, (p + 1) % n, true
			}
			if pSleep < 0 {
				pSleep = p
			}
		}
	}
	if pSleep >= 0 {
		return pSleep, (pSleep + 1) % n, true
	}
	return -1, rrp, false
}

// TestSelectMatchesAlgorithm1 compares Select with the literal loop on
// random switches (the pointer Select returns may be n where the loop
// wraps it to 0: the same position).
func TestSelectMatchesAlgorithm1(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := 2 + rng.IntN(63)
		rrp := rng.IntN(n)
		cand, busy, sel, awake := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
		var el, aw uint64
		for p := range n {
			cand[p], busy[p], sel[p], awake[p] = rng.IntN(2) == 0, rng.IntN(3) == 0, rng.IntN(3) != 0, rng.IntN(2) == 0
			if cand[p] && !busy[p] && sel[p] {
				el |= 1 << uint(p)
			}
			if awake[p] {
				aw |= 1 << uint(p)
			}
		}
		wp, wn, wok := algorithm1(n, rrp, cand, busy, sel, awake)
		p, next, ok := Select(el, aw, rrp)
		if ok != wok || (ok && (p != wp || next%n != wn)) || (!ok && next != rrp) {
			t.Fatalf("n %d rrp %d el %b aw %b: Select %d %d %v, Algorithm 1 %d %d %v", n, rrp, el, aw, p, next, ok, wp, wn, wok)
		}
	}
}

func TestFirst(t *testing.T) {
	for _, c := range []struct {
		m         uint64
		rrp, want int
	}{{0b1010, 0, 1}, {0b1010, 2, 3}, {0b1010, 4, 1}, {1 << 63, 63, 63}, {1, 64, 0}, {1<<63 | 1, 64, 0}} {
		if got := First(c.m, c.rrp); got != c.want {
			t.Errorf("First(%b, %d) = %d, want %d", c.m, c.rrp, got, c.want)
		}
	}
}

func BenchmarkSelect(b *testing.B) {
	b.ReportAllocs()
	p := 0
	for i := range b.N {
		p, _, _ = Select(0xf0, uint64(i)&0xf0, p)
	}
	_ = p
}

// BenchmarkDecision is the cost of Algorithm 1 (powar.Select) and of
// one checking-cycle step of Algorithm 2 (Switch.Advance) per routing
// decision: 16-port switches, 8 adaptive candidates, random busy and
// awake sets and round-robin pointers, a decision every 100 ns of a 10 µs
// cycle. docs/simulator.md ("POWAR", Cost) quotes it.
func BenchmarkDecision(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1 << 10
	var elig, awake [n]uint64
	var rrp [n]int
	for i := range n {
		elig[i] = rng.Uint64() & 0xff00
		awake[i] = elig[i] & rng.Uint64()
		rrp[i] = rng.IntN(16)
	}
	th := DefaultThresholds()
	sw := NewSwitch(8)
	b.ReportAllocs()
	var sink int
	i := 0
	for b.Loop() {
		j := i & (n - 1)
		sw.Advance(th, int64(i)/100, 8, 12500)
		p, next, _ := Select(elig[j], awake[j], rrp[j])
		sw.RRP = uint8(next)
		sw.Count += 128
		sink += p
		i++
	}
	_ = sink
}
