package configs

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// checkKeys walks a YAML node against the Go type it will be decoded into
// and reports the first mapping key that names no field, with its line and
// dotted path. (yaml.v3's KnownFields works only on a Decoder reading text,
// not on a node tree edited by --set.)
//
// labels name the source of values from the environment or flags (Load):
// their errors are a *labelledError, "SOURCE: message".
func checkKeys(n *yaml.Node, t reflect.Type, path string, labels map[*yaml.Node]string) error {
	for t.Kind() == reflect.Pointer {
		if reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType) {
			return nil
		}
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// yaml.v3 truncates a float into an integer field (seed: 1.5 → 1).
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
				msg := fmt.Sprintf("want an integer, got %s", printable(n.Value))
				if l, ok := labels[n]; ok {
					return &labelledError{l + ": " + msg}
				}
				if n.Line == 0 {
					return fmt.Errorf("--set %s: %s", printable(path), msg)
				}
				return fmt.Errorf("line %d: %s: %s", n.Line, printable(path), msg)
			}
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the type mismatch
		}
		fields := YAMLFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := join(path, k.Value)
			f, ok := fields[k.Value]
			if !ok {
				return fmt.Errorf("%sunknown key %q", where(k, p), p)
			}
			if n.Content[i+1].Column == setValueColumn { // type-check a --set value here, where its key is known
				if err := n.Content[i+1].Decode(reflect.New(f).Interface()); err != nil {
					if l, ok := labels[n.Content[i+1]]; ok {
						return &labelledError{l + ": " + strings.ReplaceAll(cleanError(err).Error(), "line 0: ", "")}
					}
					return fmt.Errorf("--set %s: %s", printable(p), strings.ReplaceAll(cleanError(err).Error(), "line 0: ", ""))
				}
			}
			if err := checkKeys(n.Content[i+1], f, p, labels); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkKeys(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), labels); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), labels); err != nil {
				return err
			}
		}
	}
	return nil
}

// YAMLFields maps a struct's YAML keys to field types (inline structs
// flattened): the keys Decode accepts for t, for checks that walk a
// document against its Go type (sim/scenario's zero rule).
func YAMLFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k, v := range YAMLFields(ft) {
				m[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f.Type
	}
	return m
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func where(k *yaml.Node, path string) string {
	if k.Line == 0 {
		return "--set " + printable(path) + ": "
	}
	return fmt.Sprintf("line %d: ", k.Line)
}

// printable escapes control characters so an error stays on one line.
func printable(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
