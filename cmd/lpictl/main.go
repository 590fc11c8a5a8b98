// Command lpictl is the link power controller: it predicts EEE power-down
// thresholds for Ethernet ports, simulates them on large topologies and
// drives them on real Linux ports.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/lpictl/lpictl/configs"
)

// main is the process's one place for signals: SIGINT and SIGTERM cancel
// the command's context (a sim run writes what it has and exits 130; the
// agent restores its ports), and SIGHUP asks the agent to reload.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// A second ^C takes its default action, so a command that does not
		// stop can still be ended; a repeated SIGTERM (a supervisor or hil
		// signalling again) stays caught, so it cannot cut short the agent's
		// restoring of its ports.
		signal.Reset(os.Interrupt)
	}()
	ctx = context.WithValue(ctx, reloadKey{}, reloadSignals)
	code := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and maps errors to exit statuses:
// 0 success, 2 bad input (configs.InputError: usage, config, data files),
// 1 runtime failure, 130 a sim run interrupted after writing its partial
// results.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with a context (tests cancel it as a signal would).
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return exitStatus(root.ExecuteContext(ctx), stderr)
}

// exitStatus prints err to stderr and returns its exit status: the one
// place that classifies errors.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "lpictl:", err)
	var ee *exitError
	switch {
	case configs.IsBadInput(err):
		return 2
	case errors.As(err, &ee):
		return ee.code
	}
	return 1
}

type reloadKey struct{}

// reloads returns the reload requests (SIGHUP) of the process running ctx
// and a function that stops them; without main's signals, none come.
func reloads(ctx context.Context) (<-chan struct{}, func()) {
	if subscribe, ok := ctx.Value(reloadKey{}).(func() (<-chan struct{}, func())); ok {
		return subscribe()
	}
	return nil, func() {}
}

// reloadSignals turns SIGHUP into reload requests (coalesced) until
// stopped; only the agent subscribes, so SIGHUP keeps its default action
// for the other commands.
func reloadSignals() (<-chan struct{}, func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	hup := make(chan struct{}, 1)
	go func() {
		for range sig {
			select {
			case hup <- struct{}{}:
			default:
			}
		}
	}()
	return hup, func() { signal.Stop(sig); close(sig) }
}
