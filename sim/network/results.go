package network

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/sim/eee"
)

// Latency summarises packet latencies in seconds. Mean and Max are exact.
// P50 and P99 are order statistics (the ⌊q·(n−1)⌋-th smallest latency,
// from 0): exact for runs of up to latencyExactCap packets; beyond that,
// the lower bound of the log-linear bucket holding that rank (clamped to
// the observed minimum), PctRelError wide at most.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	// PctRelError bounds the relative error of P50 and P99: 0 when they
	// are exact.
	PctRelError float64 `json:"percentile_rel_error"`
}

// latencyExactCap is how many packet latencies a run keeps for exact
// percentiles (8 bytes each: 32 MiB at most).
const latencyExactCap = 1 << 22

// latencyOf records a delivered packet's latency (ps).
func (n *Network) latencyOf(d int64) {
	n.latency.add(d)
	if n.latInexact {
		return
	}
	if len(n.latSamples) == latencyExactCap {
		n.latSamples, n.latInexact = nil, true // bucketed percentiles from here on
		return
	}
	n.latSamples = append(n.latSamples, d)
}

// latencySummary computes the latency figures (sorting the kept samples).
func (n *Network) latencySummary() Latency {
	h := n.latency
	l := Latency{Mean: h.sum.float() / float64(h.n) * psToS, Max: float64(h.max) * psToS}
	if n.latInexact {
		l.P50 = float64(max(h.quantile(0.5), h.min)) * psToS
		l.P99 = float64(max(h.quantile(0.99), h.min)) * psToS
		l.PctRelError = 1.0 / (1 << subBits)
		return l
	}
	s := n.latSamples
	slices.Sort(s)
	at := func(q float64) float64 { return float64(s[int(q*float64(len(s)-1))]) * psToS }
	l.P50, l.P99 = at(0.5), at(0.99)
	return l
}

// Energy in joules over the run (docs/model.md §3.3): network = links + switches.
type Energy struct {
	Links    float64 `json:"links"`
	Switches float64 `json:"switches"`
	Network  float64 `json:"network"`
	Nodes    float64 `json:"nodes"`
	Total    float64 `json:"total"`
}

// StateFraction is the share of link-time spent in each state; transition
// is going down plus going up.
type StateFraction struct {
	Wake       float64 `json:"wake"`
	Transition float64 `json:"transition"`
	FastWake   float64 `json:"fast_wake"`
	DeepSleep  float64 `json:"deep_sleep"`
	// Off: switched off by consolidation (model §1.3).
	Off float64 `json:"off,omitempty"`
}

// Result is the deterministic summary of a run (docs/model.md §4).
type Result struct {
	ExecTimeS         float64       `json:"exec_time_s"`
	Packets           uint64        `json:"packets"`
	Messages          uint64        `json:"messages"`
	LatencyS          Latency       `json:"latency_s"`
	EnergyJ           Energy        `json:"energy_j"`
	LinkStateFraction StateFraction `json:"link_state_fraction"`
	// Transitions counts power-state changes of links (going down, going
	// up, hybrid Fast Wake → Deep Sleep); Wakeups the going-up ones.
	Transitions uint64 `json:"transitions"`
	Wakeups     uint64 `json:"wakeups"`
	// Hits and Misses are the ports' idle-period outcomes (docs/model.md §2.3).
	Hits      uint64 `json:"hits"`
	Misses    uint64 `json:"misses"`
	PFCPauses uint64 `json:"pfc_pauses"`
	Dropped   uint64 `json:"dropped"` // always 0: PFC is lossless
	// NodeUtilisation is the nodes' mean compute utilisation (docs/model.md §3.3):
	// from the workload's replay (Power.NodeUtilisation without one).
	NodeUtilisation float64 `json:"node_utilisation"`
	Events          uint64  `json:"events"`
	Links           int     `json:"links"`
	Ports           int     `json:"ports"`
	// EndToEnd reports the end-to-end bound's gate, when it is on.
	EndToEnd *EndToEndResult `json:"end_to_end,omitempty"`
	// Ranks reports where a workload's messages went, when ranks share
	// nodes: between ranks on one node, or through the network.
	RankTraffic *RankTraffic `json:"rank_traffic,omitempty"`
	// PowarModel is paper 002's normalised power model of the run, with
	// routing POWAR or POWAR.Report (routing.go).
	PowarModel *PowarModel `json:"powar_model,omitempty"`
	// PowarRouting counts POWAR's decisions, with routing POWAR.
	PowarRouting *POWARRouting `json:"powar_routing,omitempty"`
	// PowarNonMinimal counts POWAR's non-minimal decisions on the Megafly
	// (routing.powar.non_minimal).
	PowarNonMinimal *POWARNonMinimal `json:"powar_nonminimal,omitempty"`
	// Consolidation reports TCEP (power.consolidation: tcep).
	Consolidation *Consolidation `json:"consolidation,omitempty"`
	// UGAL reports routing ugal's detours.
	UGAL *UGALRouting `json:"ugal,omitempty"`
	// Ledger sums the ports' delay ledgers, when they run under one.
	Ledger *LedgerResult `json:"ledger,omitempty"`
}

// RankTraffic splits a workload's messages between the intra-node path
// and the network (workload.Stats).
type RankTraffic struct {
	IntraMessages   int64 `json:"intra_node_messages"`
	IntraBytes      int64 `json:"intra_node_bytes"`
	NetworkMessages int64 `json:"network_messages"`
	NetworkBytes    int64 `json:"network_bytes"`
}

// EndToEndResult is what the end-to-end bound's gate saw (eee.Gate).
type EndToEndResult struct {
	// StallS is the union of the wake-up stalls of all links: the bound
	// on the application's slowdown the gate enforced.
	StallS float64 `json:"stall_s"`
	// BudgetS is Rate × the run's time, HeadroomS the reserve.
	BudgetS   float64 `json:"budget_s"`
	HeadroomS float64 `json:"headroom_s"`
	// Closures counts the times the gate closed (and woke every low link),
	// the first at time 0; Stalls the stalls it was charged.
	Closures uint64 `json:"closures"`
	Stalls   uint64 `json:"stalls"`
}

// Perf is the part of a run's report that differs from run to run.
type Perf struct {
	WallS        float64 `json:"wall_s"`
	EventsPerS   float64 `json:"events_per_s"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	// Memory is the model's memory by component at the end of the run.
	Memory Memory `json:"memory"`
	// Threads is how many goroutines ran the events (engine.threads,
	// docs/simulator.md "Parallel runs"); Sequential, when more were asked
	// for, says why the run used one, or went on on one.
	Threads    int    `json:"threads"`
	Sequential string `json:"sequential,omitempty"`
}

const psToS = 1e-12

// Result returns the run's summary; call it after Run.
func (n *Network) Result() Result {
	end := n.endTime
	r := Result{
		ExecTimeS: float64(end) * psToS,
		Packets:   n.delivered,
		Messages:  n.msgsDone,
		PFCPauses: n.pauses,
		Dropped:   n.overflows,
		Events:    n.eng.Events(),
		Links:     n.nLinks,
		Ports:     len(n.ports),
	}
	if n.latency.n > 0 {
		r.LatencyS = n.latencySummary()
	}
	if n.wl.rep != nil && n.wl.stats.IntraMessages > 0 {
		st := &n.wl.stats
		r.RankTraffic = &RankTraffic{IntraMessages: st.IntraMessages, IntraBytes: st.IntraBytes, NetworkMessages: st.Messages, NetworkBytes: st.Bytes}
	}
	if g := n.p.EEE.Gate; g != nil {
		b := n.p.EndToEnd.Bound
		r.EndToEnd = &EndToEndResult{
			StallS: float64(g.Spent()) * psToS, BudgetS: b / (1 + b) * float64(end) * psToS,
			HeadroomS: float64(g.Headroom()) * psToS, Closures: g.Closures, Stalls: g.Charged,
		}
	}
	// State times summed over links overflow int64 (about 106 days of
	// link-time): they are summed in 128 bits, exactly.
	var times [eee.NumStates]uint128
	for i := range n.links {
		l := &n.links[i]
		r.EnergyJ.Links += n.linkShare(i)
		for s, t := range l.Times {
			times[s].add(uint64(t))
		}
		r.Transitions += uint64(l.Downs) + uint64(l.Ups) + uint64(l.Deepens)
		r.Wakeups += uint64(l.Ups)
	}
	var total uint128
	for _, t := range times {
		total.add128(t)
	}
	if !total.zero() {
		frac := func(states ...eee.State) float64 {
			var sum uint128
			for _, s := range states {
				sum.add128(times[s])
			}
			return sum.ratio(total)
		}
		r.LinkStateFraction = StateFraction{
			Wake:       frac(eee.Wake),
			Transition: frac(eee.GoingDown, eee.GoingUp),
			FastWake:   frac(eee.LowFastWake),
			DeepSleep:  frac(eee.LowDeepSleep),
			Off:        frac(eee.Off),
		}
	}
	secs := float64(end) * psToS
	pw := n.p.Power
	r.EnergyJ.Switches = float64(n.t.Switches()) * pw.SwitchW * secs
	r.EnergyJ.Network = r.EnergyJ.Links + r.EnergyJ.Switches
	r.EnergyJ.Nodes, r.NodeUtilisation = n.nodeEnergy(secs)
	r.EnergyJ.Total = r.EnergyJ.Network + r.EnergyJ.Nodes
	if n.pw != nil || n.p.POWAR.Report {
		r.PowarModel = n.powarModel(secs, r.NodeUtilisation)
	}
	if n.pw != nil {
		st := n.pw.stats
		if st.Adaptive > 0 {
			st.MeanSelectable = float64(st.selSum) / float64(st.Adaptive)
		}
		r.PowarRouting = &st
		r.PowarNonMinimal = n.powarNonMinimal()
	}
	switch {
	case n.p.TCEP.Enabled:
		r.Consolidation = n.consolidation(end)
	case n.tc != nil: // routing ugal
		r.UGAL = &UGALRouting{NonMinimal: n.tc.nonMinimal}
	}
	var led LedgerResult
	for i := range n.ports {
		if c := n.ports[i].ctl; c != nil {
			st := c.Figures(toDur(end))
			r.Hits += st.Hits
			r.Misses += st.Misses
			if l, ok := c.LedgerStats(toDur(end)); ok {
				led.add(&l)
			}
		}
	}
	if led.Ports > 0 {
		r.Ledger = &led
	}
	return r
}

// LedgerResult sums the ports' delay ledgers (controller.LedgerStats;
// docs/predictors.md "The delay ledger").
type LedgerResult struct {
	// Ports counts the ports whose controller ran under a ledger.
	Ports uint64 `json:"ports"`
	// SpentS and BudgetS sum the ports' spent delay and budgets.
	SpentS  float64 `json:"spent_s"`
	BudgetS float64 `json:"budget_s"`
	// WorstRatio is the largest spent / budget of a port.
	WorstRatio float64 `json:"worst_ratio"`
	// OverGuarantee counts ports whose spent delay exceeded budget +
	// reserve: 0 by the ledger's guarantee.
	OverGuarantee uint64 `json:"over_guarantee"`
	// Held counts idle periods the ledger kept awake longer than asked.
	Held uint64 `json:"held"`
}

func (r *LedgerResult) add(l *controller.LedgerStats) {
	r.Ports++
	r.SpentS += l.Spent.Seconds()
	r.BudgetS += l.Budget.Seconds()
	r.WorstRatio = max(r.WorstRatio, l.Ratio())
	if l.Spent > l.Budget+l.Reserve {
		r.OverGuarantee++
	}
	r.Held += l.Held
}

// Perf returns the run's wall-clock figures.
func (n *Network) Perf() Perf {
	p := Perf{WallS: n.wall.Seconds(), PeakRSSBytes: peakRSS(), Memory: n.Memory(), Threads: n.Threads()}
	if n.p.Threads > 1 && len(n.parts) == 0 {
		p.Sequential = n.ParallelBlocker()
	}
	if n.fellBack {
		p.Sequential = fmt.Sprintf("other processes took the cores: went on on one thread from %s simulated (docs/simulator.md \"Parallel runs\")", time.Duration(n.fellBackAt/1000))
	}
	if p.WallS > 0 {
		p.EventsPerS = float64(n.eng.Events()) / p.WallS
	}
	return p
}

// LinkEnergy is link i's energy: Σ over states of time × the power of its
// two ports (docs/model.md §1.1, §3.3: each end draws its own state's power; per
// link both ends are always in the same state, per direction each port
// draws its transmitter's).
func (n *Network) LinkEnergy(i int) float64 {
	if n.p.EEE.LPI == eee.PerDirection {
		return n.PortEnergy(2*i) + n.PortEnergy(2*i+1)
	}
	return 2 * n.PortEnergy(i)
}

// linkShare is the energy of n.links[i]: a whole link's, or one port's
// (per direction): Σ over states of time × the power of its ends in that
// state, less, when an idle awake port draws a fraction f < 1 of the
// awake power (model §1.3), (1 − f) × the awake power × the time its
// ends were awake without transmitting.
func (n *Network) linkShare(i int) float64 {
	ends := 2.0
	if n.p.EEE.LPI == eee.PerDirection {
		ends = 1
	}
	var e float64
	l := &n.links[i]
	for s, t := range l.Times {
		e += float64(t) * psToS * n.p.Power.StateW(eee.State(s))
	}
	e *= ends
	if f := n.p.Power.IdleFraction; f > 0 && f < 1 && n.txPS != nil {
		idle := ends*float64(l.Times[eee.Wake]) - float64(min(n.txPS[i], int64(ends)*l.Times[eee.Wake]))
		e -= (1 - f) * n.p.Power.WakeW * idle * psToS
	}
	return e
}

// PortEnergy is the energy of one port of n.links[i] (a link, or per
// direction the port whose transmitter it is): the link's energy, half of
// it per link.
func (n *Network) PortEnergy(i int) float64 {
	if n.p.EEE.LPI == eee.PerDirection {
		return n.linkShare(i)
	}
	return n.linkShare(i) / 2
}

// PortRow is one port's line of ports.csv.
type PortRow struct {
	Port       int
	Kind       string // nic or switch
	Device     int    // node or switch index
	Local      int    // port number on the switch (0 for a NIC)
	Class      string // nic or the switch's role
	Link       int    // −1 for an unconnected port
	StateS     [eee.NumStates]float64
	EnergyJ    float64 // this end's energy: half the link's
	Transition uint64
	Wakeups    uint64
	Sent       uint64
	Hits       uint64
	Misses     uint64
	MeanPDTNs  float64
	FinalPDTNs float64
	PredBytes  int
}

// PortCSVHeader is the header line of ports.csv.
const PortCSVHeader = "port,kind,device,local,class,link,wake_s,going_down_s,fast_wake_s,deep_sleep_s,going_up_s,off_s,energy_j,transitions,wakeups,packets_sent,hits,misses,mean_pdt_ns,final_pdt_ns,predictor_bytes"

// CSV formats the row.
func (r *PortRow) CSV() string { return string(r.AppendCSV(nil)) }

// AppendCSV appends the row's CSV line (without the newline) to b: the
// same bytes as CSV, without garbage (ports.csv of a million-node network
// has five million rows).
func (r *PortRow) AppendCSV(b []byte) []byte {
	sep := func(b []byte) []byte { return append(b, ',') }
	g := func(b []byte, v float64) []byte { return strconv.AppendFloat(sep(b), v, 'g', 12, 64) }
	b = strconv.AppendInt(b, int64(r.Port), 10)
	b = append(sep(b), r.Kind...)
	b = strconv.AppendInt(sep(b), int64(r.Device), 10)
	b = strconv.AppendInt(sep(b), int64(r.Local), 10)
	b = append(sep(b), r.Class...)
	b = strconv.AppendInt(sep(b), int64(r.Link), 10)
	for _, v := range r.StateS {
		b = g(b, v)
	}
	b = g(b, r.EnergyJ)
	for _, v := range []uint64{r.Transition, r.Wakeups, r.Sent, r.Hits, r.Misses} {
		b = strconv.AppendUint(sep(b), v, 10)
	}
	b = appendExactNs(sep(b), r.MeanPDTNs)
	b = appendExactNs(sep(b), r.FinalPDTNs)
	return strconv.AppendInt(sep(b), int64(r.PredBytes), 10)
}

// appendExactNs appends a t_PDT in ns with every digit (10000050, not
// 1e+07); +Inf stands for a port that never sleeps.
func appendExactNs(b []byte, v float64) []byte {
	if math.IsInf(v, 1) {
		return append(b, "+Inf"...)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// Ports calls f with every cabled port's row, in port order. A port whose
// controller was never built reports a new controller's figures, computed
// once: building one per unused port would take more memory than the run
// (most ports of a large network at low load never send).
func (n *Network) Ports(f func(*PortRow)) {
	var row PortRow
	var unused controller.Stats // a new controller's, once computed
	haveUnused := false
	for i := range n.ports {
		pt := &n.ports[i]
		if pt.link < 0 {
			continue
		}
		l := &n.links[pt.link]
		li := int(pt.link)
		if n.p.EEE.LPI == eee.PerDirection {
			li /= 2
		}
		row = PortRow{Port: i, Class: n.classes[pt.class], Link: li, Sent: pt.sent,
			Transition: uint64(l.Downs) + uint64(l.Ups) + uint64(l.Deepens), Wakeups: uint64(l.Ups)}
		if pt.sw < 0 {
			row.Kind, row.Device = "nic", i
		} else {
			row.Kind, row.Device, row.Local = "switch", int(pt.sw), int(pt.local)
		}
		for s, t := range l.Times {
			row.StateS[s] = float64(t) * psToS
		}
		row.EnergyJ = n.PortEnergy(int(pt.link))
		row.FinalPDTNs = math.Inf(1)
		row.MeanPDTNs = math.Inf(1)
		if n.p.EEE.Mode != eee.AlwaysOn {
			var st controller.Stats
			switch {
			case pt.ctl != nil:
				st = pt.ctl.Figures(toDur(n.endTime))
			case haveUnused:
				st = unused
			default:
				st = n.newCtl().Figures(toDur(n.endTime))
				unused, haveUnused = st, true
			}
			row.Hits, row.Misses = st.Hits, st.Misses
			row.MeanPDTNs = float64(st.Mean)
			row.FinalPDTNs = float64(st.Current)
			row.PredBytes = st.StateBytes
		}
		f(&row)
	}
}

// IdleRow is one line of idle_hist.csv (docs/model.md §4, paper 000 Fig. 1):
// fixed-width bins up to the class's 99th percentile, then one row for
// the rest; idle_share is the bin's share of the class's idle time and
// cum_idle_share its running sum.
type IdleRow struct {
	Class     string
	Bin       int
	LoNs      float64
	HiNs      float64
	Count     uint64
	IdleS     float64
	Share     float64
	CumShare  float64
	CumCountP float64
}

// IdleCSVHeader is the header line of idle_hist.csv.
const IdleCSVHeader = "class,bin,lo_ns,hi_ns,count,idle_s,idle_share,cum_idle_share,cum_count_share"

// CSV formats the row.
func (r *IdleRow) CSV() string {
	return fmt.Sprintf("%s,%d,%.6g,%.6g,%d,%.12g,%.6g,%.6g,%.6g",
		r.Class, r.Bin, r.LoNs, r.HiNs, r.Count, r.IdleS, r.Share, r.CumShare, r.CumCountP)
}

// IdleHistogram returns idle_hist.csv's rows with bins fixed-width bins up
// to the 99th percentile, for "all" ports and per class. Log-linear
// buckets are assigned to the fixed bin holding their lower bound.
func (n *Network) IdleHistogram(bins int) []IdleRow {
	if bins <= 0 {
		bins = 50
	}
	all := newLogHist()
	for _, h := range n.idle {
		all.merge(h)
	}
	var rows []IdleRow
	emit := func(class string, h *logHist) {
		if h.n == 0 {
			return
		}
		p99 := h.quantile(0.99)
		width := float64(max(p99, 1)) / float64(bins)
		out := make([]IdleRow, bins+1)
		for b, c := range h.counts {
			if c == 0 {
				continue
			}
			lo := bucketLow(b)
			i := bins
			if lo < p99 || (p99 == 0 && lo == 0) {
				i = min(bins-1, int(float64(lo)/width))
			}
			out[i].Count += c
			out[i].IdleS += h.sums[b].float() * psToS
		}
		var cum, cumN float64
		totalS := h.sum.float() * psToS
		for i := range out {
			r := &out[i]
			r.Class, r.Bin = class, i
			r.LoNs = float64(i) * width / 1000
			r.HiNs = float64(i+1) * width / 1000
			if i == bins {
				r.HiNs = float64(h.max) / 1000
			}
			if totalS > 0 {
				r.Share = r.IdleS / totalS
			}
			cum += r.Share
			cumN += float64(r.Count)
			r.CumShare = cum
			r.CumCountP = cumN / float64(h.n)
		}
		rows = append(rows, out...)
	}
	emit("all", all)
	for c, h := range n.idle {
		emit(n.classes[c], h)
	}
	if n.portIdle != nil {
		emit(idlePortClass(n.histPort), n.portIdle)
	}
	return rows
}

// TrackIdlePort gives port i (its index in ports.csv) its own idle-period
// histogram, reported as class "port<i>" in idle_hist.csv and
// idle_log.csv (paper 000 Fig. 1 is the histogram of one port). Call it
// before Run.
func (n *Network) TrackIdlePort(i int) error {
	if i < 0 || i >= len(n.ports) || n.ports[i].link < 0 {
		return fmt.Errorf("output.idle_hist_port: %d is not a cabled port (0…%d; see ports.csv)", i, len(n.ports)-1)
	}
	n.histPort, n.portIdle = int32(i), newLogHist()
	return nil
}

// idlePortClass is the class name of port i's own idle histogram.
func idlePortClass(i int32) string { return fmt.Sprintf("port%d", i) }

// IdleLogCSVHeader is the header line of idle_log.csv.
const IdleLogCSVHeader = "class,lo_ns,hi_ns,count,idle_s"

// IdleLog calls f with every non-empty bucket of the exact log-linear
// idle-period histograms (buckets ≤ 1/64 of their value wide) of all
// ports and of the tracked port, as idle_log.csv lines: for shares below
// any threshold (e.g. t_w of Fast Wake) without the coarse fixed bins.
func (n *Network) IdleLog(f func(line string)) {
	all := newLogHist()
	for _, h := range n.idle {
		all.merge(h)
	}
	emit := func(class string, h *logHist) {
		for b, c := range h.counts {
			if c == 0 {
				continue
			}
			hi := bucketLow(b + 1)
			f(fmt.Sprintf("%s,%.6g,%.6g,%d,%.12g", class, float64(bucketLow(b))/1000, float64(hi)/1000, c, h.sums[b].float()*psToS))
		}
	}
	emit("all", all)
	if n.portIdle != nil {
		emit(idlePortClass(n.histPort), n.portIdle)
	}
}
