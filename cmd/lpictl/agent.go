package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/agent/simbackend"
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
	"scenario":        "sim.scenario",
	"speed":           "sim.speed",
}

func newAgentCommand() *cobra.Command {
	var (
		file        string
		sets        []string
		printConfig bool
		check       bool
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the link power agent: one controller per selected port, metrics on /metrics",
		Long: `agent watches the selected ports (hardware, or simulated with --backend sim), runs one
controller per port and exports what it sees and decides to Prometheus. In observe mode (the
default) it changes nothing; in enforce mode it sets each port's EEE tx LPI timer, recording
the original settings first and restoring them when it stops (or at the next start after a crash).

Configuration: defaults < file (--config, $LPICTL_CONFIG, /etc/lpictl/agent.yaml) < LPICTL_*
environment variables < flags and --set. See docs/agent.md and configs/agent.yaml.
SIGHUP reloads the configuration; SIGTERM/SIGINT restore the ports and stop.`,
		Example: `  lpictl agent --check -c /etc/lpictl/agent.yaml
  lpictl agent --print-config --mode enforce --ports 'eth*'
  lpictl agent --backend sim --scenario configs/sim/quick.yaml --listen 127.0.0.1:9720`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			load := func() (agent.Loaded, error) {
				return agent.Load(agent.LoadOptions{File: file, Flags: cmd.Flags(), FlagKeys: agentFlagKeys, Sets: sets})
			}
			ld, err := load()
			if err != nil {
				return badInput(err)
			}
			cfg := ld.Config
			if printConfig {
				out, err := cfg.YAML()
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			log, level := agent.NewLogger(cfg.Log, cmd.ErrOrStderr())
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if check {
				be, err := newAgentBackend(ctx, cfg, log)
				if err != nil {
					return badInput(err)
				}
				be.Close()
				if w := cfg.ListenWarning(); w != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "lpictl: warning: %s\n", w)
				}
				src := ld.File
				if src == "" {
					src = "defaults"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "configuration OK (%s; mode %s, backend %s)\n", src, cfg.Mode, cfg.Backend)
				return nil
			}
			if w := cfg.ListenWarning(); w != "" {
				log.Warn(w)
			}
			be, err := newAgentBackend(ctx, cfg, log)
			if err != nil {
				return badInput(err)
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
				return badInput(err)
			}
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGHUP)
			defer signal.Stop(sig)
			hup := make(chan struct{}, 1)
			go func() {
				for range sig {
					select {
					case hup <- struct{}{}:
					default:
					}
				}
			}()
			return a.Run(ctx, hup)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "config", "c", "", "config file (default $LPICTL_CONFIG, else /etc/lpictl/agent.yaml if it exists)")
	f.StringArrayVar(&sets, "set", nil, "override a config key, e.g. limits.hysteresis=0.5 (repeatable)")
	f.BoolVar(&printConfig, "print-config", false, "print the merged configuration and exit")
	f.BoolVar(&check, "check", false, "validate the configuration (and the files it names) and exit")
	f.String("mode", "", "observe (change nothing) or enforce (apply t_PDT) (default: the config's mode, else observe)")
	f.String("backend", "", "hw (this host's ports) or sim (a simulated network) (default: the config's backend, else hw)")
	f.String("interval", "", "decision interval (default: the config's interval, else "+agent.DefaultInterval.String()+")")
	f.String("state-dir", "", "directory of the state file (original EEE settings) (default: the config's state_dir, else $STATE_DIRECTORY or "+agent.DefaultStateDir+")")
	f.String("listen", "", "host:port of /metrics, /healthz, /readyz (default: the config's metrics.listen, else "+agent.DefaultListen+")")
	f.String("web.config.file", "", "exporter-toolkit web config (TLS, basic auth) of the metrics endpoint (metrics.web_config_file)")
	f.StringSlice("ports", nil, "port names or globs to control (ports.names)")
	f.String("log-level", "", "debug, info, warn or error (default: the config's log.level, else info)")
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
