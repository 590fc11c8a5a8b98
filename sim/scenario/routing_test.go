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
	if err == nil || err.Error() != `small.yaml: routing.kind: unknown routing "adaptive" (want minimal or ecmp)` {
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
