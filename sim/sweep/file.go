package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lpictl/lpictl/configs"
)

// BaseKey is the axis key that gives points different scenario files.
const BaseKey = "base"

// Sweep is a parsed sweep file (docs/sweeps.md).
type Sweep struct {
	// Name is the sweep's name (default: the file name without .yaml).
	Name string
	// Path is the sweep file as given (errors name it); Dir is its folder,
	// against which base paths are resolved.
	Path, Dir string
	// Base is the scenario file as written (relative to Dir).
	Base string
	// Set holds the overrides applied to every point, in file order.
	Set []Value
	// Axes are the factors' keys and values in column order: the axes
	// mapping in file order, then the zip groups' keys.
	Axes []Axis
	// Seeds lists the seeds of every point (nil: Repetitions, or the
	// scenario's own seed).
	Seeds []uint64
	// Repetitions (> 0) runs every point with seeds s, s+1, … from the
	// point's scenario seed s.
	Repetitions int
	// Baseline is nil without a baseline section.
	Baseline *Baseline

	data []byte // the file's bytes (copied to DIR/sweep.yaml)
	// fsys, if not nil, holds the sweep (fsName) and its base files
	// (LoadFS); fsPrefix is put before their names in errors.
	fsys             fs.FS
	fsName, fsPrefix string
	budget           int // parse: see maxValueNodes
}

// Axis is one axis key and its values. Axes of one zip group advance
// together; Group is -1 for an axis of its own.
type Axis struct {
	Key    string
	Values []Value
	Group  int
	line   int
	where  string // "axes.KEY" or "zip[G].KEY"
}

// Value is a YAML value applied to a scenario key, kept as a node so its
// type survives; Text is the value as written (plan.json, results.csv).
type Value struct {
	Key  string
	Node *yaml.Node
	Text string
	Line int
}

// Baseline turns a point into its reference run.
type Baseline struct {
	Set []Value
	// GroupBy lists the axis keys whose values the baseline keeps
	// (default: base when it is an axis).
	GroupBy []string
}

// Load reads and parses a sweep file.
func Load(path string) (*Sweep, error) {
	data, err := configs.ReadFile(path)
	if err != nil {
		return nil, inputErr(fmt.Errorf("sweep file: %w", err))
	}
	return Parse(data, path)
}

// LoadFS reads a sweep file from fsys (e.g. configs.FS, the shipped
// sweeps): its base files are read from fsys too, and errors call it
// prefix+name. Scenarios read from fsys cannot name workload files.
func LoadFS(fsys fs.FS, name, prefix string) (*Sweep, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, inputErr(fmt.Errorf("sweep file: %w", err))
	}
	s, err := Parse(data, name)
	if err != nil {
		return nil, inputErr(errors.New(prefix + err.Error()))
	}
	s.fsys, s.fsName, s.fsPrefix, s.Path = fsys, name, prefix, prefix+name
	return s, nil
}

// inputErr marks a bad sweep file, plan or sweep directory as bad input
// (configs.InputError: the CLI exits 2), its message on one line naming
// the file and the key.
func inputErr(err error) error { return &configs.InputError{Err: oneLineError{err}} }

// oneLineError writes its error's message on one line.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return oneLine(e.err.Error()) }
func (e oneLineError) Unwrap() error { return e.err }

func oneLine(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// Parse reads a sweep file; name is its path (errors name it, base paths
// are relative to its folder). It checks the file's own structure; Plan
// checks the keys and values against the scenario.
func Parse(data []byte, name string) (*Sweep, error) {
	s, err := parse(data, name)
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", name, err))
	}
	return s, nil
}

func at(n *yaml.Node, key string, format string, a ...any) error {
	return fmt.Errorf("line %d: %s: %s", n.Line, printable(key), fmt.Sprintf(format, a...))
}

func printable(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func parse(data []byte, name string) (*Sweep, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errors.New(strings.TrimPrefix(oneLine(err.Error()), "yaml: "))
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("want a mapping of keys at the top level (name, base, set, axes, zip, seeds, repetitions, baseline)")
	}
	s := &Sweep{Path: name, Dir: filepath.Dir(name), data: data, budget: maxValueNodes}
	root := doc.Content[0]
	seen := map[string]bool{}
	var axesNode, zipNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			return nil, at(k, k.Value, "duplicate key")
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			str, err := scalarString(v, "name")
			if err != nil {
				return nil, err
			}
			s.Name = str
		case "base":
			str, err := scalarString(v, "base")
			if err != nil {
				return nil, err
			}
			if str == "" {
				return nil, at(v, "base", "empty path")
			}
			s.Base = str
		case "set":
			vals, err := overrides(v, "set", &s.budget)
			if err != nil {
				return nil, err
			}
			s.Set = vals
		case "axes":
			axesNode = v
		case "zip":
			zipNode = v
		case "seeds":
			seeds, err := seedList(v)
			if err != nil {
				return nil, err
			}
			s.Seeds = seeds
		case "repetitions":
			n, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || n < 1 || n > 1<<20 {
				return nil, at(v, "repetitions", "want a count ≥ 1, got %s", describe(v))
			}
			s.Repetitions = n
		case "baseline":
			b, err := baseline(v, &s.budget)
			if err != nil {
				return nil, err
			}
			s.Baseline = b
		default:
			return nil, at(k, k.Value, "unknown key (want name, base, set, axes, zip, seeds, repetitions, baseline)")
		}
	}
	if s.Seeds != nil && s.Repetitions > 0 {
		return nil, at(root, "repetitions", "give seeds or repetitions, not both")
	}
	if s.Name == "" {
		b := filepath.Base(name)
		s.Name = strings.TrimSuffix(strings.TrimSuffix(b, ".yaml"), ".yml")
	}
	if axesNode != nil {
		if err := s.parseAxes(axesNode, -1, "axes"); err != nil {
			return nil, err
		}
	}
	if zipNode != nil {
		if zipNode.Kind != yaml.SequenceNode {
			return nil, at(zipNode, "zip", "want a list of groups, got %s", describe(zipNode))
		}
		for g, grp := range zipNode.Content {
			if err := s.parseAxes(grp, g, fmt.Sprintf("zip[%d]", g)); err != nil {
				return nil, err
			}
		}
	}
	if err := s.checkAxes(); err != nil {
		return nil, err
	}
	if s.Base == "" {
		a := s.axis(BaseKey)
		if a == nil {
			return nil, errors.New("base: missing (the scenario file, relative to the sweep file)")
		}
		s.Base = a.Values[0].Text // the baselines' when they do not keep base
	}
	if n := s.product(); n > maxPoints {
		return nil, fmt.Errorf("axes, zip: more than %d combinations", maxPoints)
	}
	if b := s.Baseline; b != nil {
		for _, k := range b.GroupBy {
			if s.axis(k) == nil {
				return nil, fmt.Errorf("baseline.group_by: %q is not an axis (axes: %s)", printable(k), strings.Join(s.AxisKeys(), ", "))
			}
		}
		if base := s.axis(BaseKey); b.GroupBy == nil && base != nil {
			// base and the axes zipped with it: a zip group advances
			// together, so its values belong to the same application
			// (e.g. each base's own workload.steps).
			b.GroupBy = []string{BaseKey}
			for _, a := range s.Axes {
				if base.Group >= 0 && a.Group == base.Group && a.Key != BaseKey {
					b.GroupBy = append(b.GroupBy, a.Key)
				}
			}
		}
	}
	return s, nil
}

// maxPoints bounds the product of the axes (before seeds).
const maxPoints = 1 << 20

// product is the number of combinations, or maxPoints+1 if larger.
func (s *Sweep) product() int {
	n := 1
	seen := map[int]bool{}
	for _, a := range s.Axes {
		if a.Group >= 0 {
			if seen[a.Group] {
				continue
			}
			seen[a.Group] = true
		}
		n *= len(a.Values)
		if n > maxPoints {
			return maxPoints + 1
		}
	}
	return n
}

// AxisKeys lists the axis keys in column order.
func (s *Sweep) AxisKeys() []string {
	keys := make([]string, len(s.Axes))
	for i, a := range s.Axes {
		keys[i] = a.Key
	}
	return keys
}

func (s *Sweep) axis(key string) *Axis {
	for i := range s.Axes {
		if s.Axes[i].Key == key {
			return &s.Axes[i]
		}
	}
	return nil
}

func (s *Sweep) parseAxes(n *yaml.Node, group int, where string) error {
	if n.Kind != yaml.MappingNode {
		return at(n, where, "want a mapping of scenario keys to lists of values, got %s", describe(n))
	}
	if len(n.Content) == 0 {
		return at(n, where, "empty")
	}
	length := -1
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		w := where + "." + k.Value
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return at(k, where, "want a scenario key such as predictor.pdt")
		}
		if v.Kind != yaml.SequenceNode {
			return at(v, w, "want a list of values, got %s", describe(v))
		}
		if len(v.Content) == 0 {
			return at(v, w, "empty list of values")
		}
		if group >= 0 {
			if length >= 0 && len(v.Content) != length {
				return at(v, w, "%d values, but the group's first list has %d (zip lists advance together)", len(v.Content), length)
			}
			length = len(v.Content)
		}
		a := Axis{Key: k.Value, Group: group, line: k.Line, where: w}
		for j, c := range v.Content {
			if k.Value == BaseKey {
				p, err := scalarString(c, fmt.Sprintf("%s[%d]", w, j))
				if err != nil {
					return err
				}
				if p == "" {
					return at(c, fmt.Sprintf("%s[%d]", w, j), "empty path")
				}
			}
			text, err := asWritten(c, &s.budget)
			if err != nil {
				return at(c, fmt.Sprintf("%s[%d]", w, j), "%v", err)
			}
			a.Values = append(a.Values, Value{Key: k.Value, Node: c, Text: text, Line: c.Line})
		}
		s.Axes = append(s.Axes, a)
	}
	return nil
}

// checkAxes rejects a key given twice (in axes, in zip groups), the seed
// (seeds or repetitions set it) and keys of which one is inside another
// (predictor and predictor.pdt: the order would decide).
func (s *Sweep) checkAxes() error {
	for i, a := range s.Axes {
		if a.Key == "seed" {
			return at(&yaml.Node{Line: a.line}, a.where, "the seed is set by seeds or repetitions, not as an axis")
		}
		for _, b := range s.Axes[:i] {
			switch {
			case a.Key == b.Key:
				return at(&yaml.Node{Line: a.line}, a.where, "duplicate axis key (also %s, line %d)", b.where, b.line)
			case strings.HasPrefix(a.Key, b.Key+"."), strings.HasPrefix(b.Key, a.Key+"."):
				return at(&yaml.Node{Line: a.line}, a.where, "overlaps %s (line %d): one key is inside the other", b.where, b.line)
			}
		}
	}
	return nil
}

func overrides(n *yaml.Node, where string, budget *int) ([]Value, error) {
	if n.Kind != yaml.MappingNode {
		return nil, at(n, where, "want a mapping of scenario keys to values, got %s", describe(n))
	}
	var vals []Value
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, at(k, where, "want a scenario key such as workload.steps")
		}
		if seen[k.Value] {
			return nil, at(k, where+"."+k.Value, "duplicate key")
		}
		seen[k.Value] = true
		text, err := asWritten(v, budget)
		if err != nil {
			return nil, at(v, where+"."+k.Value, "%v", err)
		}
		vals = append(vals, Value{Key: k.Value, Node: v, Text: text, Line: v.Line})
	}
	return vals, nil
}

func baseline(n *yaml.Node, budget *int) (*Baseline, error) {
	if n.Kind != yaml.MappingNode {
		return nil, at(n, "baseline", "want a mapping with set and group_by, got %s", describe(n))
	}
	b := &Baseline{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, at(k, "baseline."+k.Value, "duplicate key")
		}
		seen[k.Value] = true
		switch k.Value {
		case "set":
			vals, err := overrides(v, "baseline.set", budget)
			if err != nil {
				return nil, err
			}
			b.Set = vals
		case "group_by":
			if v.Kind != yaml.SequenceNode {
				return nil, at(v, "baseline.group_by", "want a list of axis keys, got %s", describe(v))
			}
			b.GroupBy = []string{}
			for j, c := range v.Content {
				key, err := scalarString(c, fmt.Sprintf("baseline.group_by[%d]", j))
				if err != nil {
					return nil, err
				}
				b.GroupBy = append(b.GroupBy, key)
			}
		default:
			return nil, at(k, "baseline."+k.Value, "unknown key (want set, group_by)")
		}
	}
	if len(b.Set) == 0 {
		return nil, at(n, "baseline.set", "missing: the overrides that turn a point into its baseline (e.g. power.mode: always-on)")
	}
	return b, nil
}

func seedList(n *yaml.Node) ([]uint64, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, at(n, "seeds", "want a non-empty list of seeds, got %s", describe(n))
	}
	var seeds []uint64
	for i, c := range n.Content {
		v, err := strconv.ParseUint(c.Value, 10, 64)
		if c.Kind != yaml.ScalarNode || err != nil || v == 0 {
			return nil, at(c, fmt.Sprintf("seeds[%d]", i), "want an integer ≥ 1, got %s", describe(c))
		}
		seeds = append(seeds, v)
	}
	return seeds, nil
}

func scalarString(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", at(n, key, "want a string, got %s", describe(n))
	}
	return n.Value, nil
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.ShortTag() == "!!null" {
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

// asWritten is a value's text as written: a scalar's value, or a list or
// mapping in YAML flow style on one line.
// budget counts the nodes the file's values may still expand to.
func asWritten(n *yaml.Node, budget *int) (string, error) {
	if n.Kind == yaml.ScalarNode {
		*budget--
		return n.Value, nil
	}
	c, err := flowCopy(n, budget, 0)
	if err != nil {
		return "", err
	}
	return marshalFlow(c)
}

// maxValueNodes bounds a sweep file's values once their aliases are
// expanded (an alias bomb is an error, not a hang).
const maxValueNodes = 100000

// flowCopy copies a node tree, in flow style, without comments, with its
// aliases expanded (budget counts the nodes left to copy).
func flowCopy(n *yaml.Node, budget *int, depth int) (*yaml.Node, error) {
	*budget--
	if *budget < 0 || depth > 100 {
		return nil, errors.New("value too large or nested too deeply (recursive alias?)")
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, errors.New("alias to nothing")
		}
		return flowCopy(n.Alias, budget, depth+1)
	}
	c := *n
	c.Anchor = ""
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	if c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode {
		c.Style = yaml.FlowStyle
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		kc, err := flowCopy(k, budget, depth+1)
		if err != nil {
			return nil, err
		}
		c.Content[i] = kc
	}
	return &c, nil
}

// yamlText is a value as YAML text on one line that reads back as the
// same node (type and quoting kept), for configs.Set.
func yamlText(n *yaml.Node) (string, error) {
	budget := maxValueNodes
	c, err := flowCopy(n, &budget, 0)
	if err != nil {
		return "", err
	}
	return marshalFlow(c)
}

func marshalFlow(c *yaml.Node) (string, error) {
	out, err := yaml.Marshal(c)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Override applies "key=value" overrides (the CLI's --set) on top of the
// sweep's set: a key already in set is replaced, a new one appended. The
// value is read as YAML, as scenario --set values are. A key that is an
// axis is refused: its values come from the axis.
func (s *Sweep) Override(sets []string) error {
	for _, o := range sets {
		key, text, ok := strings.Cut(o, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return inputErr(fmt.Errorf("--set %s: want key=value (e.g. workload.steps=486)", printable(o)))
		}
		if s.axis(key) != nil {
			return inputErr(fmt.Errorf("--set %s: %s is an axis of %s; change the axis's values instead", printable(key), printable(key), s.Path))
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
			return inputErr(fmt.Errorf("--set %s: %s", printable(key), strings.TrimPrefix(oneLine(err.Error()), "yaml: ")))
		}
		node := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		if len(doc.Content) == 1 {
			node = doc.Content[0]
		}
		written, err := asWritten(node, &s.budget)
		if err != nil {
			return inputErr(fmt.Errorf("--set %s: %w", printable(key), err))
		}
		v := Value{Key: key, Node: node, Text: written}
		replaced := false
		for i := range s.Set {
			if s.Set[i].Key == key {
				s.Set[i], replaced = v, true
			}
		}
		if !replaced {
			s.Set = append(s.Set, v)
		}
	}
	return nil
}
