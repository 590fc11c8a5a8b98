package main

import (
	"encoding/json"
	"io"
)

// writeJSON writes v as indented JSON, the one shape every --json output of
// lpictl has (two-space indent, one trailing newline).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
