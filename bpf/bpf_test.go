package bpf

import (
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
)

// TestSpec checks the embedded object without loading it (no privileges):
// programs, maps and the Go mirrors of the C structs.
func TestSpec(t *testing.T) {
	spec, err := LoadIdlegap()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{IdlegapProgLpiEgress, IdlegapProgLpiIngress} {
		p, ok := spec.Programs[name]
		if !ok {
			t.Fatalf("program %s missing", name)
		}
		if p.Type != ebpf.SchedCLS {
			t.Errorf("%s: type %v, want SchedCLS", name, p.Type)
		}
	}
	if m := spec.Maps[IdlegapMapSamples]; m == nil || m.Type != ebpf.RingBuf {
		t.Errorf("samples map: %+v", m)
	}
	st := spec.Maps[IdlegapMapState]
	if st == nil || st.Type != ebpf.Array || st.MaxEntries != 2 {
		t.Fatalf("state map: %+v", st)
	}
	if got, want := st.ValueSize, uint32(unsafe.Sizeof(IdlegapDirState{})); got != want {
		t.Errorf("dir_state: C %d bytes, Go %d", got, want)
	}
	// Counters and histogram are per CPU, with the same value type; the
	// shared state map only carries the transmitter clock.
	pc := spec.Maps[IdlegapMapStats]
	if pc == nil || pc.Type != ebpf.PerCPUArray || pc.MaxEntries != 2 {
		t.Fatalf("stats map: %+v", pc)
	}
	if pc.ValueSize != st.ValueSize {
		t.Errorf("stats value %d bytes, state value %d", pc.ValueSize, st.ValueSize)
	}
	if got := unsafe.Sizeof(IdlegapGapSample{}); got != 24 {
		t.Errorf("gap_sample: Go %d bytes, want 24", got)
	}
	if len(IdlegapDirState{}.Hist) != 496 {
		t.Error("histogram size changed: update hwlink.HistBuckets")
	}
}
