// Package configs holds lpictl's shipped configuration files — power presets
// from the papers, simulator scenarios, predictor examples, the agent's
// default config — and embeds them, so the binary can run its built-in
// defaults anywhere. Files are data: every number from a paper lives here,
// not in code.
package configs
