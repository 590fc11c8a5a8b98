package scenario

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// scenarioKeys lists the dotted key of every scenario field, walking the
// yaml tags of t recursively (a slice of structs as KEY[i], a map as KEY);
// a struct inside itself (a workload's jobs) is not walked again;
// a type that reads itself (yaml.Unmarshaler) is one key.
func scenarioKeys(t reflect.Type, prefix string, out *[]string, seen map[reflect.Type]bool) {
	unmarshaler := reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
		*out = append(*out, prefix)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if seen[t] { // a workload's jobs are workloads: once
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			if strings.Contains(opts, "inline") {
				scenarioKeys(f.Type, prefix, out, seen)
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			scenarioKeys(f.Type, p, out, seen)
		}
	case reflect.Slice, reflect.Array:
		if e := t.Elem(); e.Kind() == reflect.Struct || (e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct) {
			scenarioKeys(e, prefix+"[i]", out, seen)
			return
		}
		*out = append(*out, prefix)
	case reflect.Map:
		*out = append(*out, prefix)
	default:
		*out = append(*out, prefix)
	}
}

// TestEveryScenarioKeyDocumented: docs/scenario.md lacked ti, goal,
// flop_rate and eager_threshold (issue 24 item 21). Every key of the
// Scenario struct must appear in the section of its top-level key: as its
// path below that key in backticks (`synthetic.load`), its own name in
// backticks where the table row names a wildcard of its parent
// (`synthetic.*` … `load`), or under `jobs[i].*` (a job is a workload).
func TestEveryScenarioKeyDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/scenario.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, s := range strings.Split(string(data), "\n## ")[1:] {
		title, body, _ := strings.Cut(s, "\n")
		key := "" // "Top level"
		if i := strings.Index(title, "`"); i >= 0 {
			key = strings.Trim(strings.Fields(title[i:])[0], "`")
		}
		sections[key] += body
	}
	var keys []string
	scenarioKeys(reflect.TypeOf(Scenario{}), "", &keys, map[reflect.Type]bool{})
	if len(keys) < 100 {
		t.Fatalf("only %d keys found: the walk is broken", len(keys))
	}
	var missing []string
	for _, k := range keys {
		top, rel, nested := strings.Cut(k, ".")
		sec, text := top, rel
		if !nested {
			sec, text = "", top
		}
		body, ok := sections[sec]
		if !ok {
			missing = append(missing, k+" (no section)")
			continue
		}
		if documented(body, text) {
			continue
		}
		missing = append(missing, k)
	}
	if len(missing) > 0 {
		t.Errorf("%d scenario keys not in docs/scenario.md:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// documented reports whether a section's text documents key (dotted,
// relative to the section).
func documented(body, key string) bool {
	if strings.Contains(body, "`"+key+"`") {
		return true
	}
	if strings.HasPrefix(key, "jobs[i].") && strings.Contains(body, "`jobs[i].*`") {
		return true
	}
	parts := strings.Split(key, ".")
	leaf := strings.TrimSuffix(parts[len(parts)-1], "[i]")
	for i := len(parts) - 1; i > 0; i-- {
		wild := "`" + strings.Join(parts[:i], ".") + ".*`"
		for _, line := range strings.Split(body, "\n") {
			if strings.Contains(line, wild) && strings.Contains(line, "`"+leaf+"`") {
				return true
			}
		}
	}
	return false
}
