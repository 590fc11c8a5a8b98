package configs

import (
	"embed"
)

// FS holds the shipped configuration files, under their folder names
// (presets/…, predict/…, sim/…, hil/…, sweeps/…).
//
//go:embed presets predict sim hil sweeps/*.yaml
var FS embed.FS

// Read returns the file at path, or with an empty path the shipped file
// def (a name in FS, e.g. "sim/quick.yaml"); name is what errors should
// call it ("configs/" + def for the shipped one).
func Read(path, def string) (data []byte, name string, err error) {
	if path == "" {
		data, err = FS.ReadFile(def)
		return data, "configs/" + def, err
	}
	data, err = ReadFile(path)
	return data, path, err
}
