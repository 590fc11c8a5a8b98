package configs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// LoadOptions say where a configuration comes from, lowest layer first:
// a file, the environment, flags, --set overrides.
type LoadOptions struct {
	// Data is the file's contents (nil: no file) and Name what errors
	// call it (its path, configs/… for a shipped one, "defaults").
	Data []byte
	Name string
	// EnvPrefix is the prefix of the configuration's environment
	// variables (EnvAgent, EnvPredict, EnvScenario); "" reads none.
	// EnvExample is a key the unknown-variable error cites.
	EnvPrefix, EnvExample string
	// Flags are the command's flags; those named in FlagKeys (flag name
	// → key) override the key when set on the command line.
	Flags    *pflag.FlagSet
	FlagKeys map[string]string
	// Sets are --set key=value overrides, applied last.
	Sets []string
}

// Layers tells where a loaded configuration's keys came from.
type Layers struct {
	// Name is the file's name (LoadOptions.Name).
	Name string
	// Doc is the merged document (the file with the other layers
	// applied); values from the other layers have no line.
	Doc  *yaml.Node
	env  map[string]string // key → variable
	flag map[string]string // key → flag
	set  map[string]bool   // key given by --set
}

// Source names where key's value came from: "--set", "flag --NAME",
// "environment VAR", else the file's name.
func (l *Layers) Source(key string) string {
	switch {
	case l.set[key]:
		return "--set"
	case l.flag[key] != "":
		return "flag --" + l.flag[key]
	case l.env[key] != "":
		return "environment " + l.env[key]
	}
	return l.Name
}

// Overridden reports whether a layer above the file (environment, flag,
// --set) gave key.
func (l *Layers) Overridden(key string) bool { return l.Source(key) != l.Name }

// Given reports whether any layer, the file included, gave the top-level
// or dotted key.
func (l *Layers) Given(key string) bool { return lookup(l.Doc, key) != nil }

// Load merges a configuration into dst (a pointer to its struct) from
// file < environment < flags < --set, strictly: an unknown key, in the
// file, a variable under EnvPrefix (ProjectEnv aside) or --set, and a
// value of the wrong type are errors that name the key and the file and
// line, the variable, the flag or the --set. Values of the environment and
// flags are YAML ("10us", "0.02"); a string key takes any text and a list
// key also "a,b,c". Errors are one line.
//
// viper holds the layers and resolves which one gives each key; the file
// and the result are YAML node trees decoded by yaml.v3 (strict keys,
// lines, the types' UnmarshalYAML), which viper's map cannot give.
func Load(opts LoadOptions, dst any) (*Layers, error) {
	t := reflect.TypeOf(dst)
	if len(opts.Data) > 0 { // strict first: the file's errors with their lines
		if err := Decode(opts.Data, opts.Name, reflect.New(t.Elem()).Interface(), nil); err != nil {
			return nil, err
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(opts.Data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Name, cleanError(err))
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	l := &Layers{Name: opts.Name, Doc: doc.Content[0], env: map[string]string{}, flag: map[string]string{}, set: map[string]bool{}}
	keys := LeafKeys(t)
	v, err := l.bind(opts, keys)
	if err != nil {
		return nil, err
	}
	// viper's winner of each key given by the environment or a flag
	// becomes a node of the tree; --set, the top layer, is applied last.
	labels := map[*yaml.Node]string{}
	for _, k := range sortedKeys(keys) {
		if l.set[k] || (l.flag[k] == "" && l.env[k] == "") {
			continue
		}
		text, err := yamlText(v.Get(k), keys[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Source(k), err)
		}
		resetKind(l.Doc, t, k+"="+text)
		n, err := set(l.Doc, k+"="+text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Source(k), err)
		}
		labels[n] = l.Source(k)
	}
	for _, s := range opts.Sets {
		if k, val, ok := strings.Cut(s, "="); ok && keys[strings.TrimSpace(k)] != nil && keys[strings.TrimSpace(k)].Kind() == reflect.String {
			s = k + "=" + yamlString(val) // a string key takes any text ("[::1]:9720" is no list)
		}
		resetKind(l.Doc, t, s)
		if _, err := set(l.Doc, s); err != nil {
			return nil, fmt.Errorf("%s: %w", opts.Name, err)
		}
	}
	if err := checkKeys(l.Doc, t, "", labels); err != nil {
		var le *labelledError
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", opts.Name, err)
	}
	if err := l.Doc.Decode(dst); err != nil {
		msg := strings.ReplaceAll(cleanError(err).Error(), "line 0: ", "a --set value: ")
		return nil, fmt.Errorf("%s: %s", opts.Name, msg)
	}
	return l, nil
}

// bind puts the layers into viper: the file, the environment variables of
// known keys (refusing unknown ones), the flags and --set's keys.
func (l *Layers) bind(opts LoadOptions, keys map[string]reflect.Type) (*viper.Viper, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if len(opts.Data) > 0 {
		if err := v.ReadConfig(bytes.NewReader(opts.Data)); err != nil {
			return nil, fmt.Errorf("%s: %w", opts.Name, err)
		}
	}
	if opts.EnvPrefix != "" {
		known := map[string]string{} // variable → key
		for k := range keys {
			ev := EnvName(opts.EnvPrefix, k)
			known[ev] = k
			if err := v.BindEnv(k, ev); err != nil {
				return nil, err
			}
		}
		var unknown []string
		for _, kv := range os.Environ() {
			name, val, _ := strings.Cut(kv, "=")
			if !ownsEnv(opts.EnvPrefix, name) {
				continue
			}
			if k, ok := known[name]; ok {
				if val != "" { // empty is unset, as viper reads it
					l.env[k] = name
				}
			} else {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return nil, fmt.Errorf("environment %s: unknown key (variables are %s_ and a config key in upper case with _ for ., e.g. %s)",
				unknown[0], opts.EnvPrefix, EnvName(opts.EnvPrefix, opts.EnvExample))
		}
	}
	if opts.Flags != nil {
		for flag, key := range opts.FlagKeys {
			f := opts.Flags.Lookup(flag)
			if f == nil {
				return nil, fmt.Errorf("internal: no flag --%s for %s", flag, key)
			}
			if err := v.BindPFlag(key, f); err != nil {
				return nil, err
			}
			if f.Changed {
				l.flag[key] = flag
			}
		}
	}
	for _, s := range opts.Sets {
		k, val, _ := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		l.set[k] = true
		if keys[k] != nil {
			v.Set(k, val)
		}
	}
	return v, nil
}

// LeafKeys lists the dotted leaf keys of a configuration type by YAML tag,
// with their types: structs are walked (inline ones flattened), anything
// else (a value with its own UnmarshalYAML, a list, a map) is a leaf.
func LeafKeys(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for name, ft := range YAMLFields(t) {
		et := ft
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		if et.Kind() == reflect.Struct && !reflect.PointerTo(et).Implements(unmarshalerType) {
			for k, v := range LeafKeys(et) {
				out[name+"."+k] = v
			}
			continue
		}
		out[name] = ft
	}
	return out
}

func sortedKeys(m map[string]reflect.Type) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// labelledError is an error of a value from the environment or a flag,
// named by its source rather than the file.
type labelledError struct{ msg string }

func (e *labelledError) Error() string { return e.msg }

// lookup finds the node of a dotted key in a mapping (nil: absent).
func lookup(n *yaml.Node, key string) *yaml.Node {
	for _, part := range strings.Split(key, ".") {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == part {
				next = n.Content[j+1]
			}
		}
		n = next
	}
	return n
}

// yamlText writes a value viper read from the environment or a flag as
// YAML for key type t: a string is YAML text, except for a string key
// (any text) and a list key ("a,b,c" too).
func yamlText(val any, t reflect.Type) (string, error) {
	switch x := val.(type) {
	case string:
		if t.Kind() == reflect.String {
			return yamlString(x), nil
		}
		if t.Kind() == reflect.Slice && !strings.HasPrefix(strings.TrimSpace(x), "[") {
			parts := []string{}
			for _, p := range strings.Split(x, ",") {
				if p = strings.TrimSpace(p); p != "" {
					parts = append(parts, p)
				}
			}
			return flow(parts)
		}
		return x, nil
	case nil:
		return "", nil
	}
	return flow(val)
}

// yamlString is text as the YAML value of a string key: as given when it
// reads as one YAML scalar (so "'quoted'" still works), else quoted.
func yamlString(text string) string {
	var n yaml.Node
	if yaml.Unmarshal([]byte(text), &n) == nil && (n.Kind == 0 || len(n.Content) == 1 && n.Content[0].Kind == yaml.ScalarNode) {
		return text
	}
	q, err := flow(text)
	if err != nil {
		return text
	}
	return q
}

// flow writes v as one line of YAML.
func flow(v any) (string, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return "", err
	}
	var setFlow func(*yaml.Node)
	setFlow = func(n *yaml.Node) {
		if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
			n.Style = yaml.FlowStyle
		}
		for _, c := range n.Content {
			setFlow(c)
		}
	}
	setFlow(&n)
	b, err := yaml.Marshal(&n)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
