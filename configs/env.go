package configs

import (
	"slices"
	"strings"
)

// Environment variable prefixes of the configurations: a key such as
// metrics.listen is LPICTL_METRICS_LISTEN for the agent, predictor.bound
// LPICTL_PREDICT_PREDICTOR_BOUND for lpictl predict and power.mode
// LPICTL_SCENARIO_POWER_MODE for a simulator scenario (lpictl sim).
const (
	EnvAgent    = "LPICTL"
	EnvPredict  = "LPICTL_PREDICT"
	EnvScenario = "LPICTL_SCENARIO"
)

// EnvConfig names the agent's config file (like --config); it is no key.
const EnvConfig = EnvAgent + "_CONFIG"

// ProjectEnv lists the LPICTL_* variables the project defines for other
// purposes than configuration keys (the agent's config file, the scripts'
// settings: scripts/slurm-local.sh, scripts/test-slurm.sh). A loader
// ignores them; any other LPICTL_* variable under its prefix that names no
// key is an error.
func ProjectEnv() []string {
	return []string{EnvConfig, "LPICTL_SLURM_DIR", "LPICTL_SLURM_PORT", "LPICTL_SLURM_TIMEOUT", "LPICTL_SLURM_TEST_TIMEOUT"}
}

// EnvName is the environment variable of a config key under prefix.
func EnvName(prefix, key string) string {
	return prefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// ownsEnv reports whether the variable name belongs to the configuration
// with prefix: it starts with prefix_, is no project variable and does
// not belong to another configuration's longer prefix (the agent's
// LPICTL_ leaves LPICTL_PREDICT_ and LPICTL_SCENARIO_ alone).
func ownsEnv(prefix, name string) bool {
	if !strings.HasPrefix(name, prefix+"_") || slices.Contains(ProjectEnv(), name) {
		return false
	}
	for _, other := range []string{EnvAgent, EnvPredict, EnvScenario} {
		if len(other) > len(prefix) && strings.HasPrefix(name, other+"_") {
			return false
		}
	}
	return true
}
