package configs

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Decode reads one YAML document into out, strictly: an unknown key is an
// error. Each override is "dotted.path=value" (as --set gives it) and is
// applied to the document before decoding, so type errors still name the
// key; the value is read as YAML ("10us", "0.02", "[1, 2]"). An override
// that changes a KindSection's kind drops the section's other keys from
// the file first. Errors read
// "NAME: line N: …" or "NAME: --set KEY: …", on one line.
func Decode(data []byte, name string, out any, overrides []string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", name, cleanError(err))
	}
	if doc.Kind == 0 { // empty file
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a mapping of keys at the top level", name)
	}
	for _, o := range overrides {
		resetKind(doc.Content[0], reflect.TypeOf(out), o)
		if err := Set(doc.Content[0], o); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := checkKeys(doc.Content[0], reflect.TypeOf(out), "", nil); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := doc.Decode(out); err != nil {
		// Values from --set have no line in the file.
		msg := strings.ReplaceAll(cleanError(err).Error(), "line 0: ", "a --set value: ")
		return fmt.Errorf("%s: %s", name, msg)
	}
	return nil
}

// Set applies one "dotted.path=value" override to a mapping node, creating
// intermediate mappings as needed.
func Set(root *yaml.Node, override string) error {
	_, err := set(root, override)
	return err
}

// set is Set returning the value's node.
func set(root *yaml.Node, override string) (*yaml.Node, error) {
	key, value, ok := strings.Cut(override, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return nil, fmt.Errorf("--set %s: want key=value (e.g. predictor.bound=0.02)", printable(override))
	}
	var val yaml.Node
	if err := yaml.Unmarshal([]byte(value), &val); err != nil {
		return nil, fmt.Errorf("--set %s: %w", printable(key), cleanError(err))
	}
	vnode := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(val.Content) == 1 {
		vnode = val.Content[0]
	}
	clearLines(vnode)
	vnode.Column = setValueColumn
	n := root
	parts := strings.Split(key, ".")
	for i, part := range parts {
		if part == "" {
			return nil, fmt.Errorf("--set %s: empty path element", printable(key))
		}
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("--set %s: %s is not a mapping", printable(key), printable(strings.Join(parts[:i], ".")))
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == part {
				next = n.Content[j+1]
				if i == len(parts)-1 {
					n.Content[j+1] = vnode
				}
				break
			}
		}
		if next == nil {
			if i == len(parts)-1 {
				next = vnode
			} else {
				next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: part}, next)
		}
		n = next
	}
	return vnode, nil
}

// setValueColumn marks the root node of a --set value (no file position),
// so that checkKeys type-checks it where the key is known.
const setValueColumn = -1

func clearLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		clearLines(c)
	}
}

// cleanError makes yaml.v3's errors one line without the "yaml: " prefix.
func cleanError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	msg = strings.ReplaceAll(msg, "\n", " ")
	return errors.New(msg)
}

// KindSection is implemented by a configuration section whose keys depend
// on its kind (a workload, a topology). A --set that changes such a
// section's kind ("workload.kind=goal" over a file's "kind: synthetic")
// first drops the keys the file gave the section besides its kind: they
// belong to the previous kind (a synthetic workload's duration makes no
// sense for a GOAL trace). Keys given by --set are kept, whatever their
// order.
type KindSection interface{ KindSection() }

var kindSectionType = reflect.TypeOf((*KindSection)(nil)).Elem()

// resetKind applies KindSection's rule for one override to root, the
// document decoded into a t.
func resetKind(root *yaml.Node, t reflect.Type, override string) {
	key, value, ok := strings.Cut(override, "=")
	parts := strings.Split(strings.TrimSpace(key), ".")
	if !ok || len(parts) < 2 || parts[len(parts)-1] != "kind" {
		return
	}
	n := root
	for _, part := range parts[:len(parts)-1] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
			return
		}
		ft, ok := YAMLFields(t)[part]
		if !ok {
			return
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == part {
				next = n.Content[j+1]
			}
		}
		if next == nil {
			return
		}
		n, t = next, ft
	}
	if n.Kind != yaml.MappingNode || !(t.Implements(kindSectionType) || reflect.PointerTo(t).Implements(kindSectionType)) {
		return
	}
	var newKind yaml.Node
	if yaml.Unmarshal([]byte(value), &newKind) != nil || len(newKind.Content) != 1 || newKind.Content[0].Kind != yaml.ScalarNode {
		return // Set reports it
	}
	old := -1
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == "kind" {
			old = j
		}
	}
	if old < 0 || n.Content[old+1].Kind != yaml.ScalarNode || n.Content[old+1].Value == newKind.Content[0].Value {
		return // no kind to change from, or the same kind
	}
	kept := n.Content[:0]
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == "kind" || n.Content[j].Line == 0 { // the kind, or a --set key
			kept = append(kept, n.Content[j], n.Content[j+1])
		}
	}
	n.Content = kept
}
