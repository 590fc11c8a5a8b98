package workload

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/topo"
)

// file is the part of a scenario LoadFile reads: the workload and
// topology sections and the seed (other top-level sections are ignored).
type file struct {
	Workload Config      `yaml:"workload"`
	Topology topo.Config `yaml:"topology"`
	Seed     uint64      `yaml:"seed"`
}

// LoadFile builds the workload of a scenario or workload file (path, ""
// for none) with --set overrides (sets) on the network its topology
// section describes, and returns it with that network's node count
// (`lpictl workload`, docs/workloads.md). Bad input is a
// configs.InputError.
func LoadFile(path string, sets []string) (*Workload, int, error) {
	var wf file
	var data []byte
	name := "--set"
	if path != "" {
		var err error
		if data, err = configs.ReadFile(path); err != nil {
			return nil, 0, configs.BadInput(err)
		}
		name = path
		if data, err = keepSections(data, "workload", "topology", "seed"); err != nil {
			return nil, 0, configs.BadInput(fmt.Errorf("%s: %w", name, err))
		}
	}
	if err := configs.Decode(data, name, &wf, sets); err != nil {
		return nil, 0, configs.BadInput(err)
	}
	if path != "" {
		wf.Workload.Resolve(filepath.Dir(path))
	}
	t, err := topo.Build(wf.Topology)
	if err != nil {
		return nil, 0, configs.BadInput(err)
	}
	w, err := Build(wf.Workload, t.Nodes(), wf.Seed)
	if err != nil {
		return nil, 0, configs.BadInput(err)
	}
	return w, t.Nodes(), nil
}

// keepSections blanks every top-level section other than keep, preserving
// line numbers, so strict decoding checks only what LoadFile reads.
func keepSections(data []byte, keep ...string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return data, nil // let configs.Decode report it
	}
	lines := strings.SplitAfter(string(data), "\n")
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if slices.Contains(keep, k.Value) {
			continue
		}
		end := len(lines) // up to the next top-level key
		if i+2 < len(m.Content) {
			end = m.Content[i+2].Line - 1
		}
		if k.Column != 1 {
			return nil, fmt.Errorf("line %d: cannot skip section %q (write it in block style)", k.Line, k.Value)
		}
		for l := k.Line - 1; l < end && l < len(lines); l++ {
			if strings.HasSuffix(lines[l], "\n") {
				lines[l] = "\n"
			} else {
				lines[l] = ""
			}
		}
	}
	return []byte(strings.Join(lines, "")), nil
}
