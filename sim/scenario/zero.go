package scenario

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/lpictl/lpictl/configs"
	"go.yaml.in/yaml/v3"
)

// The zero-value rule (docs/scenario.md "Unset keys and zeros"): a key
// left out takes its default; a key given as 0 (0, 0.0, 0s, 0us, …) means
// zero. Where zero is a value the key takes, it is used (ZeroKeys);
// everywhere else an explicit 0 is an error naming the key, never a
// silent default.

// ZeroKeys are the numeric scenario keys for which 0 is a value: used as
// given. Keys of workload.jobs[i] are those of workload.
var ZeroKeys = map[string]string{
	"network.propagation":              "no cable delay",
	"network.switch_latency":           "no switch latency",
	"network.nic_latency":              "no NIC latency",
	"network.pfc_go":                   "resume only when the input buffer is empty",
	"power.hybrid_hold":                "no Fast Wake hold: on to Deep Sleep at once",
	"predictor.pdt":                    "t_PDT 0: down as soon as idle",
	"predictor.initial_pdt":            "t_PDT 0 until the histogram has data",
	"controller.hysteresis":            "no hysteresis (the default)",
	"controller.min_change_interval":   "no minimum interval (the default)",
	"controller.register.min":          "no lower clamp (the default)",
	"controller.rounds.interval":       "no rounds (the default)",
	"controller.rounds.lead":           "rounds start at the run's start",
	"controller.rounds.initial":        "initial timer 0",
	"controller.rounds.idle":           "no idle period before the run (the default)",
	"routing.powar.model.sleep_port":   "a sleeping port draws nothing",
	"routing.powar.model.ports":        "ports draw nothing",
	"routing.powar.model.net":          "the network draws nothing",
	"routing.powar.model.sleep_nodes":  "a sleeping node draws nothing",
	"output.idle_hist_port":            "port 0 (node 0's NIC)",
	"workload.imbalance":               "no imbalance (the default)",
	"workload.eager_threshold":         "every message of more than 0 bytes uses rendezvous",
	"workload.intra_latency":           "no intra-node latency",
	"workload.seed":                    "seed 0",
	"workload.stencil.allreduce_every": "no allreduce (the default)",
}

// checkZeros applies the rule to the merged document (file, environment
// and --set): the first numeric key given as 0 that is not in ZeroKeys is
// an error, returned with the key's dotted path.
func checkZeros(doc *yaml.Node) (key string, err error) {
	err = walkZeros(doc, reflect.TypeOf(Scenario{}), "", "", &key)
	return key, err
}

// walkZeros walks node n, of Go type t, at dotted key path (name, with
// list indices) and canonical key (ZeroKeys' form).
func walkZeros(n *yaml.Node, t reflect.Type, path, key string, bad *string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n == nil {
		return nil
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode && !reflect.PointerTo(t).Implements(unmarshaler):
		fields := configs.YAMLFields(t)
		for j := 0; j+1 < len(n.Content); j += 2 {
			name := n.Content[j].Value
			ft, ok := fields[name]
			if !ok {
				continue // unknown keys are configs.Load's
			}
			if err := walkZeros(n.Content[j+1], ft, join(path, name), join(key, name), bad); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && n.Kind == yaml.SequenceNode:
		// workload.jobs: each job's keys are workload's.
		parent := ""
		if i := strings.LastIndex(key, "."); i >= 0 {
			parent = key[:i]
		}
		for i, c := range n.Content {
			if err := walkZeros(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), parent, bad); err != nil {
				return err
			}
		}
	case numeric(t) && n.Kind == yaml.ScalarNode && n.Tag != "!!null": // null: unset
		v := reflect.New(t)
		if n.Decode(v.Interface()) != nil || !v.Elem().IsZero() {
			return nil // a bad value is configs.Load's error
		}
		if _, ok := ZeroKeys[key]; !ok {
			*bad = path
			return fmt.Errorf("%s: 0 is not a value of this key (leave the key out for its default)", path)
		}
	}
	return nil
}

var unmarshaler = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// numeric: t is an integer or float kind (durations and byte sizes
// included).
func numeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
