package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/lpictl/lpictl/configs"
)

// EnvPrefix is the prefix of the agent's environment variables: a key
// such as metrics.listen is LPICTL_METRICS_LISTEN.
const EnvPrefix = "LPICTL"

// EnvConfig names the config file (like --config); it is not a key.
const EnvConfig = EnvPrefix + "_CONFIG"

// DefaultConfigFile is read when no file is named and it exists.
const DefaultConfigFile = "/etc/lpictl/agent.yaml"

// LoadOptions say where the configuration comes from.
type LoadOptions struct {
	// File is the config file; "" = $LPICTL_CONFIG, else
	// $CONFIGURATION_DIRECTORY/agent.yaml (systemd), else
	// DefaultConfigFile — each only if it exists.
	File string
	// Flags are the command's flags; those named in FlagKeys override
	// config keys when set on the command line.
	Flags *pflag.FlagSet
	// FlagKeys maps flag names to config keys (e.g. "listen" → metrics.listen).
	FlagKeys map[string]string
	// Sets are --set key=value overrides, applied last.
	Sets []string
}

// Loaded is a merged configuration and where it came from.
type Loaded struct {
	Config Config
	// File is the file read ("" = none).
	File string
}

// Load merges defaults < file < LPICTL_* environment < flags (and --set)
// with viper, then decodes the result strictly into a Config (unknown keys
// and type errors name the key, and the file and line where there is one),
// fills defaults and validates it. Errors are one line.
func Load(opts LoadOptions) (Loaded, error) {
	env := os.Environ()
	envMap := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, EnvPrefix+"_") {
			envMap[k] = v
		}
	}
	file, explicit := opts.File, opts.File != ""
	if file == "" {
		if f, ok := envMap[EnvConfig]; ok && f != "" {
			file, explicit = f, true
		} else if d := envOf(env, "CONFIGURATION_DIRECTORY"); d != "" {
			file = filepath.Join(strings.SplitN(d, ":", 2)[0], "agent.yaml")
		} else {
			file = DefaultConfigFile
		}
	}
	var data []byte
	if b, err := configs.ReadFile(file); err == nil { // bounded: -c /dev/zero stops at once
		data = b
	} else if explicit || !errors.Is(err, fs.ErrNotExist) {
		return Loaded{}, fmt.Errorf("config file %s: %w", file, unwrapPathErr(err))
	} else {
		file = ""
	}
	name := file
	if name == "" {
		name = "defaults"
	}

	keys := schemaKeys(reflect.TypeOf(Config{}), "")
	v := viper.New()
	v.SetConfigType("yaml")
	if len(data) > 0 {
		// Strict first: unknown keys and type errors with their line.
		var probe Config
		if err := configs.Decode(data, name, &probe, nil); err != nil {
			return Loaded{}, err
		}
		if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
			return Loaded{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	known := map[string]string{} // env var → key
	for k := range keys {
		ev := EnvName(k)
		known[ev] = k
		if err := v.BindEnv(k, ev); err != nil {
			return Loaded{}, err
		}
	}
	var unknown []string
	for ev := range envMap {
		if _, ok := known[ev]; !ok && ev != EnvConfig {
			unknown = append(unknown, ev)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Loaded{}, fmt.Errorf("environment %s: unknown key (variables are LPICTL_ and a config key in upper case with _ for ., e.g. LPICTL_METRICS_LISTEN)", unknown[0])
	}
	changed := map[string]bool{}
	if opts.Flags != nil {
		for flag, key := range opts.FlagKeys {
			f := opts.Flags.Lookup(flag)
			if f == nil {
				return Loaded{}, fmt.Errorf("internal: no flag --%s for %s", flag, key)
			}
			if err := v.BindPFlag(key, f); err != nil {
				return Loaded{}, err
			}
			if f.Changed {
				changed[key] = true
			}
		}
	}

	// viper resolves precedence (flag > env > file); the winning values of
	// keys set by env or flags become overrides of the file's YAML tree,
	// decoded with the same strict decoder.
	var overrides []string
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		_, inEnv := envMap[EnvName(k)]
		if !inEnv && !changed[k] {
			continue
		}
		val, err := renderValue(v.Get(k), keys[k])
		if err != nil {
			return Loaded{}, fmt.Errorf("%s: %w", source(k, changed[k], opts.FlagKeys), err)
		}
		ov := k + "=" + val
		var probe Config
		if err := configs.Decode(nil, source(k, changed[k], opts.FlagKeys), &probe, []string{ov}); err != nil {
			msg := strings.Replace(err.Error(), "a --set value: ", "", 1)
			return Loaded{}, errors.New(strings.Replace(msg, "--set "+k+": ", "", 1))
		}
		overrides = append(overrides, ov)
	}
	for _, s := range opts.Sets {
		// A string key takes any text ("[::1]:9720" is not a YAML list).
		if k, val, ok := strings.Cut(s, "="); ok {
			if t, ok := keys[strings.TrimSpace(k)]; ok && t.Kind() == reflect.String {
				s = k + "=" + yamlString(val)
			}
		}
		overrides = append(overrides, s)
	}
	var cfg Config
	if err := configs.Decode(data, name, &cfg, overrides); err != nil {
		return Loaded{}, err
	}
	// Absent keys take their defaults; explicit zeros are kept (and
	// validated), except the predictor's, whose zeros mean "default".
	zeros, err := explicitZeros(data, overrides, &cfg)
	if err != nil {
		return Loaded{}, fmt.Errorf("%s: %w", name, err)
	}
	cfg = cfg.withDefaults(zeros)
	if sd := envOf(env, "STATE_DIRECTORY"); sd != "" && !isSet(data, "state_dir") && !changed["state_dir"] && envMap[EnvName("state_dir")] == "" && !setsKey(opts.Sets, "state_dir") {
		cfg.StateDir = strings.SplitN(sd, ":", 2)[0]
	}
	// A relative file named in the config file is relative to that file's
	// folder (as a scenario's trace files are); from flags, the environment
	// or --set it is relative to the working directory. Either way it is
	// made absolute, so that --print-config loads back as is from anywhere.
	for _, f := range []struct {
		key string
		val *string
	}{{"sim.scenario", &cfg.Sim.Scenario}, {"hw.hops_file", &cfg.HW.HopsFile}, {"hw.model_file", &cfg.HW.ModelFile},
		{"trace_dir", &cfg.TraceDir}, {"metrics.web_config_file", &cfg.Metrics.WebConfigFile}} {
		if *f.val == "" || filepath.IsAbs(*f.val) || strings.ContainsRune(*f.val, 0) {
			continue
		}
		p := *f.val
		if fromFile := file != "" && !changed[f.key] && envMap[EnvName(f.key)] == "" && !setsKey(opts.Sets, f.key); fromFile {
			p = filepath.Join(filepath.Dir(file), p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return Loaded{}, fmt.Errorf("%s: %s: %w", name, f.key, err)
		}
		*f.val = abs
	}
	if err := cfg.Validate(); err != nil {
		// Labelled with where the failing key's value came from: the
		// flag, the environment variable, --set or the file.
		label := name
		if key, _, ok := strings.Cut(err.Error(), ":"); ok {
			switch key = strings.TrimSpace(key); {
			case changed[key]:
				label = source(key, true, opts.FlagKeys)
			case envMap[EnvName(key)] != "":
				label = source(key, false, opts.FlagKeys)
			case setsKey(opts.Sets, key):
				label = "--set"
			}
		}
		return Loaded{}, fmt.Errorf("%s: %w", label, err)
	}
	if cfg.TraceDir != "" {
		if err := checkTraceDir(cfg.TraceDir); err != nil {
			return Loaded{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := checkWebConfig(cfg.Metrics); err != nil {
		return Loaded{}, fmt.Errorf("%s: %w", name, err)
	}
	return Loaded{Config: cfg, File: file}, nil
}

// EnvName is the environment variable of a config key.
func EnvName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func source(key string, flag bool, flagKeys map[string]string) string {
	if flag {
		for f, k := range flagKeys {
			if k == key {
				return "flag --" + f
			}
		}
	}
	return "environment " + EnvName(key)
}

func envOf(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func isSet(data []byte, key string) bool {
	var m map[string]any
	if yaml.Unmarshal(data, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

func setsKey(sets []string, key string) bool {
	for _, s := range sets {
		if k, _, _ := strings.Cut(s, "="); strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// explicitZeros returns the keys of the merged document (data with the
// overrides applied) that set a number to 0 explicitly: WithDefaults keeps
// them. An explicit 0 in a predictor section is an error: there 0 means
// "default" (predictor.Config), which an absent key already says.
func explicitZeros(data []byte, overrides []string, cfg *Config) (map[string]bool, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if len(doc.Content) != 1 {
		return nil, nil
	}
	for _, o := range overrides {
		if err := configs.Set(doc.Content[0], o); err != nil {
			return nil, err
		}
	}
	zeros := map[string]bool{}
	walkSet(doc.Content[0], reflect.ValueOf(cfg).Elem(), "", func(key string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			if v.IsZero() {
				zeros[key] = true
			}
		}
	})
	keys := make([]string, 0, len(zeros))
	for k := range zeros {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "predictor.") || strings.Contains(k, ".predictor.") {
			return nil, fmt.Errorf("%s: must not be 0 (leave the key out for its default)", k)
		}
	}
	return zeros, nil
}

// walkSet calls fn with the dotted key and the decoded field of every
// scalar (not null) that node sets, walking structs and lists of structs
// by their YAML tags.
func walkSet(n *yaml.Node, v reflect.Value, key string, fn func(key string, v reflect.Value)) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case n.Kind == yaml.MappingNode && v.Kind() == reflect.Struct && !reflect.PointerTo(v.Type()).Implements(unmarshalerType):
		for i := 0; i+1 < len(n.Content); i += 2 {
			name := n.Content[i].Value
			for j := 0; j < v.NumField(); j++ {
				f := v.Type().Field(j)
				if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.IsExported() && tag == name {
					k := name
					if key != "" {
						k = key + "." + name
					}
					walkSet(n.Content[i+1], v.Field(j), k, fn)
					break
				}
			}
		}
	case n.Kind == yaml.SequenceNode && v.Kind() == reflect.Slice:
		for i, c := range n.Content {
			if i < v.Len() {
				walkSet(c, v.Index(i), fmt.Sprintf("%s[%d]", key, i), fn)
			}
		}
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		fn(key, v)
	}
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

// renderValue writes a viper value as YAML for an override. Strings from
// the environment or flags are taken as YAML ("0.02" is a number, "10us" a
// duration); a list key also takes "a,b,c", a string key any text
// ("[::1]:9720").
func renderValue(val any, t reflect.Type) (string, error) {
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
	case []string:
		return flow(x)
	case nil:
		return "", nil
	}
	return flow(val)
}

func flow(v any) (string, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return "", err
	}
	setFlow(&n)
	b, err := yaml.Marshal(&n)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func setFlow(n *yaml.Node) {
	if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		setFlow(c)
	}
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// schemaKeys lists the dotted leaf keys of a config type by YAML tag, with
// the leaf's type: structs are walked, everything else is a leaf.
func schemaKeys(t reflect.Type, prefix string) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		ft := f.Type
		if ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(unmarshalerType) {
			for k, v := range schemaKeys(ft, key) {
				out[k] = v
			}
			continue
		}
		out[key] = ft
	}
	return out
}

// Keys lists every config key (dotted), sorted: for documentation and the
// environment variable check.
func Keys() []string {
	m := schemaKeys(reflect.TypeOf(Config{}), "")
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// YAML renders the configuration as YAML (what --print-config shows).
func (c Config) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkWebConfig validates metrics.web_config_file (its users' bcrypt
// hashes, TLS certificate and key) as the server will read it.
func checkWebConfig(m MetricsConfig) error {
	if m.WebConfigFile == "" || m.Listen == MetricsOff {
		return nil
	}
	if err := web.Validate(m.WebConfigFile); err != nil {
		return fmt.Errorf("metrics.web_config_file %s: %w (the exporter-toolkit web configuration: tls_server_config, basic_auth_users with bcrypt hashes)", m.WebConfigFile, unwrapPathErr(err))
	}
	return nil
}
