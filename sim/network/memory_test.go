package network

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/topo"
)

// TestMemoryPlausible: the per-component memory report, computed from the
// model's sizes, accounts for most of what the run holds on the heap and
// never for more; controllers take memory only for ports that were used.
func TestMemoryPlausible(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	p := table6(eee.DeepSleep, 0)
	perfBoundCorrect(&p)
	tp, err := topo.Build(topo.Default())
	if err != nil {
		t.Fatal(err)
	}
	n := build(t, tp, p)
	attachConfig(t, n, synthetic("uniform", 9600, 0.05, time.Microsecond), 1)
	run(t, n)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	mem := n.Memory()
	heap := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	t.Logf("report %+v, heap %d", mem, heap)
	parts := []int64{mem.Ports, mem.Queues, mem.Controllers, mem.Links, mem.Routing, mem.Workload, mem.Engine, mem.Stats}
	var sum int64
	for i, b := range parts {
		if b < 0 {
			t.Errorf("part %d: %d bytes", i, b)
		}
		sum += b
	}
	if sum != mem.Total {
		t.Errorf("total %d, parts sum to %d", mem.Total, sum)
	}
	if mem.Total > heap*11/10 || mem.Total < heap/2 {
		t.Errorf("report %d bytes, heap grew by %d", mem.Total, heap)
	}
	used := 0
	for i := range n.ports {
		if n.ports[i].ctl != nil {
			used++
		}
	}
	if used == len(n.ports) || used == 0 {
		t.Fatalf("%d of %d ports used: pick a lighter load", used, len(n.ports))
	}
	per := int64(unsafe.Sizeof(ctlSlot{}))
	var outOfLine int64 // the predictors' spilled bins and miss logs
	for k := int32(0); k < n.nSlots; k++ {
		outOfLine += n.slot(k).pbc.OutOfLineBytes()
	}
	if slots := mem.Controllers - outOfLine; slots > (int64(used)+slotChunk)*per+int64(8*len(n.slots)) || slots < int64(used)*per {
		t.Errorf("controllers %d bytes (%d in slots) for %d used ports of %d", mem.Controllers, slots, used, len(n.ports))
	}
	runtime.KeepAlive(n)
}
