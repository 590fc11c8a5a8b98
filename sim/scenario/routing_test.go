package scenario

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/network"
)

// TestRoutingSection: routing.kind selects the model's routing, a bad kind
// is a one-line error naming the file and routing.kind, and explicit
// minimal routing gives the same results as no routing section.
func TestRoutingSection(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want network.Routing
	}{{"", network.RoutingMinimal}, {"routing.kind=minimal", network.RoutingMinimal}, {"routing={kind: ECMP}", network.RoutingECMP}} {
		var sets []string
		if tc.set != "" {
			sets = []string{tc.set}
		}
		s, err := Parse([]byte(small), "small.yaml", sets)
		if err != nil {
			t.Fatalf("%s: %v", tc.set, err)
		}
		b, err := s.Build()
		if err != nil {
			t.Fatalf("%s: %v", tc.set, err)
		}
		if b.Params.Routing != tc.want {
			t.Errorf("%s: routing %v, want %v", tc.set, b.Params.Routing, tc.want)
		}
	}
	_, err := Parse([]byte(small), "small.yaml", []string{"routing.kind=adaptive"})
	if err == nil || err.Error() != `small.yaml: routing.kind: unknown routing "adaptive" (want minimal, ecmp or powar)` {
		t.Errorf("routing.kind=adaptive: %v", err)
	}
	if !bytes.Equal(runJSON(t), runJSON(t, "routing.kind=minimal")) {
		t.Error("routing.kind=minimal changes the results")
	}
	if bytes.Equal(runJSON(t), runJSON(t, "routing.kind=ecmp")) {
		t.Error("routing.kind=ecmp gives the results of minimal routing on a Megafly with several spines")
	}
	// A scenario without the section serialises as before.
	s, _ := Parse([]byte(small), "small.yaml", nil)
	j, err := json.Marshal(s)
	if err != nil || strings.Contains(string(j), "routing") {
		t.Errorf("scenario JSON without a routing section: %s %v", j, err)
	}
}

// TestRoutingPOWARSection: routing.kind powar and its keys reach the
// model (unset keys take the paper's defaults and our 10 µs cycle), the
// run is deterministic and reports the powar blocks, and bad keys are
// one-line errors naming the file and the key.
func TestRoutingPOWARSection(t *testing.T) {
	s, err := Parse([]byte(small), "small.yaml", []string{"routing.kind=powar", "routing.powar.t_on=0.6", "routing.powar.cycle=5us", "routing.powar.model.net=0.2"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	c := b.Params.POWAR
	if b.Params.Routing != network.RoutingPOWAR || c.Thresholds.On != 0.6 || c.Thresholds.Off != 0.25 || c.Cycle != 5_000_000 ||
		c.Model.Net != 0.2 || c.Model.SleepPort != 0.1 || c.Model.Ports != 0.65 || c.Model.SleepNodes != 0.5 || c.FirstOn {
		t.Fatalf("routing %v, POWAR %+v", b.Params.Routing, c)
	}
	a := runJSON(t, "routing.kind=powar")
	if !bytes.Equal(a, runJSON(t, "routing.kind=powar")) {
		t.Error("routing.kind=powar: same seed, different JSON")
	}
	if !bytes.Contains(a, []byte(`"powar_model"`)) || !bytes.Contains(a, []byte(`"powar_routing"`)) {
		t.Errorf("routing.kind=powar: no powar blocks in %s", a)
	}
	m := runJSON(t, "routing.powar.model.report=true")
	if !bytes.Contains(m, []byte(`"powar_model"`)) || bytes.Contains(m, []byte(`"powar_routing"`)) {
		t.Errorf("minimal routing with routing.powar.model.report: %s", m)
	}
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"routing.powar.t_on=0.6"}, "small.yaml: routing.powar.t_on: used only with routing.kind powar (routing.kind is minimal)"},
		{[]string{"routing.kind=ecmp", "routing.powar.first_on=true"}, "small.yaml: routing.powar.first_on: used only with routing.kind powar (routing.kind is ecmp)"},
		{[]string{"routing.kind=powar", "topology={kind: hyperx}"}, "small.yaml: routing.kind: powar needs topology.kind fattree, rlft, megafly (adaptive up ports) or torus3d (aggregated links), not hyperx"},
		{[]string{"routing.kind=powar", "routing.powar.t_off=0.3"}, "small.yaml: routing.powar.t_on: must be ≥ 2 × routing.powar.t_off (0.3), got 0.5"},
		{[]string{"routing.kind=powar", "routing.powar.cycle=0"}, "small.yaml: routing.powar.cycle: must be > 0, got 0 ps"},
		{[]string{"routing.kind=powar", "power.end_to_end.enabled=true"}, "small.yaml: routing.kind: powar cannot be combined with power.end_to_end.enabled (POWAR's awake test does not model the end-to-end gate); disable one of them"},
		{[]string{"routing.powar.model.report=true", "routing.powar.model.sleep_port=1.5"}, "small.yaml: routing.powar.model.sleep_port: must be in [0, 1], got 1.5"},
		{[]string{"routing.powar.queue=true"}, "small.yaml: routing.powar.queue: used only with routing.kind powar (routing.kind is minimal)"},
		{[]string{"routing.kind=powar", "routing.powar.initial_selectable=0"}, "small.yaml: routing.powar.initial_selectable: must be ≥ 1, got 0"},
		{[]string{"routing.kind=powar", "routing.powar.retry=0"}, "small.yaml: routing.powar.retry: must be > 0, got 0 ps"},
		{[]string{"routing.kind=powar", "routing.powar.alonso=true"}, "small.yaml: routing.powar.alonso: fat trees only (topology.kind is megafly)"},
		{[]string{"routing.kind=powar", "routing.powar.torus_wait=true"}, "small.yaml: routing.powar.torus_wait: only for topology.kind torus3d (topology.kind is megafly)"},
		{[]string{"routing.kind=powar", "routing.powar.round_robin=true", "routing.powar.non_minimal=true"}, "small.yaml: routing.powar.round_robin: fat trees and the megafly's minimal paths only (topology.kind is megafly)"},
	} {
		s, err := Parse([]byte(small), "small.yaml", tc.sets)
		if err == nil {
			_, err = s.Build()
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v\nwant %s", tc.sets, err, tc.want)
		}
	}
}
