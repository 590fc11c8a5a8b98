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
	"go.yaml.in/yaml/v3"

	"github.com/lpictl/lpictl/configs"
)

// EnvPrefix is the prefix of the agent's environment variables: a key
// such as metrics.listen is LPICTL_METRICS_LISTEN.
const EnvPrefix = configs.EnvAgent

// EnvConfig names the config file (like --config); it is not a key.
const EnvConfig = configs.EnvConfig

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

// Load merges defaults < file < LPICTL_* environment < flags < --set with
// configs.Load (strict keys; errors name the key, and the file and line
// where there is one), fills defaults and validates the result. Errors
// are one line.
func Load(opts LoadOptions) (Loaded, error) {
	data, file, err := readConfigFile(opts.File)
	if err != nil {
		return Loaded{}, err
	}
	name := file
	if name == "" {
		name = "defaults"
	}
	var cfg Config
	l, err := configs.Load(configs.LoadOptions{Data: data, Name: name, EnvPrefix: EnvPrefix, EnvExample: "metrics.listen",
		Flags: opts.Flags, FlagKeys: opts.FlagKeys, Sets: opts.Sets}, &cfg)
	if err != nil {
		return Loaded{}, err
	}
	// Absent keys take their defaults; explicit zeros are kept (and
	// validated), except the predictor's, whose zeros mean "default".
	zeros, err := explicitZeros(l.Doc, &cfg)
	if err != nil {
		return Loaded{}, fmt.Errorf("%s: %w", name, err)
	}
	cfg = cfg.withDefaults(zeros)
	if sd := os.Getenv("STATE_DIRECTORY"); sd != "" && !l.Given("state_dir") {
		cfg.StateDir = strings.SplitN(sd, ":", 2)[0]
	}
	if err := absPaths(&cfg, l, file); err != nil {
		return Loaded{}, err
	}
	if err := cfg.Validate(); err != nil {
		// Labelled with where the failing key's value came from: the
		// flag, the environment variable, --set or the file.
		label := name
		if key, _, ok := strings.Cut(err.Error(), ":"); ok {
			label = l.Source(strings.TrimSpace(key))
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

// readConfigFile reads the named file, else the first of $LPICTL_CONFIG
// (which must exist), $CONFIGURATION_DIRECTORY/agent.yaml and
// DefaultConfigFile that exists; file is "" for none.
func readConfigFile(file string) (data []byte, _ string, err error) {
	explicit := file != ""
	if file == "" {
		if f := os.Getenv(EnvConfig); f != "" {
			file, explicit = f, true
		} else if d := os.Getenv("CONFIGURATION_DIRECTORY"); d != "" {
			file = filepath.Join(strings.SplitN(d, ":", 2)[0], "agent.yaml")
		} else {
			file = DefaultConfigFile
		}
	}
	data, err = configs.ReadFile(file) // bounded: -c /dev/zero stops at once
	switch {
	case err == nil:
		return data, file, nil
	case explicit || !errors.Is(err, fs.ErrNotExist):
		return nil, "", fmt.Errorf("config file %s: %w", file, unwrapPathErr(err))
	}
	return nil, "", nil
}

// absPaths makes the files the configuration names absolute, so that
// --print-config loads back as is from anywhere: a relative one named in
// the config file is relative to that file's folder (as a scenario's trace
// files are); from flags, the environment or --set to the working
// directory.
func absPaths(cfg *Config, l *configs.Layers, file string) error {
	for _, f := range []struct {
		key string
		val *string
	}{{"sim.scenario", &cfg.Sim.Scenario}, {"hw.hops_file", &cfg.HW.HopsFile}, {"hw.model_file", &cfg.HW.ModelFile},
		{"trace_dir", &cfg.TraceDir}, {"metrics.web_config_file", &cfg.Metrics.WebConfigFile}} {
		if *f.val == "" || filepath.IsAbs(*f.val) || strings.ContainsRune(*f.val, 0) {
			continue
		}
		p := *f.val
		if file != "" && !l.Overridden(f.key) {
			p = filepath.Join(filepath.Dir(file), p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", l.Name, f.key, err)
		}
		*f.val = abs
	}
	return nil
}

// EnvName is the environment variable of a config key.
func EnvName(key string) string { return configs.EnvName(EnvPrefix, key) }

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// explicitZeros returns the keys of the merged document that set a number to 0 explicitly: WithDefaults keeps
// them. An explicit 0 in a predictor section is an error: there 0 means
// "default" (predictor.Config), which an absent key already says.
func explicitZeros(doc *yaml.Node, cfg *Config) (map[string]bool, error) {
	zeros := map[string]bool{}
	walkSet(doc, reflect.ValueOf(cfg).Elem(), "", func(key string, v reflect.Value) {
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

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// Keys lists every config key (dotted), sorted: for documentation and the
// environment variable check.
func Keys() []string {
	m := configs.LeafKeys(reflect.TypeOf(Config{}))
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
