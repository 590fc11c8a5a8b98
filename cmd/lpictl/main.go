// Command lpictl is the link power controller: it predicts EEE power-down
// thresholds for Ethernet ports, simulates them on large topologies and
// drives them on real Linux ports.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and maps errors to exit statuses:
// 0 success, 2 bad input (usage, config, data files), 1 runtime failure.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "lpictl:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}
