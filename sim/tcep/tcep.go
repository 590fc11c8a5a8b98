package tcep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// State is a link's logical state.
type State uint8

// Link states.
const (
	// Active links are routable.
	Active State = iota
	// Shadow links are logically off (new routing decisions avoid them)
	// but physically on for one deactivation epoch; packets already
	// committed to them (at an intermediate) may still cross them.
	Shadow
	// Inactive links are gated: no packet may cross them.
	Inactive
	// Waking links were ACKed for activation and are coming back from
	// off (the preset's off.wake_time): routed as Inactive until
	// CompleteActivation makes them Active.
	Waking
)

// String returns the state's name.
func (s State) String() string {
	switch s {
	case Active:
		return "active"
	case Shadow:
		return "shadow"
	case Inactive:
		return "inactive"
	case Waking:
		return "waking"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Config is TCEP's configuration (scenario keys power.consolidation.*).
type Config struct {
	// Hwm is the high-water mark U_hwm, in (0, 1).
	Hwm float64
	// ActivationEpoch and DeactivationEpoch are the epoch lengths (ps).
	ActivationEpoch, DeactivationEpoch int64
	// NoIndirect turns indirect activation off (an ablation: the paper
	// has it; Subnet.NoIndirect).
	NoIndirect bool
	// Window (ps) is how much traffic a utilisation reading covers: 0 or
	// at most the activation epoch, each rule reads its own epoch's
	// counters (the epochs as printed); longer, every rule reads an
	// exponentially weighted average of the activation epochs' readings
	// with time constant Window (docs/simulator.md "Consolidation").
	// Paper 004's 1 µs epoch holds about 1000 of its single-flit packets;
	// at 400 Gb/s with 9600 B packets it holds five, and a reading of
	// five packets is noise.
	Window int64
	// Warmup (ps): the consolidation report's time-weighted link counts
	// start here (the paper measures at steady state); 0 = the whole run.
	Warmup int64
	// InnerMin is the number of inner links Algorithm 1 first tests the
	// boundary with: 0 or 2 as printed (every non-hub router keeps its
	// links to routers 0 and 1), 1 with link 0 alone (the prose's reading:
	// down to the root star).
	InnerMin int
	// ControlPackets sends the activation and deactivation requests and
	// their answers as packets through the network (queued, serialised,
	// waking sleeping links) instead of fixed delays of one control
	// message per hop.
	ControlPackets bool
}

// DefaultConfig is the paper's: U_hwm 0.75, epochs of 1 µs and 10 µs.
func DefaultConfig() Config {
	return Config{Hwm: 0.75, ActivationEpoch: 1_000_000, DeactivationEpoch: 10_000_000}
}

// Validate checks the configuration; errors name the scenario key.
func (c Config) Validate() error {
	switch {
	case !(c.Hwm > 0 && c.Hwm < 1):
		return fmt.Errorf("power.consolidation.hwm: must be in (0, 1), got %v", c.Hwm)
	case c.ActivationEpoch <= 0:
		return fmt.Errorf("power.consolidation.activation_epoch: must be > 0, got %d ps", c.ActivationEpoch)
	case c.DeactivationEpoch < c.ActivationEpoch:
		return fmt.Errorf("power.consolidation.deactivation_epoch: must be ≥ activation_epoch (%d ps), got %d ps", c.ActivationEpoch, c.DeactivationEpoch)
	case c.Window < 0:
		return fmt.Errorf("power.consolidation.window: must be ≥ 0, got %d ps", c.Window)
	case c.Warmup < 0:
		return fmt.Errorf("power.consolidation.warmup: must be ≥ 0, got %d ps", c.Warmup)
	case c.InnerMin != 0 && c.InnerMin != 1 && c.InnerMin != 2:
		return fmt.Errorf("power.consolidation.inner_min: must be 1 or 2, got %d", c.InnerMin)
	}
	return nil
}

// Use is a router's egress traffic on one of its links over an epoch, as
// fractions of the link's capacity in the epoch: Min and NonMin are the
// minimally and non-minimally routed bytes it carried; Virt (virtual
// utilisation) the bytes that would have taken it minimally had it been
// Active; Detour the bytes the router sent towards the link's far end
// through an intermediate (the first hops of its detours to that target,
// whatever the link's state: PAL's adaptive choice detours around an
// Active link too). Detour is read at activation epochs only (indirect
// activation).
//
// Paused is the share of the epoch the link could not send because the
// next router had no room (lossless flow control: PFC in lpictl): a link
// held by flow control has no spare capacity, so it counts as used.
type Use struct {
	Min, NonMin, Virt, Detour, Paused float64
}

// Util is the link's utilisation: the traffic routed to it and the time
// flow control held it.
func (u Use) Util() float64 { return u.Min + u.NonMin + u.Paused }

// Cand is one link in Algorithm 1's list: its utilisation, its minimally
// routed part, and whether it may be deactivated (not a root link, not
// kept by the anti-oscillation rule).
type Cand struct {
	Util, MinUtil float64
	Eligible      bool
}

// Boundary returns the index of the first outer link of a router's active
// links (sorted by neighbour id): inner links are added from link 0 until
// their spare capacity max(0, hwm − util) covers the outer links'
// utilisation, the test first made with links 0 and 1 inner (Algorithm 1
// as printed). len(links) means no outer link.
func Boundary(links []Cand, hwm float64) int { return BoundaryFrom(links, hwm, 2) }

// BoundaryFrom is Boundary with the test first made with innerMin inner
// links: 2 as printed, 1 with link 0 alone (the prose's reading: inner
// links are added until their budget covers the outer links).
func BoundaryFrom(links []Cand, hwm float64, innerMin int) int {
	if len(links) < 2 {
		return len(links)
	}
	budget := spare(links[0].Util, hwm)
	outer := 0.0
	for _, l := range links[1:] {
		outer += l.Util
	}
	if innerMin == 1 && budget >= outer-1e-12 {
		return 1
	}
	for i := 1; i < len(links); i++ {
		budget += spare(links[i].Util, hwm)
		outer -= links[i].Util
		if budget >= outer-1e-12 {
			return i + 1
		}
	}
	return len(links)
}

func spare(util, hwm float64) float64 { return max(0, hwm-util) }

// SelectDeactivation is Algorithm 1: the eligible outer link with the least
// minimally routed traffic (the first of equals), or −1.
func SelectDeactivation(links []Cand, hwm float64) int {
	return selectFrom(links, Boundary(links, hwm))
}

// selectFrom is SelectDeactivation over the outer links from boundary on.
func selectFrom(links []Cand, boundary int) int {
	best, bestMin := -1, math.Inf(1)
	for i := boundary; i < len(links); i++ {
		if l := links[i]; l.Eligible && l.MinUtil < bestMin {
			best, bestMin = i, l.MinUtil
		}
	}
	return best
}

// Request is a control request for the link between routers From (the
// sender) and To, with the value the receiver ranks requests by (the
// virtual utilisation for an activation, the sender's minimal traffic for
// a deactivation).
type Request struct {
	From, To int
	Value    float64
}

// Stats counts a subnetwork's changes and control messages.
type Stats struct {
	Activations, Deactivations, Reactivations, Gated uint64
	// Indirect counts the indirect activation requests sent.
	Indirect uint64
	// Messages counts requests (direct and indirect), ACKs, NACKs, shadow
	// reactivations and link-state broadcasts (k−1 per change).
	Messages uint64
}

// Subnet is one fully connected subnetwork of K routers (ids 0…K−1, the
// hub 0): every link's state and what the rules remember between epochs.
type Subnet struct {
	K int
	// NoIndirect: ActivationEpoch sends no indirect activation request
	// (Config.NoIndirect).
	NoIndirect bool
	// Settle is the number of activation epochs a router's readings take
	// to show a link it had activated (the measurement window over the
	// epoch, Config.Window): until then it sends no direct activation
	// request for an inactive link (0: none, the epochs as printed).
	Settle int
	// InnerMin is the number of inner links Algorithm 1's boundary is
	// first tested with (Config.InnerMin; 0 or 2: as printed).
	InnerMin int
	epochs   int     // ActivationEpoch calls
	lastAct  []int   // per router: the epoch of its last activation (−Settle − 1: none)
	st       []State // K×K, symmetric
	recent   []int   // per router: the neighbour of its most recently activated link (−1)
	shadow   []int   // per router: the neighbour of its shadow link (−1)
	// activated: the router's link was activated since its last
	// deactivation epoch (no deactivation then: activation has priority).
	activated []bool
	// inbox holds the indirect activation requests received since the
	// last activation epoch (From: the router asked, X; To: the target t
	// of the link X–t to activate; Value: the detoured utilisation that
	// triggered it), acted on at the next one.
	inbox, next []Request
	Stats       Stats
	cand        []Cand
	nb          []int
	// Scratch of the answers (no allocation per epoch): per router,
	// changed or matched; per ordered pair, asked.
	mark  []bool
	asked []bool
	// vias: the detours routed since the last activation epoch (Detoured),
	// and per ordered pair (r, t) whether one of them left r over a link
	// above hwm (scratch of ActivationEpoch).
	vias []Via
	hotT []bool
}

// Via is one of PAL's choices: router R sent traffic towards T through
// intermediate M (the first hop R→M).
type Via struct{ R, T, M int32 }

// Detoured records that router r has just routed a packet towards t
// through intermediate m (PAL's per-packet choice): the link r→m is an
// "output link chosen for non-minimal routing" (paper 004 §IV-B) of this
// activation epoch. Repeats of the last choice are not stored again; the
// list is reused from epoch to epoch (no allocation in steady state).
func (s *Subnet) Detoured(r, t, m int) {
	v := Via{int32(r), int32(t), int32(m)}
	if n := len(s.vias); n > 0 && s.vias[n-1] == v {
		return
	}
	s.vias = append(s.vias, v)
}

// NewSubnet returns a subnetwork of k routers with every link Active.
func NewSubnet(k int) *Subnet {
	s := &Subnet{K: k, st: make([]State, k*k), recent: make([]int, k), shadow: make([]int, k), activated: make([]bool, k), lastAct: make([]int, k)}
	for i := range k {
		s.recent[i], s.shadow[i] = -1, -1
		s.lastAct[i] = math.MinInt / 2
	}
	return s
}

// State returns the state of the link between routers a and b.
func (s *Subnet) State(a, b int) State { return s.st[a*s.K+b] }

func (s *Subnet) set(a, b int, v State) { s.st[a*s.K+b], s.st[b*s.K+a] = v, v }

// Root reports whether the link a–b is a root link (the hub's star).
func Root(a, b int) bool { return a == 0 || b == 0 }

// Count returns the numbers of active, shadow and inactive links.
func (s *Subnet) Count() (active, shadow, inactive int) {
	for a := range s.K {
		for b := a + 1; b < s.K; b++ {
			switch s.State(a, b) {
			case Active:
				active++
			case Shadow:
				shadow++
			default: // Inactive, Waking
				inactive++
			}
		}
	}
	return
}

// use returns router r's view of its link to j.
func use(u []Use, k, r, j int) Use { return u[r*k+j] }

// triggered: one of router r's active links is above hwm with more than
// half of its traffic non-minimal.
func (s *Subnet) triggered(u []Use, r int, hwm float64) bool {
	for j := range s.K {
		if j == r || s.State(r, j) != Active {
			continue
		}
		x := use(u, s.K, r, j)
		if x.Util() > hwm && x.NonMin > 0.5*x.Util() {
			return true
		}
	}
	return false
}

// Reactivate makes the Shadow link a–b Active again at once: a logical
// change only, implicitly acknowledged (one notice and k−1 link-state
// broadcasts). It reports whether the link was Shadow.
func (s *Subnet) Reactivate(a, b int) bool {
	if s.State(a, b) != Shadow {
		return false
	}
	s.set(a, b, Active)
	s.shadow[a], s.shadow[b] = -1, -1
	s.Stats.Reactivations++
	s.Stats.Messages += 1 + uint64(s.K-1)
	return true
}

// Usable reports whether m is an available intermediate from r to t for
// PAL: any other router of the subnetwork with r–m and m–t both Active
// (the set PAL's per-packet choice draws from; any intermediate is
// deadlock-free because the second hop travels in the other traffic
// class, docs/simulator.md "Consolidation: TCEP").
func (s *Subnet) Usable(r, t, m int) bool {
	return m != r && m != t && s.State(r, m) == Active && s.State(m, t) == Active
}

// IndirectTarget returns the router an indirect activation request of
// router r for target t goes to (paper 004 §IV-B: "the router with the
// lowest ID that is not available as an intermediate router"): the lowest
// id X other than r and t that is not an available intermediate only
// because X–t is not Active while r–X is (so that, X–t activated, X
// becomes one), or −1 if there is none (a missing r–X is r's own link:
// its direct activation's business). The scan is in ascending id, so the
// answer depends on the link states alone.
func (s *Subnet) IndirectTarget(r, t int) int {
	for x := range s.K {
		if x != r && x != t && s.State(r, x) == Active && s.State(x, t) != Active {
			return x
		}
	}
	return -1
}

// ActivationEpoch runs the activation rules of every router at an
// activation-epoch boundary, from the epoch's uses u (K×K, u[r*K+j] router
// r's egress on its link to j), and returns the activation requests
// appended to reqs (answered by RespondActivation).
//
// Direct activation: a triggered router (an Active link above hwm with
// more than half of its traffic non-minimal) with a shadow link
// reactivates it at once (logical only, no ACK); otherwise its candidate
// is its Inactive link with the highest virtual utilisation (if above 0).
//
// Indirect activation, received: each indirect request buffered since the
// last epoch for a link X–t still Shadow reactivates it at once, for one
// still Inactive is a candidate of X with the request's value. Each router
// then sends one activation request: its candidate of highest value (its
// own direct one on a tie).
//
// Indirect activation, sent: a router that sent no request checks its
// detours: a target t it detoured traffic to in the epoch is hot if one
// of the detours recorded since the last activation epoch (Detoured) left
// it towards t over a link r→m whose reading u is above hwm (paper 004
// §IV-B: "when utilization of an output link chosen for non-minimal
// routing is greater than U_hwm"); for the hot target with the most
// detoured traffic it sends an indirect request to IndirectTarget(r, t),
// buffered there until the next activation epoch (one control message).
// The recorded detours are then forgotten.
func (s *Subnet) ActivationEpoch(u []Use, hwm float64, reqs []Request) []Request {
	inbox := s.inbox
	s.inbox, s.next = s.next[:0], inbox
	start := len(reqs)
	s.epochs++
	for r := range s.K {
		best := Request{From: r, To: -1}
		if s.triggered(u, r, hwm) {
			if j := s.shadow[r]; j >= 0 {
				s.Reactivate(r, j)
			} else if s.epochs-s.lastAct[r] > s.Settle {
				for j := range s.K {
					if j != r && s.State(r, j) == Inactive && use(u, s.K, r, j).Virt > best.Value {
						best.To, best.Value = j, use(u, s.K, r, j).Virt
					}
				}
			}
		}
		for _, q := range inbox {
			if q.From != r {
				continue
			}
			switch s.State(r, q.To) {
			case Shadow:
				s.Reactivate(r, q.To)
			case Inactive:
				if q.Value > best.Value || best.To < 0 {
					best = q
				}
			}
		}
		if best.To >= 0 {
			reqs = append(reqs, best)
			s.Stats.Messages++
		}
	}
	if !s.NoIndirect {
		s.markHot(u, hwm)
	}
	s.vias = s.vias[:0]
	for r := range s.K {
		if s.NoIndirect {
			break
		}
		if slices.ContainsFunc(reqs[start:], func(q Request) bool { return q.From == r }) || s.epochs-s.lastAct[r] <= s.Settle {
			continue
		}
		t, tv := -1, 0.0
		for j := range s.K {
			if d := use(u, s.K, r, j).Detour; j != r && d > tv && s.hotT[r*s.K+j] {
				t, tv = j, d
			}
		}
		if t < 0 {
			continue
		}
		if x := s.IndirectTarget(r, t); x >= 0 {
			s.lastAct[r] = s.epochs // its readings are to show the new link too
			s.inbox = append(s.inbox, Request{From: x, To: t, Value: tv})
			s.Stats.Indirect++
			s.Stats.Messages++
		}
	}
	return reqs
}

// markHot sets hotT[r·K+t] for the pairs whose recorded detours left r
// over a link above hwm.
func (s *Subnet) markHot(u []Use, hwm float64) {
	if s.hotT == nil {
		s.hotT = make([]bool, s.K*s.K)
	}
	clear(s.hotT)
	for _, v := range s.vias {
		if r, m := int(v.R), int(v.M); use(u, s.K, r, m).Util() > hwm {
			s.hotT[r*s.K+int(v.T)] = true
		}
	}
}

// RespondActivation answers activation requests: highest value first
// (then lowest sender, receiver), each ACKed if neither end has had a
// link activated in this round, NACKed otherwise. It returns the ACKed
// ones (to Complete after the ACK's delay).
func (s *Subnet) RespondActivation(reqs []Request) []Request {
	slices.SortStableFunc(reqs, func(a, b Request) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		if c := cmp.Compare(a.From, b.From); c != 0 {
			return c
		}
		return cmp.Compare(a.To, b.To)
	})
	changed := s.scratch()
	acked := reqs[:0]
	for _, q := range reqs {
		s.Stats.Messages++ // ACK or NACK
		if changed[q.From] || changed[q.To] || s.State(q.From, q.To) != Inactive {
			continue
		}
		changed[q.From], changed[q.To] = true, true
		acked = append(acked, q)
	}
	return acked
}

// scratch returns the per-router marks, all false.
func (s *Subnet) scratch() []bool {
	if s.mark == nil {
		s.mark = make([]bool, s.K)
	}
	clear(s.mark)
	return s.mark
}

// BeginActivation makes ACKed Inactive links Waking (the ACK has arrived:
// the link is switched on and comes back after its wake time). The link
// counts as activated for its routers from here (no deactivation in the
// same round).
func (s *Subnet) BeginActivation(acked []Request) {
	for _, q := range acked {
		if s.State(q.From, q.To) != Inactive {
			continue
		}
		s.set(q.From, q.To, Waking)
		s.lastAct[q.From], s.lastAct[q.To] = s.epochs, s.epochs
		s.recent[q.From], s.recent[q.To] = q.To, q.From
		s.activated[q.From], s.activated[q.To] = true, true
		s.Stats.Activations++
	}
}

// CompleteActivation makes ACKed links Active: Waking ones (back from
// off) and Inactive ones (BeginActivation and its completion at once: a
// link with no wake time), with the k−1 link-state broadcasts.
func (s *Subnet) CompleteActivation(acked []Request) {
	for _, q := range acked {
		switch s.State(q.From, q.To) {
		case Inactive:
			s.BeginActivation([]Request{q})
		case Waking:
		default:
			continue
		}
		s.set(q.From, q.To, Active)
		s.Stats.Messages += uint64(s.K - 1)
	}
}

// partition returns router r's active links (neighbours in nb, ascending)
// as Algorithm 1's candidates, with root links and (anti-oscillation) its
// most recently activated link ineligible while one of its inner links is
// above hwm/2.
func (s *Subnet) partition(u []Use, r int, hwm float64) (cand []Cand, nb []int, boundary int) {
	cand, nb = s.cand[:0], s.nb[:0]
	for j := range s.K {
		if j == r || s.State(r, j) != Active {
			continue
		}
		x := use(u, s.K, r, j)
		cand = append(cand, Cand{Util: x.Util(), MinUtil: x.Min, Eligible: !Root(r, j)})
		nb = append(nb, j)
	}
	s.cand, s.nb = cand, nb
	boundary = BoundaryFrom(cand, hwm, s.InnerMin)
	if rc := s.recent[r]; rc >= 0 {
		hot := false
		for i := range min(boundary, len(cand)) {
			hot = hot || cand[i].Util > hwm/2
		}
		if hot {
			for i, j := range nb {
				if j == rc {
					cand[i].Eligible = false
				}
			}
		}
	}
	return cand, nb, boundary
}

// DeactivationEpoch runs Algorithm 1 for every router at a
// deactivation-epoch boundary, from the epoch's uses u. A router sends no
// request if it has a shadow link or had a link activated since its last
// deactivation epoch. The requests are answered by RespondDeactivation.
func (s *Subnet) DeactivationEpoch(u []Use, hwm float64, reqs []Request) []Request {
	for r := range s.K {
		if s.shadow[r] >= 0 || s.activated[r] {
			continue
		}
		cand, nb, boundary := s.partition(u, r, hwm)
		if i := selectFrom(cand, boundary); i >= 0 {
			reqs = append(reqs, Request{From: r, To: nb[i], Value: cand[i].MinUtil})
			s.Stats.Messages++
		}
	}
	return reqs
}

// RespondDeactivation answers deactivation requests with the receivers'
// own uses u, matching links greedily so that no router gets two: the
// receivers in ascending id each ACK, among the requests from routers not
// yet matched, the one for a link outer in the receiver's own partition
// (or asked by both ends: agreed) on which it sends the least minimal
// traffic (then the lowest sender); both ends are then matched. Receivers
// with a shadow link or a link activated since their last deactivation
// epoch NACK everything, as do matched ones. It returns the ACKed
// requests (to Complete after the ACK's delay) and clears the routers'
// activated flags (a new deactivation epoch).
func (s *Subnet) RespondDeactivation(reqs []Request, u []Use, hwm float64) []Request {
	s.Stats.Messages += uint64(len(reqs)) // an ACK or a NACK each
	if s.asked == nil {
		s.asked = make([]bool, s.K*s.K)
	}
	asked := s.asked
	for _, q := range reqs {
		asked[q.From*s.K+q.To] = true
	}
	defer func() {
		for _, q := range reqs {
			asked[q.From*s.K+q.To] = false
		}
	}()
	matched := s.scratch()
	var acked []Request
	for b := range s.K {
		if matched[b] || s.shadow[b] >= 0 || s.activated[b] {
			continue
		}
		var cand []Cand
		var nb []int
		boundary := -1
		best, bestMin := -1, math.Inf(1)
		for qi, q := range reqs {
			if q.To != b || matched[q.From] || s.shadow[q.From] >= 0 || s.State(q.From, b) != Active {
				continue
			}
			if boundary < 0 {
				cand, nb, boundary = s.partition(u, b, hwm)
			}
			for i, j := range nb {
				mutual := asked[b*s.K+j]
				if j == q.From && (i >= boundary || mutual) && cand[i].Eligible && cand[i].MinUtil < bestMin {
					best, bestMin = qi, cand[i].MinUtil
				}
			}
		}
		if best >= 0 {
			q := reqs[best]
			matched[q.From], matched[b] = true, true
			acked = append(acked, q)
		}
	}
	for r := range s.K {
		s.activated[r] = false
	}
	slices.SortFunc(acked, func(a, b Request) int {
		if c := cmp.Compare(a.From, b.From); c != 0 {
			return c
		}
		return cmp.Compare(a.To, b.To)
	})
	return acked
}

// CompleteDeactivation puts ACKed links into Shadow (the ACK has
// arrived); they become Inactive at Expire unless reactivated.
func (s *Subnet) CompleteDeactivation(acked []Request) {
	for _, q := range acked {
		a, b := q.From, q.To
		if s.State(a, b) != Active || s.shadow[a] >= 0 || s.shadow[b] >= 0 {
			continue
		}
		s.set(a, b, Shadow)
		s.shadow[a], s.shadow[b] = b, a
		s.Stats.Deactivations++
		s.Stats.Messages += uint64(s.K - 1)
	}
}

// Expire gates the link a–b if it is still Shadow (one deactivation epoch
// after CompleteDeactivation) and reports whether it did.
func (s *Subnet) Expire(a, b int) bool {
	if s.State(a, b) != Shadow {
		return false
	}
	s.set(a, b, Inactive)
	s.shadow[a], s.shadow[b] = -1, -1
	s.Stats.Gated++
	return true
}

// LowerBound is paper 004 §VI-A's lower bound on the active-link ratio
// C_on/C of a 1-D flattened butterfly of r routers and n nodes under
// uniform random traffic at injection rate l (a fraction of the link
// rate): the traffic crossing the bisection, n·l/2 · (x + 2(1 − x)) with
// x = C_on/C the share routed minimally (the rest takes two hops), fits
// the bandwidth of the active links across it, r²/2 · x; and C_on ≥ r − 1
// (the root star). Solved: x ≥ 2·n·l / (r² + n·l).
func LowerBound(n, r int, l float64) float64 {
	if r < 2 || n <= 0 || !(l >= 0) {
		return 0
	}
	c := float64(r * (r - 1) / 2)
	nl := float64(n) * l
	return min(1, max(float64(r-1)/c, 2*nl/(float64(r*r)+nl)))
}
