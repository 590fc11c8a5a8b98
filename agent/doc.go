// Package agent is lpictl's daemon (`lpictl agent`): one per Linux node or
// switch, started by systemd. It selects ports from a [Backend] — real ones
// (package agent/hwbackend over hwlink) or simulated ones (agent/simbackend)
// — runs one controller.Port per port on the backend's idle-period
// observations, and exports what it sees and decides to Prometheus.
//
// Configuration ([Config], [Load]) merges defaults, a YAML file, LPICTL_*
// environment variables, flags and --set with configs.Load (viper for the
// layers) and decodes the result strictly. SIGHUP reloads it without losing the state of unchanged ports.
//
// Safety ([Agent]): in observe mode nothing is changed. In enforce mode a
// port's original EEE settings are written atomically to the state file
// ([StateFile]) before its first change and restored on stop, on a mode
// change, when the port is deselected or quarantined, and at the next start
// after a crash. Changes are paced by the controller's hysteresis and
// minimum change interval; a carrier flap after a change backs the port
// off exponentially, and repeated flaps quarantine it. Only the tx LPI
// timer is ever written: never the EEE advertisement, never EEE or tx LPI
// on/off (except restoring them).
//
// Each round the agent drains every port's ended idle periods; the
// controller decides the t_PDT of each at its start and learns the outcome
// of that decision, so that a port trace (Config.TraceDir, written when the
// agent stops; ReadTraceInfo) replays through controller/replay decision by
// decision (docs/agent.md "Decisions" and "Port traces").
//
// Metrics are served on a registry the agent owns (/metrics, /healthz,
// /readyz); docs/agent.md lists them.
package agent
