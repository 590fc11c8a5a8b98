package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/agent/simbackend"
	"github.com/lpictl/lpictl/configs"
)

// agentFlagKeys maps the agent's flags to config keys (flags override the
// environment, which overrides the file).
var agentFlagKeys = map[string]string{
	"mode":      "mode",
	"backend":   "backend",
	"interval":  "interval",
	"state-dir": "state_dir",
	"listen":    "metrics.listen",
	// The exporters' flag (node_exporter, Prometheus).
	"web.config.file": "metrics.web_config_file",
	"ports":           "ports.names",
	"log-level":       "log.level",
	"log-format":      "log.format",
	"scenario":        "sim.scenario",
	"speed":           "sim.speed",
}

func newAgentCommand() *cobra.Command {
	var (
		file        string
		sets        []string
		printConfig bool
		check       bool
		jsonOut     bool
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the link power agent: one controller per selected port, metrics on /metrics",
		Long: `agent watches the selected ports (hardware, or simulated with --backend sim), runs one
controller per port and exports what it sees and decides to Prometheus. In observe mode (the
default) it changes nothing; in enforce mode it sets each port's EEE tx LPI timer, recording
the original settings first and restoring them when it stops (or at the next start after a crash).

Configuration: defaults < file (--config, $LPICTL_CONFIG, /etc/lpictl/agent.yaml) < LPICTL_*
environment variables < flags < --set. See docs/agent.md and configs/agent.yaml.
SIGHUP reloads the configuration; SIGTERM/SIGINT restore the ports and stop.`,
		Example: `  lpictl agent --check -c /etc/lpictl/agent.yaml
  lpictl agent --print-config --mode enforce --ports 'eth*'
  lpictl agent --backend sim --scenario configs/sim/quick.yaml --listen 127.0.0.1:9720`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			load := func() (agent.Loaded, error) {
				ld, err := agent.Load(agent.LoadOptions{File: file, Flags: cmd.Flags(), FlagKeys: agentFlagKeys, Sets: sets})
				return ld, configs.BadInput(err)
			}
			ld, err := load()
			if err != nil {
				return err
			}
			if printConfig {
				out, err := ld.Config.YAML()
				if err == nil {
					_, err = cmd.OutOrStdout().Write(out)
				}
				return err
			}
			if check {
				return checkAgent(cmd, ld, jsonOut)
			}
			return runAgent(cmd.Context(), ld.Config, load, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "config", "c", "", "config file (default $LPICTL_CONFIG, else /etc/lpictl/agent.yaml if it exists)")
	f.StringArrayVar(&sets, "set", nil, "override a config key, e.g. limits.hysteresis=0.5 (repeatable)")
	f.BoolVar(&printConfig, "print-config", false, "print the merged configuration and exit")
	f.BoolVar(&check, "check", false, "validate the configuration (and the files it names), print the dry-run plan of the selected ports and exit")
	f.BoolVar(&jsonOut, "json", false, "with --check: print the configuration check and plan as JSON")
	f.String("mode", "", "observe (change nothing) or enforce (apply t_PDT) (default: the config's mode, else observe)")
	f.String("backend", "", "hw (this host's ports) or sim (a simulated network) (default: the config's backend, else hw)")
	f.String("interval", "", "decision interval (default: the config's interval, else "+agent.DefaultInterval.String()+")")
	f.String("state-dir", "", "directory of the state file (original EEE settings) (default: the config's state_dir, else $STATE_DIRECTORY or "+agent.DefaultStateDir+")")
	f.String("listen", "", "host:port of /metrics, /healthz, /readyz (default: the config's metrics.listen, else "+agent.DefaultListen+")")
	f.String("web.config.file", "", "exporter-toolkit web config (TLS, basic auth) of the metrics endpoint (metrics.web_config_file)")
	f.StringSlice("ports", nil, "port names or globs to control (ports.names)")
	f.String("log-level", "", "debug, info, warn or error (default: the config's log.level, else info)")
	f.String("log-format", "", "text or json (default: the config's log.format, else text; text leaves out the time under journald)")
	f.String("scenario", "", "simulator scenario for --backend sim")
	f.String("speed", "", "simulated seconds per wall-clock second (--backend sim)")
	return cmd
}

// newAgentBackend wires the configured backend.
func newAgentBackend(ctx context.Context, cfg agent.Config, log *slog.Logger) (agent.Backend, error) {
	switch cfg.Backend {
	case agent.BackendSim:
		be, err := simbackend.New(simbackend.FromConfig(cfg, log))
		if err != nil {
			return nil, err
		}
		return be, nil
	default:
		opts, err := hwbackend.FromConfig(cfg.HW, log)
		if err != nil {
			return nil, err
		}
		be, err := hwbackend.New(ctx, opts)
		if err != nil {
			return nil, err
		}
		return be, nil
	}
}

// runAgent runs the agent until ctx ends (SIGINT, SIGTERM), reloading
// its configuration on SIGHUP.
func runAgent(ctx context.Context, cfg agent.Config, load func() (agent.Loaded, error), stderr io.Writer) error {
	log, level := agent.NewLogger(cfg.Log, stderr)
	if w := cfg.ListenWarning(); w != "" {
		log.Warn(w)
	}
	be, err := newAgentBackend(ctx, cfg, log)
	if err != nil {
		return configs.BadInput(err)
	}
	a, err := agent.New(agent.Options{Config: cfg, Backend: be, Logger: log, Level: level,
		Notify: func(s string) { _, _ = daemon.SdNotify(false, s) },
		Reload: func() (agent.Config, error) {
			ld, err := load()
			return ld.Config, err
		},
		Version: version})
	if err != nil {
		be.Close()
		return configs.BadInput(err)
	}
	hup, stop := reloads(ctx)
	defer stop()
	return a.Run(ctx, hup)
}

// checkAgent prints the configuration check and the dry-run plan: a table
// (warnings on stderr) or JSON.
func checkAgent(cmd *cobra.Command, ld agent.Loaded, jsonOut bool) error {
	cfg := ld.Config
	// The plan is the output: the backend's operational log lines (e.g.
	// no link events without privileges) would only clutter it.
	be, err := newAgentBackend(cmd.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return configs.BadInput(err)
	}
	plan, warnings, err := agent.Plan(cmd.Context(), cfg, be, agent.PlanOptions{Actuation: agent.ActuationPath(cfg)})
	be.Close()
	if err != nil {
		return err
	}
	if w := cfg.ListenWarning(); w != "" {
		warnings = append([]string{w}, warnings...)
	}
	src := ld.File
	if src == "" {
		src = "defaults"
	}
	rep := agent.NewPlanReport(src, cfg, plan, warnings)
	if jsonOut {
		return writeJSON(cmd.OutOrStdout(), rep)
	}
	return rep.WriteTable(cmd.OutOrStdout(), cmd.ErrOrStderr())
}
