package configs

import "embed"

// FS holds the shipped configuration files, under their folder names
// (presets/…, predict/…, sim/…, hil/…).
//
//go:embed presets predict sim hil
var FS embed.FS
