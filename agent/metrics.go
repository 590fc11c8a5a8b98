package agent

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// gapBuckets are the upper bounds (seconds) of lpictl_idle_gap_seconds:
// ×4 from 100 ns (400G link gaps) to 6.7 s (idle host links).
var gapBuckets = prometheus.ExponentialBuckets(100e-9, 4, 14)

const ns = "lpictl"

var (
	portLabels = []string{"device", "backend"}

	descAgentInfo    = prometheus.NewDesc(ns+"_agent_info", "The agent's version, mode and backend (always 1).", []string{"version", "mode", "backend"}, nil)
	descAgentPorts   = prometheus.NewDesc(ns+"_agent_ports", "Ports the agent controls.", nil, nil)
	descAgentReady   = prometheus.NewDesc(ns+"_agent_ready", "1 while the decision loop runs.", nil, nil)
	descReloads      = prometheus.NewDesc(ns+"_agent_reloads_total", "Configuration reloads (SIGHUP) by result.", []string{"result"}, nil)
	descRestores     = prometheus.NewDesc(ns+"_agent_restores_total", "Restorations of original EEE settings by result.", []string{"result"}, nil)
	descReloadOK     = prometheus.NewDesc(ns+"_config_last_reload_successful", "1 if the last configuration reload (SIGHUP) succeeded, or none was tried; 0 if it failed.", nil, nil)
	descReloadAt     = prometheus.NewDesc(ns+"_config_last_reload_success_timestamp_seconds", "When the configuration was last loaded successfully (start or reload), in seconds since the Unix epoch.", nil, nil)
	descTickDuration = prometheus.NewDesc(ns+"_agent_round_duration_seconds", "Duration of the last decision round over all ports.", nil, nil)

	descPortInfo     = prometheus.NewDesc(ns+"_port_info", "A controlled port: driver, observation method, firmware version (ethtool drvinfo) and the link partner's advertised EEE modes (comma-separated; \"\" if unknown or none) (always 1).", []string{"device", "backend", "driver", "observation", "firmware", "peer_eee_modes"}, nil)
	descActuation    = prometheus.NewDesc(ns+"_port_actuation_supported", "1 if the port's tx LPI timer can be set.", portLabels, nil)
	descEEEEnabled   = prometheus.NewDesc(ns+"_eee_enabled", "EEE administratively enabled (advertised).", portLabels, nil)
	descEEEActive    = prometheus.NewDesc(ns+"_eee_active", "EEE negotiated on the current link.", portLabels, nil)
	descTxLPIEnabled = prometheus.NewDesc(ns+"_eee_tx_lpi_enabled", "The MAC may assert tx LPI.", portLabels, nil)
	descTxLPITimer   = prometheus.NewDesc(ns+"_eee_tx_lpi_timer_seconds", "The port's tx LPI timer as last read (the t_PDT in force on the port).", portLabels, nil)
	descPDT          = prometheus.NewDesc(ns+"_pdt_seconds", "t_PDT the controller decided (applied in enforce mode, would-be in observe mode).", portLabels, nil)
	descPDTRec       = prometheus.NewDesc(ns+"_pdt_recommended_seconds", "The predictor's last raw answer, before register rounding, hysteresis and rate limits.", portLabels, nil)
	descHold         = prometheus.NewDesc(ns+"_hybrid_hold_seconds", "Hybrid mode: time in Fast Wake before Deep Sleep the agent set on a port with a hold register (emulated ports); +Inf: never deeper.", portLabels, nil)
	descPDTMean      = prometheus.NewDesc(ns+"_pdt_mean_seconds", "Time-weighted mean of the decided t_PDT since the port was selected.", portLabels, nil)
	descPredInfo     = prometheus.NewDesc(ns+"_predictor_info", "The port's predictor (always 1).", []string{"device", "backend", "predictor", "strategy", "bound"}, nil)
	descPredBytes    = prometheus.NewDesc(ns+"_predictor_state_bytes", "Storage the predictor's state needs in hardware (docs/model.md §2.2).", portLabels, nil)
	descIdle         = prometheus.NewDesc(ns+"_idle_periods_total", "Idle periods observed.", portLabels, nil)
	descHits         = prometheus.NewDesc(ns+"_idle_hits_total", "Idle periods that ended before t_PDT expired (no wake-up).", portLabels, nil)
	descMisses       = prometheus.NewDesc(ns+"_idle_misses_total", "Idle periods that outlasted t_PDT (the port slept and paid a wake-up).", portLabels, nil)
	descDecisions    = prometheus.NewDesc(ns+"_decisions_total", "Predictor consultations.", portLabels, nil)
	descPDTChanges   = prometheus.NewDesc(ns+"_pdt_changes_total", "Changes of the decided t_PDT.", portLabels, nil)
	descHeld         = prometheus.NewDesc(ns+"_pdt_held_total", "New answers held back, by reason (hysteresis, rate_limit).", []string{"device", "backend", "reason"}, nil)
	descClamps       = prometheus.NewDesc(ns+"_pdt_clamps_total", "Answers cut to a range, by stage (register: configured/driver limits; driver: the driver's own fit).", []string{"device", "backend", "stage"}, nil)
	descEEEChanges   = prometheus.NewDesc(ns+"_eee_changes_total", "tx LPI timer writes to the port.", portLabels, nil)
	descErrors       = prometheus.NewDesc(ns+"_errors_total", "Errors by kind (observe, eee_read, counters, apply, not_supported, state, restore, external_change).", []string{"device", "backend", "kind"}, nil)
	descSettingsChg  = prometheus.NewDesc(ns+"_port_settings_changed", "1 while the port's EEE settings (tx LPI timer, tx LPI enabled) differ from the originals lpictl recorded before its first change; 0 otherwise.", portLabels, nil)
	descQuarantined  = prometheus.NewDesc(ns+"_port_quarantined", "1 if the port is quarantined; reason: flap (repeated link flaps after changes), harm (errors or drops rose after a change), \"\" when not quarantined.", []string{"device", "backend", "reason"}, nil)
	descBackoff      = prometheus.NewDesc(ns+"_port_backoff_seconds", "Remaining backoff before the next change may be applied.", portLabels, nil)
	descFlaps        = prometheus.NewDesc(ns+"_link_flaps_total", "Carrier flaps that followed a change.", portLabels, nil)
	descCarrier      = prometheus.NewDesc(ns+"_carrier_changes_total", "Carrier transitions seen since the port was opened.", portLabels, nil)
	descLPITime      = prometheus.NewDesc(ns+"_lpi_time_seconds_total", "Time the port spent in low power (where the driver or simulator reports it).", portLabels, nil)
	descLPIEntries   = prometheus.NewDesc(ns+"_lpi_entries_total", "Entries into low power (where the driver reports them).", portLabels, nil)
	descGapHist      = prometheus.NewDesc(ns+"_idle_gap_seconds", "Idle gaps of the port's transmit side.", portLabels, nil)

	// The delay budget (budget.go, docs/agent.md "The delay budget"):
	// levels of an account that restarts with the port's controller, so
	// gauges; the counts are counters.
	descBudget         = prometheus.NewDesc(ns+"_port_budget_seconds", "Delay budget B = l × T: the wake-up delay the port's packets may have waited since its controller started (l = bound × hop factor).", ledgerLabels, nil)
	descBudgetSpent    = prometheus.NewDesc(ns+"_port_budget_spent_seconds", "Delay spent S: what the packets that ended the port's idle periods waited for wake-ups since its controller started (a miss not measured counts as the reserve).", ledgerLabels, nil)
	descBudgetReserve  = prometheus.NewDesc(ns+"_port_budget_reserve_seconds", "The ledger's reserve c: the largest delay one more miss can add (controller.miss_cost).", ledgerLabels, nil)
	descBudgetRate     = prometheus.NewDesc(ns+"_port_budget_rate", "l: the delay the port may add per second of time (bound × hop factor).", ledgerLabels, nil)
	descBudgetRatio    = prometheus.NewDesc(ns+"_port_budget_ratio", "S / B (0 while B is 0).", ledgerLabels, nil)
	descBudgetHeld     = prometheus.NewDesc(ns+"_port_budget_held_total", "Idle periods the ledger kept the port awake longer than its predictor asked (per-interval ledger: periods decided in deficit).", ledgerLabels, nil)
	descBudgetHolds    = prometheus.NewDesc(ns+"_port_budget_hold_intervals_total", "Decision intervals for which the agent held the port awake (tx LPI timer at its largest) because the ledger was in deficit (enforcement=interval).", ledgerLabels, nil)
	descBudgetOverruns = prometheus.NewDesc(ns+"_port_budget_overruns_total", "Charges after which S exceeded B (only a miss costlier than the reserve, or a per-interval ledger, can cause one).", ledgerLabels, nil)
	descBudgetUnmeas   = prometheus.NewDesc(ns+"_port_budget_unmeasured_total", "Misses whose delay the port could not measure, charged at the reserve.", ledgerLabels, nil)
)

// ledgerLabels: enforcement is who holds the port to its budget: port (its
// own program, per idle period), interval (the agent, per decision
// interval) or observe (accounted, nothing applied).
var ledgerLabels = []string{"device", "backend", "enforcement"}

// errorKinds are the kinds of lpictl_errors_total (all exported, 0 or not).
var errorKinds = []string{"apply", "counters", "eee_read", "external_change", "hold", "not_supported", "observe", "restore", "state"}

// collector exports the agent's state at scrape time.
type collector struct{ a *Agent }

func newRegistry(a *Agent) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	// go_build_info (path, version, checksum of the main module, as the
	// binary says) beside lpictl_agent_info (the version the build was
	// stamped with, the mode and the backend, which the dashboard uses).
	reg.MustRegister(collector{a},
		collectors.NewBuildInfoCollector(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAgentInfo, descAgentPorts, descAgentReady, descReloads, descRestores,
		descReloadOK, descReloadAt, descTickDuration, descPortInfo, descActuation, descEEEEnabled, descEEEActive, descTxLPIEnabled, descTxLPITimer,
		descPDT, descPDTRec, descHold, descPDTMean, descPredInfo, descPredBytes, descIdle, descHits, descMisses, descDecisions,
		descPDTChanges, descHeld, descClamps, descEEEChanges, descErrors, descSettingsChg, descQuarantined, descBackoff, descFlaps,
		descCarrier, descLPITime, descLPIEntries, descGapHist, descEstEnergy, descEstDelay, descEstLowPower,
		descBudget, descBudgetSpent, descBudgetReserve, descBudgetRate, descBudgetRatio, descBudgetHeld, descBudgetHolds,
		descBudgetOverruns, descBudgetUnmeas} {
		ch <- d
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	a := c.a
	a.mu.Lock()
	defer a.mu.Unlock()
	be := a.backend.Name()
	gauge(ch, descAgentInfo, 1, a.opts.Version, string(a.cfg.Mode), be)
	gauge(ch, descAgentPorts, float64(len(a.ports)))
	gauge(ch, descAgentReady, b2f(a.ready.Load()))
	counter(ch, descReloads, float64(a.reloads[0]), "success")
	counter(ch, descReloads, float64(a.reloads[1]), "failure")
	counter(ch, descRestores, float64(a.restore[0]), "success")
	counter(ch, descRestores, float64(a.restore[1]), "failure")
	gauge(ch, descReloadOK, b2f(a.reloadOK))
	gauge(ch, descReloadAt, float64(a.reloadAt.UnixNano())/1e9)
	gauge(ch, descTickDuration, a.tickDur.Seconds())
	now := a.backend.Now()
	for _, name := range a.sortedNames() {
		a.collectPort(ch, name, a.ports[name], be, now)
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, l ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, l ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, l...)
}

// collectPort exports port name (p, of backend be) as of now.
func (a *Agent) collectPort(ch chan<- prometheus.Metric, name string, p *portState, be string, now time.Duration) {
	l := []string{name, be}
	st := p.ctl.Stats(now)
	gauge(ch, descPortInfo, 1, name, be, p.info.Driver, p.info.Observation, p.firmware, p.peerEEE)
	gauge(ch, descActuation, b2f(p.info.CanSet), l...)
	if p.eeeKnown {
		gauge(ch, descEEEEnabled, b2f(p.eee.Enabled), l...)
		gauge(ch, descEEEActive, b2f(p.eee.Active), l...)
		gauge(ch, descTxLPIEnabled, b2f(p.eee.TxLPIEnabled), l...)
		gauge(ch, descTxLPITimer, p.eee.TxLPITimer.Seconds(), l...)
	}
	gauge(ch, descPDT, st.Current.Seconds(), l...)
	gauge(ch, descPDTRec, st.Recommended.Seconds(), l...)
	if p.holdSet {
		h := p.hold.Seconds()
		if p.hold == predictor.NeverHold {
			h = math.Inf(1)
		}
		gauge(ch, descHold, h, l...)
	}
	gauge(ch, descPDTMean, st.Mean.Seconds(), l...)
	pc := p.spec.Predictor
	gauge(ch, descPredInfo, 1, name, be, string(pc.Kind), string(pc.Histogram.Strategy), formatFloat(pc.Bound))
	gauge(ch, descPredBytes, float64(st.StateBytes), l...)
	counter(ch, descIdle, float64(p.hits+p.misses), l...)
	counter(ch, descHits, float64(p.hits), l...)
	counter(ch, descMisses, float64(p.misses), l...)
	counter(ch, descDecisions, float64(st.Decisions), l...)
	counter(ch, descPDTChanges, float64(st.Changes), l...)
	counter(ch, descHeld, float64(st.Suppressed+p.heldFirstCount), name, be, "hysteresis")
	counter(ch, descHeld, float64(st.RateLimited), name, be, "rate_limit")
	counter(ch, descClamps, float64(st.Clamps), name, be, "register")
	counter(ch, descClamps, float64(p.driverClamps), name, be, "driver")
	counter(ch, descEEEChanges, float64(p.changes), l...)
	for _, k := range errorKinds {
		counter(ch, descErrors, float64(p.errors[k]), name, be, k)
	}
	gauge(ch, descSettingsChg, b2f(p.settingsChanged()), l...)
	gauge(ch, descQuarantined, b2f(p.guard.quarantined), name, be, p.guard.reason)
	gauge(ch, descBackoff, p.guard.backoffLeft(now).Seconds(), l...)
	counter(ch, descFlaps, float64(p.guard.totalFlaps), l...)
	if p.carrierKnown {
		counter(ch, descCarrier, float64(p.carrierSeen), l...)
	}
	if p.countersOK {
		if p.counters.LowPowerKnown {
			counter(ch, descLPITime, p.counters.LowPowerTime.Seconds(), l...)
		}
		if p.counters.LPIEntriesKnown {
			counter(ch, descLPIEntries, float64(p.counters.LPIEntries), l...)
		}
	}
	buckets := make(map[float64]uint64, len(gapBuckets))
	var cum uint64
	for i, ub := range gapBuckets {
		cum += p.hist[i]
		buckets[ub] = cum
	}
	ch <- prometheus.MustNewConstHistogram(descGapHist, p.histCount, p.histSum, buckets, l...)
	if ls := p.ledgerStats(now, st); ls != nil {
		a.collectLedger(ch, p, ls, name, be)
	}
	p.collectEstimates(ch, now)
}

// collectLedger exports the port's delay budget (budget.go).
func (a *Agent) collectLedger(ch chan<- prometheus.Metric, p *portState, ls *controller.LedgerStats, name, be string) {
	who := ledgerWho(p)
	if a.cfg.Mode != Enforce {
		who = "observe"
	}
	ll := []string{name, be, who}
	gauge(ch, descBudget, ls.Budget.Seconds(), ll...)
	gauge(ch, descBudgetSpent, ls.Spent.Seconds(), ll...)
	gauge(ch, descBudgetReserve, ls.Reserve.Seconds(), ll...)
	gauge(ch, descBudgetRate, ls.Rate, ll...)
	gauge(ch, descBudgetRatio, ls.Ratio(), ll...)
	counter(ch, descBudgetHeld, float64(ls.Held), ll...)
	counter(ch, descBudgetHolds, float64(p.holds), ll...)
	counter(ch, descBudgetOverruns, float64(ls.Overruns), ll...)
	counter(ch, descBudgetUnmeas, float64(ls.Unmeasured), ll...)
}

// Optional Port methods behind lpictl_port_info's firmware and
// peer_eee_modes labels (the hardware backend has them).
type (
	firmwarePort interface {
		Firmware(ctx context.Context) string
	}
	peerEEEPort interface{ PeerEEEModes() []string }
)

// peerModes is the label value of the link partner's EEE modes: sorted,
// comma-separated.
func peerModes(port Port) string {
	pp, ok := port.(peerEEEPort)
	if !ok {
		return ""
	}
	m := slices.Clone(pp.PeerEEEModes())
	slices.Sort(m)
	return strings.Join(m, ",")
}

// settingsChanged says whether the port's EEE settings, as last read or
// written, differ from the originals recorded before lpictl's first change
// (false when nothing was recorded: lpictl has not changed the port).
func (p *portState) settingsChanged() bool {
	if p.original == nil || !p.eeeKnown {
		return false
	}
	return p.eee.TxLPITimer != p.original.TxLPITimer || p.eee.TxLPIEnabled != p.original.TxLPIEnabled
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// handler serves /metrics, /healthz and /readyz.
func (a *Agent) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{Registry: a.reg, ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		last := a.lastTick.Load()
		limit := max(5*time.Second, 3*a.interval())
		if last != 0 && a.clock().Sub(time.Unix(0, last)) > limit {
			http.Error(w, "decision loop stalled", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !a.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	return mux
}

// NewLogger returns a slog logger writing cfg's format to w, and its level.
func NewLogger(cfg LogConfig, w io.Writer) (*slog.Logger, *slog.LevelVar) {
	lv := new(slog.LevelVar)
	lv.Set(parseLevel(cfg.Level))
	opts := &slog.HandlerOptions{Level: lv}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), lv
	}
	if toJournal(w) {
		// journald stamps every line itself.
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}
	}
	return slog.New(slog.NewTextHandler(w, opts)), lv
}

// toJournal says whether log lines written to w go to the journal: w is
// the process's stderr (or stdout) and systemd connected it to the
// journal's stream ($JOURNAL_STREAM names its device and inode).
func toJournal(w io.Writer) bool {
	var is bool
	var err error
	switch w {
	case os.Stderr:
		is, err = journal.StderrIsJournalStream()
	case os.Stdout:
		is, err = journal.StdoutIsJournalStream()
	}
	return is && err == nil
}
