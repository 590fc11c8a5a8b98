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
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and maps errors to exit statuses:
// 0 success, 2 bad input (usage, config, data files), 1 runtime failure,
// 130 a sim run interrupted after writing its partial results.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with a context (tests cancel it as a signal would).
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "lpictl:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
