package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/estimate"
)

// restoreTimeout bounds restoring every port at shutdown.
const restoreTimeout = 30 * time.Second

// Options configure an Agent.
type Options struct {
	Config  Config
	Backend Backend
	// Logger (nil = discard) and Level, which a reload updates.
	Logger *slog.Logger
	Level  *slog.LevelVar
	// Notify receives sd_notify states (nil = none), e.g.
	// func(s string) { daemon.SdNotify(false, s) } of go-systemd: READY=1
	// once running, RELOADING=1 with MONOTONIC_USEC= and then READY=1
	// around a reload, STOPPING=1, STATUS= lines, and WATCHDOG=1 pings
	// when $WATCHDOG_USEC asks for them.
	Notify func(state string)
	// Reload returns the configuration to switch to on SIGHUP.
	Reload func() (Config, error)
	// Version is reported in lpictl_agent_info.
	Version string
	// Clock is the wall clock (nil = time.Now): the log summary and the
	// rate limit of repeated warnings, the rescan interval, /healthz and
	// the once-a-second counter reads of a backend slower than real time.
	// The controllers run on the backend's clock (Backend.Now).
	Clock func() time.Time
}

// Agent runs one controller.Port per selected port of a Backend, applies
// (in enforce mode) their decisions safely and exports metrics.
type Agent struct {
	opts    Options
	backend Backend
	log     *slog.Logger
	reg     *prometheus.Registry

	mu      sync.Mutex
	cfg     Config
	ports   map[string]*portState
	traces  map[string]*portTrace // by port name, until the agent stops
	state   *StateFile
	buf     []Observation
	reloads [2]uint64 // success, failure
	// reloadOK says whether the last reload succeeded (true at start);
	// reloadAt is when the configuration was last loaded successfully.
	reloadOK bool
	reloadAt time.Time
	restore  [2]uint64 // success, failure
	tickDur  time.Duration

	status string // the last STATUS= sent

	// The log summary (logsummary.go): when it was last logged, and the
	// counts of ports removed since; limiter rate-limits repeated
	// warnings (log.repeat_interval, repeatEvery in ns).
	lastSummary time.Time
	sumPending  summaryCounts
	limiter     repeatLimiter
	repeatEvery atomic.Int64

	addr     atomic.Value // string
	ready    atomic.Bool
	lastTick atomic.Int64 // unix nanoseconds
}

// portState is everything the agent keeps about one port.
type portState struct {
	info PortInfo
	port Port
	spec PortSpec
	ctl  *controller.Port
	// hold is the hybrid hold last set (holdSet); holdBroken: the port
	// has no hold register.
	hold                time.Duration
	holdSet, holdBroken bool
	sent                func(hops int, packets uint64) // ctl.Sent (and the trace's), bound once
	guard               guard
	trace               *portTrace // nil unless trace_dir is set

	started time.Duration // backend time the port was opened
	// claimed: this agent owns the port (Claimer); foreign: why it does
	// not enforce the port any more (another owner, a timer it did not
	// write), "" while it does.
	claimed bool
	foreign string

	eee          EEEState
	eeeKnown     bool
	eeeReadAt    time.Duration
	counters     PortCounters
	countersAt   time.Duration
	countersWall time.Time // wall-clock time of the last read
	countersOK   bool
	requested    time.Duration // last t_PDT asked of the port
	hasRequested bool
	original     *Settings // recorded before the first change
	changes      uint64
	driverClamps uint64
	errors       map[string]uint64
	logged       map[string]bool // one-time warnings
	firmware     string          // lpictl_port_info's firmware label
	peerEEE      string          // … and peer_eee_modes (as of the last EEE read)
	gone         bool            // deleted or renamed: closed or followed at once
	sumLast      summaryCounts   // the counts at the last log summary

	// heldFirst is the last decision held by hysteresis against the
	// timer in force before the first write; heldFirstCount counts them.
	heldFirst      time.Duration
	heldFirstCount uint64

	// Carrier transitions since the port was opened: carrierSeen, from
	// the backend's cumulative count (last read carrierLast).
	carrierSeen  uint64
	carrierLast  uint64
	carrierKnown bool

	hist      []uint64 // idle-gap histogram, per bucket of gapBuckets
	histSum   float64
	histCount uint64

	// The port's idle periods as the agent counted them (the port's own
	// outcome in enforce mode, the decided t_PDT's in observe mode).
	hits, misses uint64

	// est estimates what EEE would save on the port (nil when estimates
	// are off or could not be set up); estLast keeps the values exported
	// last, so that its counters never go down.
	est     *estimate.Estimator
	estLast []estTotals

	// The delay budget (budget.go). portLedger: the port applies the
	// ledger itself (ledger as programmed, ledgerSet once written;
	// ledgerRead its account as last read; bounded gives the rate) and
	// the controller runs without one. holding: the agent holds the port
	// awake for the interval (the controller's ledger is in deficit).
	portLedger bool
	bounded    predictor.Bounded
	ledger     PortLedger
	ledgerSet  bool
	ledgerRead *PortLedgerStatus
	holding    bool
	holds      uint64 // intervals held
}

// New returns an agent; Run starts it.
func New(opts Options) (*Agent, error) {
	if opts.Backend == nil {
		return nil, errors.New("agent: no backend")
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	if d := opts.Config.TraceDir; d != "" {
		if err := checkTraceDir(d); err != nil {
			return nil, err
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	a := &Agent{opts: opts, backend: opts.Backend, log: opts.Logger, cfg: opts.Config, reloadOK: true, reloadAt: opts.Clock(),
		ports: map[string]*portState{}, traces: map[string]*portTrace{}, buf: make([]Observation, 1024)}
	a.lastSummary = a.reloadAt
	a.repeatEvery.Store(int64(opts.Config.Log.RepeatInterval.D()))
	a.addr.Store("")
	a.reg = newRegistry(a)
	return a, nil
}

// clock is the wall clock (Options.Clock).
func (a *Agent) clock() time.Time { return a.opts.Clock() }

// Registry is the agent's own metrics registry.
func (a *Agent) Registry() *prometheus.Registry { return a.reg }

// Addr is the metrics listener's address once Run listens ("" before).
func (a *Agent) Addr() string { return a.addr.Load().(string) }

// Ready reports whether the agent is running its loop.
func (a *Agent) Ready() bool { return a.ready.Load() }

func (a *Agent) notify(s string) {
	if a.opts.Notify != nil {
		a.opts.Notify(s)
	}
}

// Run runs the agent until ctx ends: it restores ports left changed by a
// crashed run, serves metrics, selects and opens ports, and decides every
// interval; a value on hup reloads the configuration. On return every
// changed port has been restored (unless safety.restore_on_exit is off).
func (a *Agent) Run(ctx context.Context, hup <-chan struct{}) error {
	defer a.backend.Close()
	defer a.closeState()
	if a.backend.Persistent() {
		if err := a.openState(ctx, a.cfg.Mode); err != nil {
			return err
		}
	}
	srv, err := a.serveMetrics()
	if err != nil {
		return err
	}
	defer stopServer(srv)

	if err := a.syncPorts(ctx); err != nil {
		if ctx.Err() != nil {
			return a.shutdown()
		}
		a.shutdown()
		return err
	}
	a.tick(ctx)
	a.ready.Store(true)
	a.notify(daemon.SdNotifyReady)
	a.notifyStatus()
	a.log.Info("agent running", "mode", a.cfg.Mode, "backend", a.backend.Name(),
		"ports", a.portCount(), "interval", a.cfg.Interval)

	watchdog, stopWatchdog := a.startWatchdog()
	defer stopWatchdog()
	return a.loop(ctx, hup, watchdog)
}

// closeState closes the state file, if one is open.
func (a *Agent) closeState() {
	if a.state != nil {
		a.state.Close()
	}
}

// serveMetrics starts serving /metrics, /healthz and /readyz on
// metrics.listen (no server when it is off).
func (a *Agent) serveMetrics() (*http.Server, error) {
	l := a.cfg.Metrics.Listen
	if l == MetricsOff {
		return nil, nil
	}
	if err := web.Validate(a.cfg.Metrics.WebConfigFile); err != nil {
		return nil, fmt.Errorf("metrics.web_config_file %s: %w", a.cfg.Metrics.WebConfigFile, err)
	}
	ln, err := net.Listen("tcp", l)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen %s: %w", l, err)
	}
	a.addr.Store(ln.Addr().String())
	srv := &http.Server{Handler: a.handler(), ReadHeaderTimeout: 5 * time.Second}
	// exporter-toolkit: TLS and basic auth from metrics.web_config_file,
	// read again on every connection and request.
	webFile := a.cfg.Metrics.WebConfigFile
	flags := &web.FlagConfig{WebListenAddresses: &[]string{l}, WebSystemdSocket: new(bool), WebConfigFile: &webFile}
	go func() {
		if err := web.Serve(ln, srv, flags, a.log.With("component", "metrics")); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics server", "error", err)
		}
	}()
	a.log.Info("metrics listening", "addr", ln.Addr().String(), "web_config_file", webFile)
	return srv, nil
}

// stopServer shuts the metrics server down (nil: none runs).
func stopServer(srv *http.Server) {
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}

// startWatchdog starts systemd's watchdog pings (WatchdogSec=) when
// $WATCHDOG_USEC asks for them: the first now, then one on every value of
// the returned channel (every half watchdog interval), which the decision
// loop sends, so that a stuck decision round stops the pings and systemd
// restarts the agent. Without $WATCHDOG_USEC the channel is nil. stop
// releases the ticker.
func (a *Agent) startWatchdog() (pings <-chan time.Time, stop func()) {
	wd, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		a.log.Warn("systemd watchdog: ignoring $WATCHDOG_USEC", "error", err)
		return nil, func() {}
	}
	if wd <= 0 {
		return nil, func() {}
	}
	a.notify(daemon.SdNotifyWatchdog)
	t := time.NewTicker(wd / 2)
	a.log.Info("systemd watchdog enabled", "timeout", wd, "ping_every", wd/2)
	return t.C, t.Stop
}

// loop decides every interval until ctx ends, then shuts down; between
// rounds it pings the watchdog and reloads the configuration on hup.
func (a *Agent) loop(ctx context.Context, hup <-chan struct{}, watchdog <-chan time.Time) error {
	interval := a.cfg.Interval.D()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	lastScan := a.clock()
	for {
		select {
		case <-ctx.Done():
			return a.shutdown()
		case <-watchdog:
			a.notify(daemon.SdNotifyWatchdog)
		case <-hup:
			// systemd (Type=notify-reload, or ExecReload= with
			// Type=notify) waits from RELOADING=1 for READY=1.
			a.notify(reloadingState())
			a.reload(ctx)
			if iv := a.interval(); iv != interval {
				interval = iv
				ticker.Reset(interval)
			}
			a.notify(daemon.SdNotifyReady)
			a.notifyStatus()
		case <-ticker.C:
			lastScan = a.round(ctx, lastScan)
		}
	}
}

// reloadingState is sd_notify's RELOADING=1 with MONOTONIC_USEC=, the
// CLOCK_MONOTONIC time in µs it was sent at: systemd ≥ 253 matches it
// against the reload it started (Type=notify-reload requires it), older
// ones ignore the field.
func reloadingState() string {
	s := daemon.SdNotifyReloading
	if m := strings.TrimSuffix(daemon.SdNotifyMonotonicUsec(), "\n"); m != "" {
		s += "\n" + m
	}
	return s
}

// round runs one decision round after a backend step. A port found deleted
// or renamed is closed or followed at once, not at the next rescan; the
// other ports are rescanned every ports.rescan_interval. It returns when
// the ports were last scanned.
func (a *Agent) round(ctx context.Context, lastScan time.Time) time.Time {
	if err := a.backend.Step(ctx); err != nil && ctx.Err() == nil {
		a.warnRepeat(slog.LevelWarn, "", "", "backend step failed", "error", err)
	}
	a.tick(ctx)
	if a.anyGone() || a.rescanDue(lastScan) {
		lastScan = a.clock()
		if err := a.syncPorts(ctx); err != nil && ctx.Err() == nil {
			a.warnRepeat(slog.LevelWarn, "", "", "port rescan failed", "error", err)
		}
	}
	a.notifyStatus()
	return lastScan
}

// rescanDue says whether ports.rescan_interval (if any) has passed since
// lastScan.
func (a *Agent) rescanDue(lastScan time.Time) bool {
	rs := a.rescanInterval()
	return rs > 0 && a.clock().Sub(lastScan) >= rs
}

// notifyStatus sends systemd a STATUS= line (`systemctl status` shows it)
// after a round, when it changed: "N ports, M enforcing, K quarantined"
// (enforcing: enforce mode, the timer can be set, not quarantined).
func (a *Agent) notifyStatus() {
	if a.opts.Notify == nil {
		return
	}
	a.mu.Lock()
	var enforcing, quarantined int
	for _, p := range a.ports {
		switch {
		case p.guard.quarantined:
			quarantined++
		case a.cfg.Mode == Enforce && p.info.CanSet && !p.gone:
			enforcing++
		}
	}
	st := fmt.Sprintf("STATUS=%s mode: %d ports, %d enforcing, %d quarantined", a.cfg.Mode, len(a.ports), enforcing, quarantined)
	changed := st != a.status
	a.status = st
	a.mu.Unlock()
	if changed {
		a.notify(st)
	}
}

// openState opens the state file (mode: the mode it is needed for) and
// restores the ports a previous run left changed. Observe mode needs no
// state: a state directory that does not exist is not created, and one the
// agent cannot write is skipped with a warning (a previous run's records
// are then not restored). A state directory or file another user could
// write is refused in either mode.
func (a *Agent) openState(ctx context.Context, mode Mode) error {
	dir := a.cfg.StateDir
	if mode == Observe {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
		if err == nil {
			err = unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK|unix.X_OK, unix.AT_EACCESS)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			a.log.Info("observe mode: no state directory, none created (enforce needs one)", "state_dir", dir)
			return nil
		case err != nil:
			a.log.Warn("observe mode: state directory not usable, working without it; records of a previous run are not restored",
				"state_dir", dir, "error", err)
			return nil
		}
	}
	st, err := OpenState(dir)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state = st
	a.log.Info("state file", "path", st.Path())
	a.recoverPending(ctx)
	return nil
}

// anyGone reports whether a port was found deleted or renamed.
func (a *Agent) anyGone() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.ports {
		if p.gone {
			return true
		}
	}
	return false
}

func (a *Agent) interval() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.Interval.D()
}

func (a *Agent) rescanInterval() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.Ports.RescanInterval.D()
}

func (a *Agent) portCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ports)
}

// shutdown restores and closes every port.
func (a *Agent) shutdown() error {
	a.ready.Store(false)
	a.notify(daemon.SdNotifyStopping)
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	a.mu.Lock()
	defer a.mu.Unlock()
	var failed []string
	for _, name := range a.sortedNames() {
		p := a.ports[name]
		// The idle periods that ended since the last round still count
		// (and go into the trace); nothing is decided or applied now.
		a.observe(p)
		if *a.cfg.Safety.RestoreOnExit {
			if err := a.restorePort(ctx, p, "agent stopping"); err != nil {
				failed = append(failed, name)
			}
		} else if p.original != nil {
			a.log.Info("leaving the port as it is (safety.restore_on_exit: false); the state file keeps its original settings",
				"device", name, "tx_lpi_timer", p.eee.TxLPITimer, "original_tx_lpi_timer", p.original.TxLPITimer)
		}
		p.port.Close()
		delete(a.ports, name)
	}
	terr := a.finishTraces()
	a.log.Info("agent stopped")
	if len(failed) > 0 {
		return errors.Join(fmt.Errorf("could not restore %v (the state file keeps their original settings for the next start)", failed), terr)
	}
	return terr
}

// finishTraces renames every port trace into place.
func (a *Agent) finishTraces() error {
	names := make([]string, 0, len(a.traces))
	for n := range a.traces {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []error
	for _, n := range names {
		t := a.traces[n]
		if err := t.finish(); err != nil {
			a.log.Error("port trace not written", "device", n, "error", err)
			errs = append(errs, err)
			continue
		}
		a.log.Info("port trace written", "device", n, "path", t.path, "rows", t.rows, "not_replayable", t.skipped)
	}
	clear(a.traces)
	return errors.Join(errs...)
}

// traceFor opens (or continues) a port's trace for a new controller.
func (a *Agent) traceFor(name string, spec PortSpec, opened time.Duration) *portTrace {
	dir := a.cfg.TraceDir
	if dir == "" {
		return nil
	}
	t, ok := a.traces[name]
	if !ok {
		var err error
		if t, err = newPortTrace(dir, name); err != nil {
			a.log.Error("port trace", "device", name, "error", err)
			return nil
		}
		a.traces[name] = t
	}
	t.start(TraceInfo{Device: name, Backend: a.backend.Name(), Mode: a.cfg.Mode, Opened: opened, Spec: spec}, ok)
	return t
}

// bindSent makes the port's hop counts go to its controller and trace.
func (p *portState) bindSent() {
	ctl, t := p.ctl, p.trace
	if t == nil {
		p.sent = ctl.Sent
		return
	}
	p.sent = func(hops int, packets uint64) {
		ctl.Sent(hops, packets)
		t.sent(hops, packets)
	}
}

func (a *Agent) sortedNames() []string {
	names := make([]string, 0, len(a.ports))
	for n := range a.ports {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// recoverPending restores ports recorded by a run that did not stop
// cleanly, finding renamed ports by their hardware address.
func (a *Agent) recoverPending(ctx context.Context) {
	pending := a.state.Pending()
	if len(pending) == 0 {
		return
	}
	if !*a.cfg.Safety.RestoreOnExit {
		// The previous run left its ports as they were on purpose (or
		// crashed): either way they stay so. The records stay too, so
		// that a later restore puts back the first original settings.
		names := make([]string, len(pending))
		for i, r := range pending {
			names[i] = r.Name
		}
		a.log.Info("not restoring ports a previous run changed (safety.restore_on_exit: false); the state file keeps their original settings",
			"ports", names)
		return
	}
	a.log.Warn("previous run did not restore every port; restoring now", "ports", len(pending))
	infos, err := a.backend.Ports(ctx)
	if err != nil {
		a.log.Error("list ports for recovery", "error", err)
	}
	for _, r := range pending {
		target := ""
		for _, in := range infos {
			if in.Name == r.Name && (r.MAC == "" || in.MAC == "" || in.MAC == r.MAC) {
				target = in.Name
				break
			}
		}
		if target == "" && r.MAC != "" {
			for _, in := range infos {
				if in.MAC == r.MAC {
					target = in.Name
					a.log.Warn("port was renamed since it was changed; restoring under its new name",
						"device", r.Name, "new_name", in.Name, "mac", r.MAC)
					break
				}
			}
		}
		if target == "" {
			a.log.Warn("port disappeared since it was changed; its original settings cannot be restored",
				"device", r.Name, "mac", r.MAC, "original_tx_lpi_timer", r.Original.TxLPITimer)
			a.restore[1]++
			_ = a.state.Forget(r.Name)
			continue
		}
		if err := a.backend.Restore(ctx, target, r.Original); err != nil {
			a.log.Error("restore after unclean stop failed; keeping the record", "device", target, "error", err)
			a.restore[1]++
			continue
		}
		a.restore[0]++
		a.log.Info("restored original EEE settings after unclean stop", "device", target,
			"tx_lpi_timer", r.Original.TxLPITimer, "tx_lpi_enabled", r.Original.TxLPIEnabled)
		a.forget(r.Name)
	}
}

// syncPorts opens newly selected ports, closes (restoring) ports that are
// gone or deselected, and rebuilds controllers whose configuration changed.
func (a *Agent) syncPorts(ctx context.Context) error {
	infos, err := a.backend.Ports(ctx)
	if err != nil {
		return fmt.Errorf("list ports: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	want := map[string]PortInfo{}
	for _, in := range infos {
		if a.cfg.Ports.Selected(in.Name, in.Driver) {
			want[in.Name] = in
		}
	}
	a.dropPorts(ctx, infos, want)
	now := a.backend.Now()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		in := want[name]
		spec := a.cfg.portSpec(in)
		if p, ok := a.ports[name]; ok {
			a.updatePort(p, in, spec, now)
		} else {
			a.addPort(ctx, in, spec, now)
		}
	}
	if len(a.ports) == 0 {
		a.log.Warn("no ports selected: "+a.cfg.Ports.NoneSelected(len(infos)), "mode", a.cfg.Mode)
	}
	return nil
}

// dropPorts closes the open ports that are not in want (the selected ports
// of infos, the backend's list) or are gone, restoring them, and follows
// the renamed ones.
func (a *Agent) dropPorts(ctx context.Context, infos []PortInfo, want map[string]PortInfo) {
	for _, name := range a.sortedNames() {
		p := a.ports[name]
		_, wanted := want[name]
		if wanted && !p.gone {
			continue
		}
		if in, ok := a.renamedTo(p, infos); ok {
			a.followRename(ctx, p, in, want)
			continue
		}
		why := "port no longer selected"
		if !wanted && !containsName(infos, name) {
			why = "port disappeared"
		} else if p.gone {
			why = "port gone"
		}
		a.log.Info("removing port", "device", name, "reason", why)
		if why != "port disappeared" {
			a.observe(p) // its last idle periods still count
		}
		if err := a.restorePort(ctx, p, why); err != nil && !errors.Is(err, ErrPortGone) {
			a.log.Error("restore failed", "device", name, "error", err)
		}
		a.foldSummary(p, a.backend.Now())
		p.port.Close()
		delete(a.ports, name)
	}
}

// updatePort takes an open port's fresh info and restarts its controller
// when its configuration, or who holds it to its delay budget, changed.
func (a *Agent) updatePort(p *portState, in PortInfo, spec PortSpec, now time.Duration) {
	p.info = in
	if reflect.DeepEqual(spec, p.spec) && a.wantsPortLedger(p, p.ctl.Guarded() || p.portLedger) == p.portLedger {
		return
	}
	ctl, _, err := newController(spec, now)
	if err != nil {
		a.log.Error("port configuration", "device", in.Name, "error", err)
		return
	}
	a.log.Info("port configuration changed; predictor restarted", "device", in.Name,
		"predictor", spec.Predictor.Kind)
	p.ctl, p.spec = ctl, spec
	a.armPort(p, now)
}

// addPort opens a newly selected port and starts its controller (spec).
func (a *Agent) addPort(ctx context.Context, in PortInfo, spec PortSpec, now time.Duration) {
	ctl, _, err := newController(spec, now)
	if err != nil {
		a.log.Error("port configuration", "device", in.Name, "error", err)
		return
	}
	port, err := a.backend.Open(ctx, in)
	if err != nil {
		a.log.Error("open port", "device", in.Name, "error", err)
		return
	}
	in.Observation = observation(port, in.Observation)
	p := &portState{info: in, port: port, spec: spec, ctl: ctl, started: now,
		errors: map[string]uint64{}, logged: map[string]bool{}, hist: make([]uint64, len(gapBuckets))}
	// lpictl_carrier_changes_total counts from here.
	if c, err := port.Counters(ctx); err == nil {
		p.noteCarrier(c.CarrierChanges)
	}
	if a.state != nil {
		if r, ok := a.state.Lookup(in.Name); ok {
			o := r.Original
			p.original = &o
		}
	}
	if f, ok := port.(firmwarePort); ok {
		p.firmware = f.Firmware(ctx)
	}
	a.armPort(p, now)
	preset := a.startEstimates(p, now)
	a.ports[in.Name] = p
	mc, from := a.cfg.missCost(in)
	if spec.Controller.MissCost != predictor.Duration(mc) {
		from = "configured"
	}
	a.log.Info("port selected", "device", in.Name, "driver", in.Driver, "observation", in.Observation,
		"can_set_timer", in.CanSet, "reason", in.Reason, "predictor", spec.Predictor.Kind, "estimate_preset", preset,
		"ledger", ledgerWho(p), "miss_cost", spec.Controller.MissCost.D(), "miss_cost_from", from)
}

// observation is how the opened port observes its idle periods, as the
// port says where it can (Observation), else listed (the backend's list).
func observation(port Port, listed string) string {
	if o, ok := port.(interface{ Observation() string }); ok {
		return o.Observation()
	}
	return listed
}

// armPort arms the delay ledger of the port's (new) controller and gives
// the controller the port's trace and hop counts.
func (a *Agent) armPort(p *portState, now time.Duration) {
	run, err := a.armLedger(p, now)
	if err != nil {
		a.log.Error("port configuration", "device", p.info.Name, "error", err)
	}
	p.trace = a.traceFor(p.info.Name, run, now)
	p.bindSent()
}

// startEstimates sets up the port's estimates of what EEE would save (when
// estimate is on) and returns the preset they use, for the log.
func (a *Agent) startEstimates(p *portState, now time.Duration) string {
	if !a.cfg.Estimate.On() {
		return "off"
	}
	est, preset, err := newEstimator(a.cfg.Estimate, p.info, p.spec, now)
	p.est = est
	switch {
	case errors.Is(err, errPresetUnknown):
		// Not a fault: say so rather than guess a preset.
		return "none (" + err.Error() + ")"
	case err != nil:
		a.log.Warn("no estimates for this port", "device", p.info.Name, "error", err)
		return "none"
	}
	return preset
}

// renamedTo finds the port p under another name: a listed port that is not
// open yet with p's ifindex (kept by a rename) and MAC, or with p's MAC when
// the backend has no ifindex.
func (a *Agent) renamedTo(p *portState, infos []PortInfo) (PortInfo, bool) {
	if containsName(infos, p.info.Name) {
		return PortInfo{}, false
	}
	for _, in := range infos {
		if _, open := a.ports[in.Name]; open {
			continue
		}
		sameMAC := in.MAC != "" && in.MAC == p.info.MAC
		if in.Index != 0 && p.info.Index != 0 {
			if in.Index == p.info.Index && (sameMAC || in.MAC == "" || p.info.MAC == "") {
				return in, true
			}
			continue
		}
		if sameMAC {
			return in, true
		}
	}
	return PortInfo{}, false
}

// followRename reopens a renamed port under its new name, keeping its
// controller, safety state and original settings (the state file's record
// moves with it). A port renamed to a name that is not selected is
// restored (under its new name) and dropped.
func (a *Agent) followRename(ctx context.Context, p *portState, in PortInfo, want map[string]PortInfo) {
	old := p.info.Name
	p.port.Close()
	delete(a.ports, old)
	if _, ok := want[in.Name]; ok {
		port, err := a.backend.Open(ctx, in)
		if err == nil {
			a.log.Info("port renamed; following it under its new name", "device", old, "new_name", in.Name)
			in.Observation = observation(port, in.Observation)
			if a.state != nil {
				if err := a.state.Rename(old, in.Name); err != nil {
					a.log.Error("state file", "device", in.Name, "error", err)
				}
			}
			p.port, p.info, p.gone = port, in, false
			a.ports[in.Name] = p
			return
		}
		a.log.Error("port renamed but cannot be opened under its new name; dropping it", "device", old,
			"new_name", in.Name, "error", err)
	} else {
		a.log.Info("port renamed to a name that is not selected; restoring and dropping it", "device", old,
			"new_name", in.Name)
	}
	if p.original == nil {
		return
	}
	orig := *p.original
	if err := a.backend.Restore(ctx, in.Name, orig); err != nil {
		a.restore[1]++
		a.log.Error("restore failed", "device", in.Name, "error", err)
		return
	}
	a.restore[0]++
	a.log.Info("restored original EEE settings", "device", in.Name, "reason", "port renamed to "+in.Name,
		"tx_lpi_timer", orig.TxLPITimer, "tx_lpi_enabled", orig.TxLPIEnabled)
	a.forget(old)
}

func containsName(infos []PortInfo, name string) bool {
	for _, in := range infos {
		if in.Name == name {
			return true
		}
	}
	return false
}

func newController(spec PortSpec, now time.Duration) (*controller.Port, predictor.Predictor, error) {
	pred, err := predictor.New(spec.Predictor)
	if err != nil {
		return nil, nil, err
	}
	ctl, err := controller.NewPort(spec.Controller, pred, now)
	return ctl, pred, err
}

// ledgerWho names who holds the port to its delay budget: the port itself
// (per idle period), the agent (per interval), or nobody.
func ledgerWho(p *portState) string {
	switch {
	case p.portLedger:
		return "port"
	case p.ctl.Guarded():
		return "interval"
	}
	return "off"
}

// reload switches to a new configuration, keeping the state of ports
// whose configuration did not change.
func (a *Agent) reload(ctx context.Context) {
	if a.opts.Reload == nil {
		return
	}
	cfg, err := a.opts.Reload()
	if err != nil {
		a.mu.Lock()
		a.reloads[1]++
		a.reloadOK = false
		a.mu.Unlock()
		a.log.Error("reload failed; keeping the running configuration", "error", err)
		return
	}
	if cfg.Mode == Enforce && a.backend.Persistent() && a.state == nil {
		// Observe mode ran without state; enforce changes nothing
		// before the original settings are on disk.
		if err := a.openState(ctx, Enforce); err != nil {
			a.log.Error("reload: enforce needs the state directory; staying in observe mode", "error", err)
			cfg.Mode = Observe
		}
	}
	a.mu.Lock()
	old := a.cfg
	fixed := []struct {
		key      string
		old, new any
		keep     func()
	}{
		{"backend", old.Backend, cfg.Backend, func() { cfg.Backend = old.Backend }},
		{"state_dir", old.StateDir, cfg.StateDir, func() { cfg.StateDir = old.StateDir }},
		{"metrics", old.Metrics, cfg.Metrics, func() { cfg.Metrics = old.Metrics }},
		{"hw", old.HW, cfg.HW, func() { cfg.HW = old.HW }},
		{"sim", old.Sim, cfg.Sim, func() { cfg.Sim = old.Sim }},
		{"log.format", old.Log.Format, cfg.Log.Format, func() { cfg.Log.Format = old.Log.Format }},
		{"trace_dir", old.TraceDir, cfg.TraceDir, func() { cfg.TraceDir = old.TraceDir }},
		{"estimate", old.Estimate, cfg.Estimate, func() { cfg.Estimate = old.Estimate }},
	}
	for _, f := range fixed {
		if !reflect.DeepEqual(f.old, f.new) {
			a.log.Warn("setting changed but only takes effect at restart; keeping the running value", "key", f.key)
			f.keep()
		}
	}
	if old.Mode == Enforce && cfg.Mode == Observe {
		for _, name := range a.sortedNames() {
			if err := a.restorePort(ctx, a.ports[name], "mode changed to observe"); err != nil {
				a.log.Error("restore failed", "device", name, "error", err)
			}
		}
	}
	a.cfg = cfg
	if a.opts.Level != nil {
		a.opts.Level.Set(parseLevel(cfg.Log.Level))
	}
	a.reloads[0]++
	a.reloadOK, a.reloadAt = true, a.clock()
	a.repeatEvery.Store(int64(cfg.Log.RepeatInterval.D()))
	a.mu.Unlock()
	if err := a.syncPorts(ctx); err != nil {
		a.log.Error("reload: port sync failed", "error", err)
	}
	a.log.Info("configuration reloaded", "mode", cfg.Mode, "ports", a.portCount())
}

// tick runs one decision round over every port.
func (a *Agent) tick(ctx context.Context) {
	start := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.backend.Now()
	for _, name := range a.sortedNames() {
		a.tickPort(ctx, a.ports[name], now)
	}
	end := a.clock()
	a.tickDur = end.Sub(start)
	a.lastTick.Store(end.UnixNano())
	a.maybeSummary(now)
}

func (a *Agent) tickPort(ctx context.Context, p *portState, now time.Duration) {
	if p.gone {
		return
	}
	cfg := &a.cfg
	if !a.observe(p) {
		return
	}

	// EEE state and counters.
	if !p.eeeKnown || now-p.eeeReadAt >= cfg.Safety.EEERefresh.D() {
		p.eeeReadAt = now
		if st, err := p.port.EEE(ctx); err == nil {
			if p.eeeKnown && p.hasRequested && p.foreign == "" && st.TxLPITimer != p.eee.TxLPITimer && st.TxLPITimer != p.requested {
				a.foreignChange(p, st.TxLPITimer)
			}
			p.eee, p.eeeKnown = st, true
			p.peerEEE = peerModes(p.port)
		} else if errors.Is(err, ErrNotSupported) {
			a.warnOnce(p, "eee-read", "EEE state not available", "device", p.info.Name, "error", err)
		} else {
			a.portError(p, "eee_read", err)
		}
	}
	// Once a second of the backend's time, or of wall-clock time when the
	// backend's runs slower (a simulation that cannot keep up).
	if !p.countersOK || p.guard.inFlapWindow(now, cfg.Safety) || p.guard.harm.active(now, cfg.Safety) ||
		now-p.countersAt >= time.Second ||
		a.clock().Sub(p.countersWall) >= time.Second {
		a.readCounters(ctx, p, now)
	}

	// Apply the controller's t_PDT in enforce mode. It decided at the
	// start of each idle period (observe), so that controller/replay,
	// which decides there too, reproduces every decision.
	if cfg.Mode == Enforce {
		pdt := p.ctl.PDT()
		// The ledger in deficit: the controller's Decide answers Never
		// for the idle periods of the interval starting now, so the port
		// is held awake for it (budget.go).
		hold := p.inDeficit(now)
		if hold {
			pdt = p.holdPDT(a.backend.Persistent())
		}
		if hold && !p.holding {
			p.holds++
			a.log.Debug("delay budget in deficit: port held awake for the interval", "device", p.info.Name, "pdt", pdt)
		}
		p.holding = hold
		a.apply(ctx, p, now, pdt)
		a.programLedger(ctx, p)
		if p.trace != nil {
			// When the round's write landed: a replay arms the port
			// from then (controller/replay AgentPort.Rounds).
			p.trace.round(a.backend.Now())
		}
	}
}

// observe feeds the port's ended idle periods to its controller, in order:
// for each, the controller decides the t_PDT for the period at its start
// (controller.Port.Decide: with the agent's interval policy it recomputes
// at the first period that starts an interval after the last computation,
// as the simulator's controllers do), then learns how the period ended.
// Hop counts reported after this round's periods are given to the
// controller after them (Hops), before the next round's decisions. It
// returns false if the port is gone.
//
// What the predictor learns is the outcome of its own decision: the
// port's when the port ran that t_PDT (the backend knows the outcome and
// its t_PDT equals the decision), otherwise — the decision not applied yet
// or not at all (observe mode, warm-up, a change in flight), or a backend
// that cannot tell — what the decision would have given (length ≥ t_PDT:
// docs/model.md §1.1, an idle period of exactly t_PDT is a miss). The agent counts
// (metrics, trace) the port's outcome in enforce mode and the decision's
// in observe mode.
func (a *Agent) observe(p *portState) bool {
	if p.gone {
		return false
	}
	enforce := a.cfg.Mode == Enforce
	for {
		n, err := p.port.Drain(a.buf)
		if err != nil {
			a.portError(p, "observe", err)
			if errors.Is(err, ErrPortGone) {
				p.gone = true
				return false
			}
			break
		}
		for _, o := range a.buf[:n] {
			if o.Length <= 0 {
				continue // back to back: no idle period (docs/model.md §1.1)
			}
			start := o.End - o.Length
			if p.est != nil {
				p.est.Idle(o.End, o.Length)
			}
			d := p.ctl.Decide(start)
			would := o.Length >= d
			learned := would
			if o.MissedKnown && o.PDT == d {
				learned = o.Missed
			}
			counted := would
			if enforce {
				counted = portMissed(o, d, p)
			}
			ip := predictor.IdlePeriod{End: o.End, Length: o.Length, Missed: learned, PDT: d}
			if o.MissedKnown && o.PDT == d {
				// The delay ledger charges the decision's own outcome, as
				// controller/replay does: the wait the port measured when
				// it ran the decision; otherwise a (would-be) miss is
				// unmeasured and charged the reserve c.
				ip.Delay = o.Delay
			}
			p.ctl.IdleEnded(ip)
			if counted {
				p.misses++
			} else {
				p.hits++
			}
			p.observeGap(o.Length)
			if p.trace != nil {
				p.trace.row(start, o.Length, d, counted, o.Delay)
			}
		}
		if n < len(a.buf) {
			break
		}
	}
	p.port.Hops(p.sent)
	return true
}

// portMissed is the port's own outcome of an idle period in enforce mode:
// the backend's where it knows it, else the period's length against the
// t_PDT in force (the last one applied, or d before the first change).
func portMissed(o Observation, d time.Duration, p *portState) bool {
	if o.MissedKnown {
		return o.Missed
	}
	pdt := o.PDT
	if pdt == 0 {
		pdt = d
		if p.hasRequested {
			pdt = p.requested
		}
	}
	return pdt != PDTNever && o.Length >= pdt
}

func (a *Agent) readCounters(ctx context.Context, p *portState, now time.Duration) {
	c, err := p.port.Counters(ctx)
	if err != nil {
		a.portError(p, "counters", err)
		return
	}
	p.counters, p.countersAt, p.countersOK, p.countersWall = c, now, true, a.clock()
	p.noteCarrier(c.CarrierChanges)
	a.checkHarm(ctx, p, now)
	flap, quarantine := p.guard.carrier(now, c.CarrierChanges, a.cfg.Safety)
	if !flap || p.guard.quarantined && p.guard.reason == ReasonHarm {
		return
	}
	a.warnRepeat(slog.LevelWarn, p.info.Name, "", "carrier flap after a change; backing off", "device", p.info.Name,
		"consecutive_flaps", p.guard.flaps, "backoff", p.guard.backoffLeft(now))
	if quarantine {
		a.log.Error("port quarantined after repeated link flaps: original settings restored, no further changes until restart",
			"device", p.info.Name, "flaps", p.guard.flaps)
		if err := a.restorePort(ctx, p, "quarantine"); err != nil {
			a.log.Error("restore failed", "device", p.info.Name, "error", err)
		}
	}
}

// errorCounters reads the port's error counters, if it has them.
func (a *Agent) errorCounters(ctx context.Context, p *portState) (ErrorCounters, bool) {
	ep, ok := p.port.(ErrorCounterPort)
	if !ok {
		return ErrorCounters{}, false
	}
	c, err := ep.ErrorCounters(ctx)
	if err != nil {
		a.portError(p, "counters", err)
		return ErrorCounters{}, false
	}
	return c, true
}

// checkHarm restores and quarantines the port when its errors or drops
// rose above safety.harm_errors / harm_drops within safety.harm_window
// after a change (docs/agent.md "Modes and safety").
func (a *Agent) checkHarm(ctx context.Context, p *portState, now time.Duration) {
	if !p.guard.harm.watching || p.guard.quarantined {
		return
	}
	c, ok := a.errorCounters(ctx, p)
	if !ok {
		return
	}
	s := a.cfg.Safety
	harm, errs, drops := p.guard.harm.check(now, c, s)
	if !harm {
		return
	}
	p.guard.harmed()
	a.log.Error("port quarantined: errors or drops rose after a change; original settings restored, no further changes until restart",
		"device", p.info.Name, "reason", ReasonHarm, "errors", errs, "harm_errors", s.HarmErrors,
		"drops", drops, "harm_drops", s.HarmDrops, "since_change", now-p.guard.harm.changedAt,
		"tx_lpi_timer", p.eee.TxLPITimer)
	if err := a.restorePort(ctx, p, "quarantine: errors after a change"); err != nil {
		a.log.Error("restore failed", "device", p.info.Name, "error", err)
	}
}

// apply sets the port's timer to pdt when safety allows it.
func (a *Agent) apply(ctx context.Context, p *portState, now, pdt time.Duration) {
	if !a.mayApply(p, now, pdt) || !a.claim(p) {
		return
	}
	// A timer this agent did not write is noticed before the next write,
	// not only at the next refresh: never fight another writer.
	if p.hasRequested {
		if st, err := p.port.EEE(ctx); err == nil && st.TxLPITimer != p.eee.TxLPITimer {
			a.foreignChange(p, st.TxLPITimer)
			return
		}
	}
	if !a.recordOriginal(p) {
		return // never change a port whose original is not on disk
	}
	if a.setPDT(ctx, p, now, pdt) {
		a.applyHold(ctx, p)
	}
}

// mayApply says whether the port's timer may be set to pdt now: the port
// can set it, is enforced (not another writer's, not quarantined, backed
// off or warming up), its EEE state is known, pdt is a change worth a
// write, there is a state file for the original settings (a persistent
// backend) and EEE and tx LPI are on.
func (a *Agent) mayApply(p *portState, now, pdt time.Duration) bool {
	switch {
	case !p.info.CanSet:
		if !p.logged["not-supported"] {
			p.errors["not_supported"]++
		}
		a.warnOnce(p, "not-supported", "enforce: tx LPI timer cannot be set on this port; it stays observe-only",
			"device", p.info.Name, "driver", p.info.Driver, "reason", p.info.Reason)
		return false
	case p.foreign != "", !p.guard.mayChange(now), now-p.started < a.cfg.Safety.Warmup.D(), !p.eeeKnown:
		return false
	case p.hasRequested && p.requested == pdt:
		return false
	case !p.hasRequested && firstChange(pdt, p.eee.TxLPITimer, p.spec.Controller.Hysteresis) == firstEqual:
		p.requested, p.hasRequested = pdt, true
		return false
	case !p.hasRequested && firstChange(pdt, p.eee.TxLPITimer, p.spec.Controller.Hysteresis) == firstHeld:
		// The first decision against the timer in force, under the
		// rule the controller applies to later changes: a write (and
		// on many drivers a link bounce) is not worth so little.
		if pdt != p.heldFirst {
			p.heldFirst = pdt
			p.heldFirstCount++
			a.log.Debug("decision held by hysteresis against the timer in force", "device", p.info.Name,
				"pdt", pdt, "tx_lpi_timer", p.eee.TxLPITimer)
		}
		return false
	case a.backend.Persistent() && a.state == nil:
		a.warnOnce(p, "no-state", "enforce: no state file, so no change (restart the agent in enforce mode)",
			"device", p.info.Name, "state_dir", a.cfg.StateDir)
		return false
	case !p.eee.Enabled || !p.eee.TxLPIEnabled:
		a.warnOnce(p, "eee-off", "EEE or tx LPI is off on this port; lpictl never turns it on, so the timer is left alone",
			"device", p.info.Name, "eee_enabled", p.eee.Enabled, "tx_lpi_enabled", p.eee.TxLPIEnabled)
		return false
	}
	return true
}

// claim makes this agent the port's owner before its first write (where
// the port has owners: Claimer). It returns false, and stops enforcing the
// port, when another process owns it.
func (a *Agent) claim(p *portState) bool {
	if p.claimed {
		return true
	}
	if c, ok := p.port.(Claimer); ok {
		if err := c.Claim(); err != nil {
			p.foreign = err.Error()
			p.errors["external_change"]++
			a.log.Warn("enforce: the port is owned by another process; not enforcing it", "device", p.info.Name, "error", err)
			return false
		}
	}
	p.claimed = true
	return true
}

// recordOriginal records the port's original EEE settings before its
// first change, in the state file first when there is one (a record of an
// earlier run wins: the first original). It returns false when the record
// could not be written.
func (a *Agent) recordOriginal(p *portState) bool {
	if p.original != nil {
		return true
	}
	orig := Settings{TxLPITimer: p.eee.TxLPITimer, TxLPIEnabled: p.eee.TxLPIEnabled}
	if a.state != nil {
		err := a.state.Record(PortRecord{Name: p.info.Name, Index: p.info.Index, MAC: p.info.MAC,
			Driver: p.info.Driver, Backend: a.backend.Name(), Original: orig, RecordedAt: a.clock().UTC()})
		if err != nil {
			a.portError(p, "state", err)
			return false
		}
		if r, ok := a.state.Lookup(p.info.Name); ok {
			orig = r.Original
		}
	}
	p.original = &orig
	a.log.Info("recorded original EEE settings", "device", p.info.Name,
		"tx_lpi_timer", orig.TxLPITimer, "tx_lpi_enabled", orig.TxLPIEnabled)
	return true
}

// setPDT writes pdt to the port's timer and starts the safety watches of a
// change (carrier flaps; errors and drops when safety.harm_* is on) from
// the counters just before it. It returns false if the port refused pdt.
func (a *Agent) setPDT(ctx context.Context, p *portState, now, pdt time.Duration) bool {
	carrier := p.counters.CarrierChanges
	if c, err := p.port.Counters(ctx); err == nil {
		carrier = c.CarrierChanges
		p.counters = c
		p.noteCarrier(c.CarrierChanges)
	}
	errBase, errKnown := ErrorCounters{}, false
	if a.cfg.Safety.harmOn() {
		errBase, errKnown = a.errorCounters(ctx, p)
	}
	res, err := p.port.SetPDT(ctx, pdt)
	p.requested, p.hasRequested = pdt, true
	if err != nil {
		if errors.Is(err, ErrNotSupported) {
			p.info.CanSet = false
			p.info.Reason = err.Error()
			p.errors["not_supported"]++
			p.logged["not-supported"] = true
			a.log.Warn("enforce: port refused the tx LPI timer; it stays observe-only", "device", p.info.Name, "error", err)
			return false
		}
		a.portError(p, "apply", err)
		// Try again after the rate limit, not every round.
		p.guard.backoffUntil = now + p.spec.Controller.MinChangeInterval.D()
		return false
	}
	if res.Clamped {
		p.driverClamps++
	}
	if !res.Unchanged {
		p.changes++
		p.guard.changed(now, carrier)
		if errKnown {
			p.guard.harm.changed(now, errBase)
		}
		// DEBUG: one line per change floods the journal on a switch; the
		// summary line counts them (log.summary_interval).
		a.log.Debug("tx LPI timer set", "device", p.info.Name, "pdt", pdt, "applied", res.Applied,
			"clamped", res.Clamped)
	}
	p.eee.TxLPITimer = res.Applied
	return true
}

// foreignChange: the port's timer is one this agent did not write. It stops
// enforcing the port (until the agent restarts) and does not restore it on
// exit: the value in force is the other writer's, and its record in the
// state file is dropped.
func (a *Agent) foreignChange(p *portState, timer time.Duration) {
	p.foreign = fmt.Sprintf("tx LPI timer changed to %v by another writer (this agent wrote %v)", timer, p.eee.TxLPITimer)
	p.errors["external_change"]++
	a.log.Warn("enforce: tx LPI timer changed by someone else; not enforcing this port any more, and leaving it as it is at exit",
		"device", p.info.Name, "timer", timer, "written", p.eee.TxLPITimer)
	p.eee.TxLPITimer = timer
	p.original = nil
	a.forget(p.info.Name)
}

// applyHold gives the port the hybrid hold its predictor chose with t_PDT,
// where the port has a hold register (HoldSetter: emulated ports).
func (a *Agent) applyHold(ctx context.Context, p *portState) {
	hold, ok := p.ctl.Hold()
	hs, can := p.port.(HoldSetter)
	if !ok || !can || p.holdBroken || (p.holdSet && hold == p.hold) {
		return
	}
	if err := hs.SetHold(ctx, hold); err != nil {
		if errors.Is(err, ErrNotSupported) {
			p.holdBroken = true // a real NIC: keep quiet from now on
			a.log.Debug("port has no hybrid hold register", "device", p.info.Name, "error", err)
			return
		}
		a.portError(p, "hold", err)
		return
	}
	p.hold, p.holdSet = hold, true
}

// restorePort puts back a port's original settings if lpictl changed it.
func (a *Agent) restorePort(ctx context.Context, p *portState, why string) error {
	if p.original == nil {
		return nil
	}
	orig := *p.original
	if err := p.port.Restore(ctx, orig); err != nil {
		a.restore[1]++
		p.errors["restore"]++
		return err
	}
	a.restore[0]++
	a.log.Info("restored original EEE settings", "device", p.info.Name, "reason", why,
		"tx_lpi_timer", orig.TxLPITimer, "tx_lpi_enabled", orig.TxLPIEnabled)
	p.original = nil
	p.hasRequested = false
	p.ledgerSet = false // Restore turned a port's own ledger off
	p.eee.TxLPITimer, p.eee.TxLPIEnabled = orig.TxLPITimer, orig.TxLPIEnabled
	a.forget(p.info.Name)
	return nil
}

// forget drops the port's record from the state file (if there is one):
// its original settings are back, or are no longer this agent's to restore.
func (a *Agent) forget(name string) {
	if a.state == nil {
		return
	}
	if err := a.state.Forget(name); err != nil {
		a.log.Error("state file", "error", err)
	}
}

// withinHysteresis applies the controller's hysteresis rule (a change of at
// most h × the current value is held) to a new value against cur.
func withinHysteresis(v, cur time.Duration, h float64) bool {
	d := v - cur
	if d < 0 {
		d = -d
	}
	return h > 0 && float64(d) <= h*float64(cur)
}

// noteCarrier accounts a read n of the port's cumulative carrier change
// count: carrierSeen counts the transitions since the port was opened (the
// first read is the base; a count that went down, a new device, restarts
// the base).
func (p *portState) noteCarrier(n uint64) {
	if p.carrierKnown && n >= p.carrierLast {
		p.carrierSeen += n - p.carrierLast
	}
	p.carrierLast, p.carrierKnown = n, true
}

func (a *Agent) portError(p *portState, kind string, err error) {
	if errors.Is(err, ErrPortGone) {
		// Deleted or renamed: no error, the agent closes or follows it
		// at once (syncPorts).
		if !p.gone {
			a.log.Debug("port gone", "device", p.info.Name, "error", err)
		}
		p.gone = true
		return
	}
	p.errors[kind]++
	a.warnRepeat(slog.LevelWarn, p.info.Name, kind, "port error", "device", p.info.Name, "kind", kind, "count", p.errors[kind], "error", err)
}

// warnOnce logs a warning once per port.
func (a *Agent) warnOnce(p *portState, key, msg string, args ...any) {
	if p.logged[key] {
		return
	}
	p.logged[key] = true
	a.log.Warn(msg, args...)
}

func (p *portState) observeGap(d time.Duration) {
	s := d.Seconds()
	p.histSum += s
	p.histCount++
	for i, ub := range gapBuckets {
		if s <= ub {
			p.hist[i]++
			return
		}
	}
}

// ParseLevel maps a log.level value to a slog level.
func parseLevel(s string) slog.Level {
	switch s {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
