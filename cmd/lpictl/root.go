package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/configs"
)

// Set at build time with -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = "unknown"
)

// exitInterrupted is the exit status of a run stopped by Ctrl-C or
// SIGTERM that still wrote what it had (128 + SIGINT, as shells report).
const exitInterrupted = 130

// exitError is an error with its own exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "lpictl",
		Short: "Link power controller for Energy Efficient Ethernet ports",
		Long: "lpictl chooses the EEE power-down threshold (t_PDT) of Ethernet ports with published\n" +
			"predictors (fixed PDT, PerfBound, PerfBoundCorrect), on real Linux ports and in a bundled\n" +
			"packet-level network simulator, with one controller code.",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version prints the same line as `lpictl version`.
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return configs.BadInput(err) })
	root.AddCommand(
		newVersionCommand(),
		newPredictCommand(),
		newSimCommand(),
		newTopoCommand(),
		newPortsCommand(),
		newWorkloadCommand(),
		newAgentCommand(),
		newEmulateCommand(),
		newHILCommand(),
		newGenManCommand(),
		newSweepCmd(),
	)
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}

// versionLine is the first line of `lpictl version` and all of `lpictl --version`.
func versionLine() string {
	return fmt.Sprintf("lpictl %s (commit %s, %s %s/%s)",
		version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
