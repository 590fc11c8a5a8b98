package tcep

import (
	"slices"
	"testing"
)

// TestAlgorithm1 checks Boundary and SelectDeactivation against hand
// calculations, the first the digest's Fig. 6 example (R3 with five links:
// three inner with a budget of 1.9, outer links carrying 1.2; the figure
// counts spare capacity as 1 − util, i.e. hwm 1).
func TestAlgorithm1(t *testing.T) {
	c := func(util, minU float64) Cand { return Cand{Util: util, MinUtil: minU, Eligible: true} }
	for _, tc := range []struct {
		name     string
		links    []Cand
		hwm      float64
		boundary int
		pick     int
	}{
		// spare 0.6+0.7+0.6 = 1.9 ≥ 0.5+0.7 = 1.2 at link 2 (after link 1:
		// 1.3 < 1.6); of links 3 (min 0.4) and 4 (min 0.1), link 4.
		{"fig6", []Cand{c(0.4, 0.4), c(0.3, 0.2), c(0.4, 0.1), c(0.5, 0.4), c(0.7, 0.1)}, 1, 3, 4},
		// hwm 0.75: spare 0.35, 0.45, 0.35, 0.25; after link 1: 0.8 <
		// 1.6; link 2: 1.15 < 1.2; link 3: 1.4 ≥ 0.7: only link 4 is outer.
		{"fig6-hwm", []Cand{c(0.4, 0.4), c(0.3, 0.2), c(0.4, 0.1), c(0.5, 0.4), c(0.7, 0.1)}, 0.75, 4, 4},
		// The least minimal traffic wins, not the least utilised link
		// (Obs. #2): link 2 carries 0.3 (all non-minimal), link 3 0.1
		// (all minimal).
		{"least-minimal", []Cand{c(0.1, 0.1), c(0.1, 0.1), c(0.3, 0), c(0.1, 0.1)}, 0.75, 2, 2},
		// Links above hwm add no budget (clamp at 0): 0+0 < 0.9+0.9, then
		// 0 < 0.9: no outer link.
		{"saturated", []Cand{c(0.9, 0.9), c(0.9, 0.9), c(0.9, 0.9), c(0.9, 0.9)}, 0.75, 4, -1},
		// An ineligible link (root, anti-oscillation) is skipped.
		{"ineligible", []Cand{c(0.1, 0.1), c(0.1, 0.1), {Util: 0.1, MinUtil: 0}, c(0.1, 0.05)}, 0.75, 2, 3},
		{"one-link", []Cand{c(0.1, 0.1)}, 0.75, 1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if b := Boundary(tc.links, tc.hwm); b != tc.boundary {
				t.Errorf("boundary %d, want %d", b, tc.boundary)
			}
			if p := SelectDeactivation(tc.links, tc.hwm); p != tc.pick {
				t.Errorf("pick %d, want %d", p, tc.pick)
			}
		})
	}
}

// low returns K×K uses of util u, all minimal.
func low(k int, u float64) []Use {
	us := make([]Use, k*k)
	for i := range us {
		us[i] = Use{Min: u}
	}
	return us
}

// TestSubnetTimeline walks a 4-router subnetwork through a deactivation
// (requests, the mutual agreement, shadow), a shadow reactivation, a
// second deactivation to Inactive, and an activation by virtual
// utilisation, counting the control messages by hand.
func TestSubnetTimeline(t *testing.T) {
	const hwm = 0.75
	s := NewSubnet(4)
	u := low(4, 0.1)
	// Router 1: links to 0, 2, 3 (0.1 each): after link 1 (to 2) the
	// budget 0.65+0.65 covers the outer 0.1: outer {3}. Router 2: outer
	// {3}; router 3: links to 0, 1, 2: outer {2}. The hub sends nothing.
	reqs := s.DeactivationEpoch(u, hwm, nil)
	want := []Request{{1, 3, 0.1}, {2, 3, 0.1}, {3, 2, 0.1}}
	if !slices.Equal(reqs, want) {
		t.Fatalf("requests %v, want %v", reqs, want)
	}
	// Receivers in ascending id: 2 gets 3's request for 2–3, which it
	// asked for too (agreed): 2 and 3 are matched, and 1's request to 3
	// is NACKed.
	acked := s.RespondDeactivation(reqs, u, hwm)
	if !slices.Equal(acked, []Request{{3, 2, 0.1}}) {
		t.Fatalf("acked %v", acked)
	}
	s.CompleteDeactivation(acked)
	if s.State(2, 3) != Shadow || s.State(3, 2) != Shadow {
		t.Fatalf("2–3 %v", s.State(2, 3))
	}
	// 3 requests + 3 answers + 3 broadcasts.
	if s.Stats.Messages != 9 || s.Stats.Deactivations != 1 {
		t.Fatalf("stats %+v", s.Stats)
	}
	// A router with a shadow link sends no request; router 1's outer link
	// is still 3, whose owner has a shadow link: NACK.
	reqs = s.DeactivationEpoch(u, hwm, nil)
	if !slices.Equal(reqs, []Request{{1, 3, 0.1}}) {
		t.Fatalf("second requests %v", reqs)
	}
	if a := s.RespondDeactivation(reqs, u, hwm); len(a) != 0 {
		t.Fatalf("acked %v with a shadow link at 3", a)
	}
	// Router 2's link to 0 above hwm, mostly non-minimal: the shadow link
	// comes back at once (1 notice + 3 broadcasts).
	hot := low(4, 0.1)
	hot[2*4+0] = Use{Min: 0.2, NonMin: 0.6}
	m := s.Stats.Messages
	if r := s.ActivationEpoch(hot, hwm, nil); len(r) != 0 {
		t.Fatalf("activation requests %v", r)
	}
	if s.State(2, 3) != Active || s.Stats.Reactivations != 1 || s.Stats.Messages != m+4 {
		t.Fatalf("after reactivation: %v %+v", s.State(2, 3), s.Stats)
	}
	// Deactivate again and let the shadow expire.
	s.CompleteDeactivation([]Request{{2, 3, 0}})
	if !s.Expire(2, 3) || s.State(2, 3) != Inactive || s.Expire(2, 3) {
		t.Fatalf("expire: %v", s.State(2, 3))
	}
	if a, sh, in := s.Count(); a != 5 || sh != 0 || in != 1 {
		t.Fatalf("count %d %d %d", a, sh, in)
	}
	// Router 3 triggered; its only inactive link (to 2) had virtual use:
	// requested, ACKed, Active after completion.
	hot = low(4, 0.1)
	hot[3*4+1] = Use{Min: 0.1, NonMin: 0.7}
	hot[3*4+2] = Use{Virt: 0.3}
	reqs = s.ActivationEpoch(hot, hwm, nil)
	if !slices.Equal(reqs, []Request{{3, 2, 0.3}}) {
		t.Fatalf("activation requests %v", reqs)
	}
	acked = s.RespondActivation(reqs)
	s.CompleteActivation(acked)
	if s.State(2, 3) != Active || s.Stats.Activations != 1 {
		t.Fatalf("after activation %v %+v", s.State(2, 3), s.Stats)
	}
	// Activation has priority: neither 2 nor 3 deactivates in the next
	// deactivation epoch; router 1 asks for 3 again and is NACKed.
	reqs = s.DeactivationEpoch(u, hwm, nil)
	if !slices.Equal(reqs, []Request{{1, 3, 0.1}}) {
		t.Fatalf("requests after activation %v", reqs)
	}
	if a := s.RespondDeactivation(reqs, u, hwm); len(a) != 0 {
		t.Fatalf("acked %v right after an activation", a)
	}
}

// TestActivationPriority: among requests, the highest virtual
// utilisation wins and a router takes at most one change per round.
func TestActivationPriority(t *testing.T) {
	s := NewSubnet(5)
	for _, l := range [][2]int{{1, 2}, {1, 3}, {2, 4}, {3, 4}} {
		s.set(l[0], l[1], Inactive)
	}
	acked := s.RespondActivation([]Request{{1, 2, 0.2}, {1, 3, 0.5}, {4, 2, 0.4}, {4, 3, 0.1}})
	// 1–3 (0.5) first; 4–2 (0.4) next (1 and 3 taken); 1–2 and 4–3 refused.
	if !slices.Equal(acked, []Request{{1, 3, 0.5}, {4, 2, 0.4}}) {
		t.Fatalf("acked %v", acked)
	}
	if s.Stats.Messages != 4 {
		t.Fatalf("messages %d", s.Stats.Messages)
	}
}

// TestAntiOscillation: the most recently activated link is kept while an
// inner link is above hwm/2, and may go once they are all below.
func TestAntiOscillation(t *testing.T) {
	const hwm = 0.75
	s := NewSubnet(4)
	s.set(1, 3, Inactive)
	s.CompleteActivation([]Request{{1, 3, 0.2}})
	s.RespondDeactivation(nil, nil, hwm) // clears the activated flags
	u := low(4, 0.1)
	u[1*4+0] = Use{Min: 0.4} // inner link above hwm/2
	// Router 1: links 0 (0.4), 2, 3: spare 0.35+0.65 ≥ 0.1: outer {3},
	// the recent one: kept.
	if r := s.DeactivationEpoch(u, hwm, nil); slices.ContainsFunc(r, func(q Request) bool { return q.From == 1 }) {
		t.Fatalf("router 1 requested %v", r)
	}
	u[1*4+0] = Use{Min: 0.3}
	if r := s.DeactivationEpoch(u, hwm, nil); !slices.Contains(r, Request{1, 3, 0.1}) {
		t.Fatalf("router 1 did not request 3: %v", r)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{{Hwm: 1, ActivationEpoch: 1, DeactivationEpoch: 1}, {Hwm: 0.5, ActivationEpoch: 0, DeactivationEpoch: 1}, {Hwm: 0.5, ActivationEpoch: 2, DeactivationEpoch: 1}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestDeactivationMatching: receivers answer in ascending id, each ACKing
// at most one request, no router getting two links. In a 5-router
// subnetwork at low load every non-hub router's outer links start at
// index 2 of its list, the first of equals chosen: 1 (list 0 2 3 4) asks
// 3, 2 (0 1 3 4) asks 3, 3 (0 1 2 4) asks 2, 4 (0 1 2 3) asks 2.
// Receiver 2: 3→2 (mutual with 2→3) and 4→2, both outer for 2 with the
// same minimal traffic: the first, 3→2; 2 and 3 matched. Receiver 3:
// matched, NACKs 1→3.
func TestDeactivationMatching(t *testing.T) {
	const hwm = 0.75
	s := NewSubnet(5)
	u := low(5, 0.1)
	reqs := s.DeactivationEpoch(u, hwm, nil)
	want := []Request{{1, 3, 0.1}, {2, 3, 0.1}, {3, 2, 0.1}, {4, 2, 0.1}}
	if !slices.Equal(reqs, want) {
		t.Fatalf("requests %v, want %v", reqs, want)
	}
	acked := s.RespondDeactivation(reqs, u, hwm)
	if !slices.Equal(acked, []Request{{3, 2, 0.1}}) {
		t.Fatalf("acked %v", acked)
	}
	// Next epoch 2 and 3 hold a shadow link and stay out; 1 asks 3 and 4
	// asks 2 again, both receivers hold a shadow link: NACKed.
	s.CompleteDeactivation(acked)
	reqs = s.DeactivationEpoch(u, hwm, nil)
	if !slices.Equal(reqs, []Request{{1, 3, 0.1}, {4, 2, 0.1}}) {
		t.Fatalf("second requests %v", reqs)
	}
	if a := s.RespondDeactivation(reqs, u, hwm); len(a) != 0 {
		t.Fatalf("acked %v", a)
	}
	// Disjoint links go in the same round: in 6 routers at low load,
	// 2→4 (2 is at index 2 of 4's list 0 1 2 3 5: outer) and 3→5 (index
	// 3 of 0 1 2 3 4: outer) are both ACKed; 1→4 is not (1 is always
	// inner: the boundary test starts with two inner links).
	s = NewSubnet(6)
	u = low(6, 0.1)
	acked = s.RespondDeactivation([]Request{{1, 4, 0}, {2, 4, 0}, {3, 5, 0}}, u, hwm)
	if !slices.Equal(acked, []Request{{2, 4, 0}, {3, 5, 0}}) {
		t.Fatalf("six routers: acked %v", acked)
	}
}

// TestIndirectActivation: in an 8-router subnetwork with 1–5 and 2–5
// Inactive, router 3 detours traffic for 5 through 0 (Detoured), reached
// over 3→0 at 0.9 > hwm 0.75: 5 is hot. Router 3 has no Inactive link (no direct
// request), so it sends an indirect request to the lowest router that is
// not an intermediate for lack of X–5 with 3–X Active: 1.
// It is buffered at 1; at the next epoch 1 asks 5 for 1–5 with the
// detoured utilisation (0.4) as value, which wins over 1's own direct
// candidate (its link to 6, virtual 0.3) and loses to a higher one.
func TestIndirectActivation(t *testing.T) {
	const hwm = 0.75
	setup := func() *Subnet {
		s := NewSubnet(8)
		s.set(1, 5, Inactive)
		s.set(2, 5, Inactive)
		return s
	}
	hot := func() []Use {
		u := make([]Use, 64)
		u[3*8+0] = Use{NonMin: 0.9}
		u[3*8+5] = Use{Min: 0.5, Detour: 0.4}
		return u
	}
	quiet := make([]Use, 64)

	s := setup()
	if x := s.IndirectTarget(3, 5); x != 1 {
		t.Fatalf("IndirectTarget(3, 5) = %d, want 1", x)
	}
	s.Detoured(3, 5, 0)
	if reqs := s.ActivationEpoch(hot(), hwm, nil); len(reqs) != 0 {
		t.Fatalf("requests %v, want none (the indirect one is buffered)", reqs)
	}
	if s.Stats.Indirect != 1 || s.Stats.Messages != 1 {
		t.Fatalf("stats %+v, want 1 indirect request, 1 message", s.Stats)
	}
	reqs := s.ActivationEpoch(quiet, hwm, nil)
	if !slices.Equal(reqs, []Request{{1, 5, 0.4}}) {
		t.Fatalf("next epoch: requests %v, want 1→5 (0.4)", reqs)
	}
	s.CompleteActivation(s.RespondActivation(reqs))
	if s.State(1, 5) != Active || s.Stats.Activations != 1 {
		t.Fatalf("1–5 %v, %+v", s.State(1, 5), s.Stats)
	}
	// 1 and 0 now intermediates for 3→5; with 3→1 also above hwm the
	// next indirect request goes to 2.
	u := hot()
	u[3*8+1] = Use{NonMin: 0.8}
	s.Detoured(3, 5, 0)
	s.Detoured(3, 5, 1)
	s.ActivationEpoch(u, hwm, nil)
	if !slices.Equal(s.inbox, []Request{{2, 5, 0.4}}) {
		t.Fatalf("inbox %v, want 2→5", s.inbox)
	}

	// Router 1's own direct candidate: triggered (1→0 at 0.8, all
	// non-minimal) with Inactive 1–6 of virtual 0.3: the indirect one
	// (0.4) wins; with virtual 0.5 its own wins. One request either way.
	for _, tc := range []struct {
		virt float64
		want Request
	}{{0.3, Request{1, 5, 0.4}}, {0.5, Request{1, 6, 0.5}}} {
		s := setup()
		s.set(1, 6, Inactive)
		s.Detoured(3, 5, 0)
		s.ActivationEpoch(hot(), hwm, nil)
		u := make([]Use, 64)
		u[1*8+0] = Use{NonMin: 0.8}
		u[1*8+6] = Use{Virt: tc.virt}
		if reqs := s.ActivationEpoch(u, hwm, nil); !slices.Equal(reqs, []Request{tc.want}) {
			t.Errorf("virtual %v: requests %v, want %v", tc.virt, reqs, tc.want)
		}
	}

	// X–t Shadow: X reactivates it at once at its epoch (no request).
	s = setup()
	s.set(1, 5, Active)
	s.CompleteDeactivation([]Request{{1, 5, 0}})
	s.Detoured(3, 5, 0)
	s.ActivationEpoch(hot(), hwm, nil)
	if s.State(1, 5) != Shadow {
		t.Fatalf("1–5 %v", s.State(1, 5))
	}
	if !slices.Equal(s.inbox, []Request{{1, 5, 0.4}}) {
		t.Fatalf("inbox %v", s.inbox)
	}
	if reqs := s.ActivationEpoch(quiet, hwm, nil); len(reqs) != 0 || s.State(1, 5) != Active || s.Stats.Reactivations != 1 {
		t.Fatalf("requests %v, 1–5 %v, %+v", reqs, s.State(1, 5), s.Stats)
	}

	// 3–1 Inactive: 1 could not become an intermediate: 2 is asked.
	s = setup()
	s.set(3, 1, Inactive)
	if x := s.IndirectTarget(3, 5); x != 2 {
		t.Errorf("IndirectTarget(3, 5) with 3–1 off = %d, want 2", x)
	}
	// A router that sends a direct request sends no indirect one.
	s = setup()
	s.set(3, 6, Inactive)
	u = hot()
	u[3*8+6] = Use{Virt: 0.1}
	s.Detoured(3, 5, 0)
	if reqs := s.ActivationEpoch(u, hwm, nil); !slices.Equal(reqs, []Request{{3, 6, 0.1}}) || len(s.inbox) != 0 {
		t.Fatalf("requests %v, inbox %v", reqs, s.inbox)
	}
	// Not hot (3→0 at 0.7): nothing.
	s = setup()
	u = hot()
	u[3*8+0] = Use{NonMin: 0.7}
	s.Detoured(3, 5, 0)
	if s.ActivationEpoch(u, hwm, nil); len(s.inbox) != 0 || s.Stats.Messages != 0 {
		t.Fatalf("inbox %v, %+v", s.inbox, s.Stats)
	}
}

// TestReactivate: only a Shadow link is reactivated, with one notice and
// k−1 broadcasts, and its ends may hold a shadow link again.
func TestReactivate(t *testing.T) {
	s := NewSubnet(4)
	if s.Reactivate(1, 2) {
		t.Fatal("reactivated an Active link")
	}
	s.CompleteDeactivation([]Request{{1, 2, 0}})
	m := s.Stats.Messages
	if !s.Reactivate(2, 1) || s.State(1, 2) != Active || s.Stats.Reactivations != 1 || s.Stats.Messages != m+4 {
		t.Fatalf("%v %+v", s.State(1, 2), s.Stats)
	}
	s.CompleteDeactivation([]Request{{1, 3, 0}})
	if s.State(1, 3) != Shadow {
		t.Fatalf("1–3 %v: router 1 still held a shadow link", s.State(1, 3))
	}
}

// TestSettle: with Settle = 3, a router whose link was activated in
// epoch e sends no direct activation request in epochs e+1 … e+3, however
// hot its links read, and does again in e+4 (the measurement window has
// then seen the new link); a shadow link is still reactivated at once.
func TestSettle(t *testing.T) {
	s := NewSubnet(4)
	s.Settle = 3
	for _, l := range [][2]int{{2, 3}, {1, 3}} {
		s.CompleteDeactivation([]Request{{From: l[0], To: l[1]}})
		s.Expire(l[0], l[1])
	}
	u := make([]Use, 16)
	u[3*4+0] = Use{NonMin: 1} // 3→0 above U_hwm, all non-minimal
	u[3*4+2] = Use{Virt: 0.5}
	u[3*4+1] = Use{Virt: 0.4}
	reqs := s.ActivationEpoch(u, 0.75, nil) // epoch 1: 3 asks for 3–2
	if len(reqs) != 1 || reqs[0].To != 2 {
		t.Fatalf("epoch 1: %+v", reqs)
	}
	s.BeginActivation(s.RespondActivation(reqs))
	for e := 2; e <= 5; e++ {
		reqs = s.ActivationEpoch(u, 0.75, nil)
		if got, want := len(reqs), b2i(e == 5); got != want {
			t.Fatalf("epoch %d: %d requests %+v, want %d", e, got, reqs, want)
		}
	}
	if reqs[0].From != 3 || reqs[0].To != 1 {
		t.Errorf("epoch 5: %+v, want 3 → 1", reqs)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBoundaryFrom: with link 0 alone able to cover the outer links
// (spare 0.75 − 0.1 = 0.65 ≥ 0.2 + 0.3), the boundary is 1 when first
// tested with one inner link, 2 as printed; when link 0 cannot (0.65 <
// 0.7 + 0.3) both readings grow the inner set alike.
func TestBoundaryFrom(t *testing.T) {
	for _, tc := range []struct {
		name     string
		utils    []float64
		innerMin int
		want     int
	}{
		{"one-covers", []float64{0.1, 0.2, 0.3}, 1, 1},
		{"printed-covers", []float64{0.1, 0.2, 0.3}, 2, 2},
		{"one-short", []float64{0.1, 0.7, 0.3}, 1, 2},
		{"printed-short", []float64{0.1, 0.7, 0.3}, 2, 2},
	} {
		links := make([]Cand, len(tc.utils))
		for i, u := range tc.utils {
			links[i] = Cand{Util: u, MinUtil: u, Eligible: i > 0}
		}
		if got := BoundaryFrom(links, 0.75, tc.innerMin); got != tc.want {
			t.Errorf("%s: boundary %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestAnyIntermediate: with PAL's two traffic classes any router of the
// subnetwork may be an intermediate (paper 004 §IV-E), so Usable, the hot
// check and IndirectTarget consider routers above the ends too, not only
// those below both (the earlier lower-id rule). An 8-router subnetwork,
// the links listed Inactive; each row asks router r about target t.
// IndirectTarget is the lowest X ∉ {r, t} with r–X Active and X–t not
// Active (paper 004 §IV-B: "the router with the lowest ID that is not
// available as an intermediate"), scanned in ascending id.
func TestAnyIntermediate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		off      [][2]int
		r, to    int
		usable   []int // Usable(r, to, m), ascending
		indirect int
	}{
		// Nothing off: every other router is an intermediate, no target.
		{"all-active", nil, 3, 5, []int{0, 1, 2, 4, 6, 7}, -1},
		// Router 1 to 5, 2–5 off: 2 is asked; the rule below both ends
		// left 1 with no one to ask (0 is an intermediate already).
		{"above-the-sender", [][2]int{{2, 5}}, 1, 5, []int{0, 3, 4, 6, 7}, 2},
		// Every router below both ends an intermediate, 6–5 and 7–5 off:
		// 6, above both ends, is asked (before: −1).
		{"above-both", [][2]int{{6, 5}, {7, 5}}, 3, 5, []int{0, 1, 2, 4}, 6},
		// 4–5 off but 3–4 off too: 4 could not become an intermediate;
		// 6 (3–6 Active, 6–5 off) is the lowest that can.
		{"skip-missing-r-x", [][2]int{{4, 5}, {3, 4}, {6, 5}}, 3, 5, []int{0, 1, 2, 7}, 6},
		// The hub as the target: every other router with both links
		// Active is an intermediate; X–0 is a root link, never off:
		// nobody to ask (before, nothing was below the hub at all).
		{"to-the-hub", [][2]int{{3, 6}}, 3, 0, []int{1, 2, 4, 5, 7}, -1},
		// From the hub to 7, 5–7 off: 5 is asked.
		{"from-the-hub", [][2]int{{5, 7}}, 0, 7, []int{1, 2, 3, 4, 6}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSubnet(8)
			for _, l := range tc.off {
				s.set(l[0], l[1], Inactive)
			}
			var got []int
			for m := range s.K {
				if s.Usable(tc.r, tc.to, m) {
					got = append(got, m)
				}
			}
			if !slices.Equal(got, tc.usable) {
				t.Errorf("Usable(%d, %d, ·) = %v, want %v", tc.r, tc.to, got, tc.usable)
			}
			for range 2 { // the same state, the same answer
				if x := s.IndirectTarget(tc.r, tc.to); x != tc.indirect {
					t.Errorf("IndirectTarget(%d, %d) = %d, want %d", tc.r, tc.to, x, tc.indirect)
				}
			}
		})
	}
}

// TestIndirectHotChosen: a target is hot only through the detours
// actually routed (paper 004 §IV-B: "an output link chosen for non-minimal
// routing" above U_hwm), whichever router the intermediate is: above both
// ends too. Router 3 detours towards 5 (1–5, 2–5 and 7–5 off; 3 has no
// Inactive link: no direct request), its available intermediates 0, 4 and
// 6; 3→6 reads 0.9 (above U_hwm 0.75), 3→0 and 3→4 0.5. Hot, the
// indirect request goes to 1, the lowest router lacking only its link to
// 5; not hot, none. The detours recorded are forgotten at the epoch: the
// next one, with none recorded, sends nothing.
func TestIndirectHotChosen(t *testing.T) {
	const hwm = 0.75
	for _, tc := range []struct {
		name string
		via  []int // intermediates of the detours recorded
		want []Request
	}{
		{"via-6-above-both-ends", []int{6}, []Request{{1, 5, 0.4}}},
		{"via-0-and-6", []int{0, 6}, []Request{{1, 5, 0.4}}},
		// 3→6 is hot but no detour took it (the rule that looked at every
		// available intermediate called 5 hot here).
		{"hot-link-not-chosen", []int{0, 4}, nil},
		{"no-detour-recorded", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSubnet(8)
			for _, x := range []int{1, 2, 7} {
				s.set(x, 5, Inactive)
			}
			u := make([]Use, 64)
			u[3*8+5] = Use{Min: 0.5, Detour: 0.4}
			u[3*8+0] = Use{NonMin: 0.5}
			u[3*8+4] = Use{NonMin: 0.5}
			u[3*8+6] = Use{NonMin: 0.9}
			for _, m := range tc.via {
				s.Detoured(3, 5, m)
			}
			if reqs := s.ActivationEpoch(u, hwm, nil); len(reqs) != 0 {
				t.Fatalf("requests %v, want none", reqs)
			}
			if !slices.Equal(s.inbox, tc.want) || s.Stats.Indirect != uint64(len(tc.want)) {
				t.Fatalf("inbox %v (indirect %d), want %v", s.inbox, s.Stats.Indirect, tc.want)
			}
			s.ActivationEpoch(u, hwm, nil)
			if s.Stats.Indirect != uint64(len(tc.want)) {
				t.Errorf("second epoch, no detour recorded: %d indirect requests in all, want %d", s.Stats.Indirect, len(tc.want))
			}
		})
	}
}
