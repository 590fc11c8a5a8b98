package scenario

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/configs"
)

// TestConsolidationSection: power.consolidation reaches the model, the run
// is deterministic and reports the consolidation block, and bad keys are
// refused with one line naming the file and the key.
func TestConsolidationSection(t *testing.T) {
	hx := "topology={kind: hyperx, dims: [4, 4], nodes_per_switch: 2}"
	s, err := Parse([]byte(small), "small.yaml", []string{hx, "power.consolidation={kind: tcep, hwm: 0.6, activation_epoch: 2us}"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	c := b.Params.TCEP
	if !c.Enabled || c.Hwm != 0.6 || c.ActivationEpoch != 2_000_000 || c.DeactivationEpoch != 10_000_000 || c.NoIndirect {
		t.Fatalf("TCEP %+v", c)
	}
	// The preset's off state (eee-400g: paper 004's 0 W and 1 µs).
	if b.Params.EEE.WakeOff != 1_000_000 || b.Params.Power.OffW != 0 {
		t.Errorf("off state: wake %d ps, %v W", b.Params.EEE.WakeOff, b.Params.Power.OffW)
	}
	s, err = Parse([]byte(small), "small.yaml", []string{hx, "power.consolidation={kind: tcep, window: 100us, warmup: 1ms}"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err = s.Build(); err != nil || b.Params.TCEP.Window != 100_000_000 || b.Params.TCEP.Warmup != 1_000_000_000 {
		t.Fatalf("window, warmup: %+v, %v", b.Params.TCEP, err)
	}
	// A preset without an off state cannot switch links off: bad input
	// at Build, naming the key.
	s, err = Parse([]byte(small), "small.yaml", []string{hx, "power.consolidation.kind=tcep", "power.preset=eee-100g"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(); err == nil || !configs.IsBadInput(err) || !strings.Contains(err.Error(), "power.preset: eee-100g has no off state") {
		t.Errorf("preset without off: %v", err)
	}
	for v, want := range map[string]bool{"false": true, "true": false} {
		s, err := Parse([]byte(small), "small.yaml", []string{hx, "power.consolidation={kind: tcep, indirect_activation: " + v + "}"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		if b.Params.TCEP.NoIndirect != want {
			t.Errorf("indirect_activation %s: NoIndirect %v, want %v", v, b.Params.TCEP.NoIndirect, want)
		}
	}
	a := runJSON(t, hx, "power.consolidation.kind=tcep")
	if !bytes.Equal(a, runJSON(t, hx, "power.consolidation.kind=tcep")) {
		t.Error("same seed, different JSON")
	}
	if !bytes.Contains(a, []byte(`"consolidation"`)) || !bytes.Contains(a, []byte(`"violations": 0`)) {
		t.Errorf("no consolidation block in %s", a)
	}
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"power.consolidation.kind=tcep"}, "small.yaml: power.consolidation.kind: tcep needs topology.kind hyperx or fbfly (fully connected subnetworks), not "},
		{[]string{hx, "power.consolidation.kind=slac"}, `small.yaml: power.consolidation.kind: unknown kind "slac" (want none or tcep)`},
		{[]string{hx, "power.consolidation.hwm=0.5"}, "small.yaml: power.consolidation.hwm: used only with power.consolidation.kind tcep"},
		{[]string{hx, "power.consolidation.indirect_activation=false"}, "small.yaml: power.consolidation.indirect_activation: used only with power.consolidation.kind tcep"},
		{[]string{hx, "power.consolidation.window=10us"}, "small.yaml: power.consolidation.window: used only with power.consolidation.kind tcep"},
		{[]string{hx, "power.consolidation.warmup=10us"}, "small.yaml: power.consolidation.warmup: used only with power.consolidation.kind tcep"},
		{[]string{hx, "power.consolidation={kind: tcep, hwm: 1}"}, "small.yaml: power.consolidation.hwm: must be in (0, 1), got 1"},
		{[]string{hx, "power.consolidation={kind: tcep, inner_min: 3}"}, "small.yaml: power.consolidation.inner_min: must be 1 or 2, got 3"},
		{[]string{hx, "power.consolidation.inner_min=1"}, "small.yaml: power.consolidation.inner_min: used only with power.consolidation.kind tcep"},
		{[]string{hx, "power.consolidation.control_packets=true"}, "small.yaml: power.consolidation.control_packets: used only with power.consolidation.kind tcep"},
		{[]string{hx, "power.consolidation.kind=tcep", "routing.kind=ecmp"}, "small.yaml: power.consolidation.kind: tcep routes with PAL and needs routing.kind minimal, not ecmp"},
	} {
		_, err := Parse([]byte(small), "small.yaml", tc.sets)
		if err == nil || !bytes.HasPrefix([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%v: %v, want %q", tc.sets, err, tc.want)
		}
	}
}
