package hwbackend_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
)

// runAgent starts the real agent on the hw backend cfg.HW describes (cfg
// with defaults filled) and waits until it is ready. stop ends it and
// returns its error; the test's cleanup calls it too, if the test did not.
func runAgent(t *testing.T, cfg agent.Config) (a *agent.Agent, stop func() error) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	opts, err := hwbackend.FromConfig(cfg.HW, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	be, err := hwbackend.New(ctx, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	a, err = agent.New(agent.Options{Config: cfg, Backend: be, Logger: log})
	if err != nil {
		be.Close()
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, nil) }()
	stopped, result := false, error(nil)
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			result = <-done
		}
		return result
	}
	t.Cleanup(func() { _ = stop() })
	waitFor(t, "agent ready", a.Ready)
	return a, stop
}
