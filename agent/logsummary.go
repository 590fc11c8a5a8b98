package agent

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// The agent's log volume (docs/agent.md "Logs"): each timer change is a
// DEBUG line; one INFO line per log.summary_interval sums up what happened
// since the last one, and a warning repeated about the same port is logged
// at most once per log.repeat_interval. Both run on Options.Clock (the
// wall clock: the journal's), never on the backend's clock, which is
// simulated time on the sim backend.

// summaryCounts are a port's cumulative counts behind the summary line.
type summaryCounts struct {
	changes, clamps, holds, quarantines, errors uint64
}

// add adds the rise from last to cur; a count that went down (a controller
// restarted by a reload) counts from 0.
func (s *summaryCounts) add(cur, last summaryCounts) {
	rise := func(c, l uint64) uint64 {
		if c < l {
			return c
		}
		return c - l
	}
	s.changes += rise(cur.changes, last.changes)
	s.clamps += rise(cur.clamps, last.clamps)
	s.holds += rise(cur.holds, last.holds)
	s.quarantines += rise(cur.quarantines, last.quarantines)
	s.errors += rise(cur.errors, last.errors)
}

// summaryCounts reads the port's counts: tx LPI timer writes, answers cut
// to a range (the register's in the controller and the driver's own),
// idle periods the delay ledger kept awake (lpictl_port_budget_held_total),
// quarantine (0 or 1: it lasts until the agent restarts) and errors.
func (p *portState) summaryCounts(now time.Duration) summaryCounts {
	st := p.ctl.Stats(now)
	c := summaryCounts{changes: p.changes, clamps: st.Clamps + p.driverClamps}
	if ls := p.ledgerStats(now, st); ls != nil {
		c.holds = ls.Held
	}
	if p.guard.quarantined {
		c.quarantines = 1
	}
	for _, n := range p.errors {
		c.errors += n
	}
	return c
}

// foldSummary keeps a removed port's counts since the last summary for the
// next one. Callers hold a.mu.
func (a *Agent) foldSummary(p *portState, now time.Duration) {
	a.sumPending.add(p.summaryCounts(now), p.sumLast)
}

// maybeSummary logs the summary line when log.summary_interval has passed
// since the last one (at the first round after it: at most one interval
// late). Callers hold a.mu.
func (a *Agent) maybeSummary(now time.Duration) {
	iv := a.cfg.Log.SummaryInterval.D()
	wall := a.clock()
	if iv <= 0 {
		a.lastSummary = wall
		return
	}
	since := wall.Sub(a.lastSummary)
	if since < iv {
		return
	}
	total := a.sumPending
	a.sumPending = summaryCounts{}
	var enforcing, quarantined int
	for _, name := range a.sortedNames() {
		p := a.ports[name]
		cur := p.summaryCounts(now)
		total.add(cur, p.sumLast)
		p.sumLast = cur
		switch {
		case p.guard.quarantined:
			quarantined++
		case a.cfg.Mode == Enforce && p.info.CanSet && p.foreign == "" && !p.gone:
			enforcing++
		}
	}
	a.lastSummary = wall
	a.log.Info("summary", "since_last", since.Round(time.Second), "ports", len(a.ports), "enforcing", enforcing,
		"quarantined", quarantined, "changes", total.changes, "clamps", total.clamps, "ledger_holds", total.holds,
		"quarantines", total.quarantines, "errors", total.errors, "warnings_suppressed", a.limiter.takeSuppressed())
}

// repeatLimiter lets a warning with the same key (message and port) through
// at most once per interval and counts the ones it holds back.
type repeatLimiter struct {
	mu   sync.Mutex
	last map[string]*repeatEntry
	// suppressed counts every warning held back since the last summary.
	suppressed uint64
}

type repeatEntry struct {
	at         time.Time
	suppressed uint64
}

// allow reports whether a warning keyed key may be logged at now and how
// many were suppressed since the last one that was.
func (l *repeatLimiter) allow(key string, now time.Time, every time.Duration) (bool, uint64) {
	if every <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]*repeatEntry{}
	}
	e, ok := l.last[key]
	if !ok {
		if len(l.last) >= 4096 {
			l.prune(now, every)
		}
		l.last[key] = &repeatEntry{at: now}
		return true, 0
	}
	if now.Sub(e.at) < every {
		e.suppressed++
		l.suppressed++
		return false, 0
	}
	k := e.suppressed
	e.at, e.suppressed = now, 0
	return true, k
}

// prune forgets keys quiet for an interval (ports that went away).
func (l *repeatLimiter) prune(now time.Time, every time.Duration) {
	for k, e := range l.last {
		if now.Sub(e.at) >= every {
			delete(l.last, k)
		}
	}
}

func (l *repeatLimiter) takeSuppressed() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.suppressed
	l.suppressed = 0
	return n
}

// warnRepeat logs a warning (or error) about device at most once per
// log.repeat_interval for the same msg, device and detail, adding
// "suppressed", K when K were held back since the last one. args should
// name the device.
func (a *Agent) warnRepeat(level slog.Level, device, detail, msg string, args ...any) {
	ok, k := a.limiter.allow(msg+"\x00"+device+"\x00"+detail, a.clock(), a.repeatInterval())
	if !ok {
		return
	}
	if k > 0 {
		args = append(args, "suppressed", k)
	}
	a.log.Log(context.Background(), level, msg, args...)
}

// repeatInterval is log.repeat_interval (read without a.mu: warnings are
// logged with and without it; a reload replaces it under a.mu).
func (a *Agent) repeatInterval() time.Duration {
	return time.Duration(a.repeatEvery.Load())
}
