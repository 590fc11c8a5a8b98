package scenario

import (
	"bytes"
	"testing"
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
		{[]string{hx, "power.consolidation={kind: tcep, hwm: 1}"}, "small.yaml: power.consolidation.hwm: must be in (0, 1), got 1"},
		{[]string{hx, "power.consolidation.kind=tcep", "routing.kind=ecmp"}, "small.yaml: power.consolidation.kind: tcep routes with PAL and needs routing.kind minimal, not ecmp"},
	} {
		_, err := Parse([]byte(small), "small.yaml", tc.sets)
		if err == nil || !bytes.HasPrefix([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%v: %v, want %q", tc.sets, err, tc.want)
		}
	}
}
