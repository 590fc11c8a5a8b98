package bpf

import (
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
)

// TestEeeemuSpec checks the emulator's embedded object without loading it
// (no privileges): its program, its two one-entry maps, the memory-mapped
// configuration, the events ring buffer and the Go mirrors of the C
// structs. struct emu_event is in no map's BTF (ring buffers have no value
// type): hwlink decodes it by offset, and TestEmulatorMatchesModel checks
// every decoded event against the Go model. Loading, the verifier
// and the state machine are tested in hwlink (emulate_linux_test.go).
func TestEeeemuSpec(t *testing.T) {
	spec, err := LoadEeeemu()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := spec.Programs[EeeemuProgEeeEgress]
	if !ok {
		t.Fatalf("program %s missing", EeeemuProgEeeEgress)
	}
	if p.Type != ebpf.SchedCLS {
		t.Errorf("%s: type %v, want SchedCLS", EeeemuProgEeeEgress, p.Type)
	}
	const mmapable = 1 << 10 // BPF_F_MMAPABLE
	cfg := spec.Maps[EeeemuMapConfig]
	if cfg == nil || cfg.Type != ebpf.Array || cfg.MaxEntries != 1 || cfg.Flags&mmapable == 0 {
		t.Fatalf("config map: %+v", cfg)
	}
	if got, want := cfg.ValueSize, uint32(unsafe.Sizeof(EeeemuEmuConfig{})); got != want {
		t.Errorf("emu_config: C %d bytes, Go %d", got, want)
	}
	st := spec.Maps[EeeemuMapState]
	if st == nil || st.Type != ebpf.Array || st.MaxEntries != 1 || st.Flags&mmapable != 0 {
		t.Fatalf("state map: %+v", st)
	}
	if got, want := st.ValueSize, uint32(unsafe.Sizeof(EeeemuEmuState{})); got != want {
		t.Errorf("emu_state: C %d bytes, Go %d", got, want)
	}
	// The program reads the fields user space writes one at a time; each
	// must be 8-byte aligned so that a write is never seen half done.
	var c EeeemuEmuConfig
	for name, off := range map[string]uintptr{
		"pdt_ns": unsafe.Offsetof(c.PdtNs), "ns_per_byte_q16": unsafe.Offsetof(c.NsPerByteQ16),
		"clock_override_ns": unsafe.Offsetof(c.ClockOverrideNs), "mode": unsafe.Offsetof(c.Mode),
	} {
		if off%8 != 0 {
			t.Errorf("emu_config.%s at offset %d: not 8-byte aligned", name, off)
		}
	}
	ev := spec.Maps[EeeemuMapEvents]
	if ev == nil || ev.Type != ebpf.RingBuf || ev.MaxEntries < 1<<16 || ev.MaxEntries&(ev.MaxEntries-1) != 0 {
		t.Fatalf("events map: %+v", ev)
	}
	if len(EeeemuEmuState{}.TimeNs) != 5 {
		t.Error("state count changed: update hwlink's EmulatedState")
	}
}
