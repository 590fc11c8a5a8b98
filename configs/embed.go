package configs

import "embed"

// FS holds the shipped configuration files, under their folder names
// (presets/…, predict/…, sim/…).
//
//go:embed presets predict sim
var FS embed.FS
