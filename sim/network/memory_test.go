package network

import (
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/internal/hugepage"
	"github.com/lpictl/lpictl/sim/topo"
)

// TestMemoryPlausible: the per-component memory report, computed from the
// model's sizes, accounts for most of what the run holds on the heap and
// never for more; controllers take memory only for ports that were used.
func TestMemoryPlausible(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	u0 := hugepage.Unused()
	p := deepSleepPBC()
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
	// Less what hugepage.Make allocated around its arrays and never writes.
	heap := int64(m1.HeapAlloc) - int64(m0.HeapAlloc) - (hugepage.Unused() - u0)
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
		outOfLine += n.slot(k).pred.OutOfLineBytes()
	}
	if slots := mem.Controllers - outOfLine; slots > (int64(used)+slotChunk)*per+int64(8*len(n.slots)) || slots < int64(used)*per {
		t.Errorf("controllers %d bytes (%d in slots) for %d used ports of %d", mem.Controllers, slots, used, len(n.ports))
	}
	runtime.KeepAlive(n)
}

// TestSlotSlabs: on a network of at least slabFirst chunks' worth of
// ports, slot chunks come from slabs that grow up to slabMax chunks and
// never beyond what the ports without a slot need, so that a slot for
// every port leaves no chunk allocated and unused; the chunks never
// overlap. A small network allocates chunk by chunk.
func TestSlotSlabs(t *testing.T) {
	p := deepSleepPBC()
	big, err := topo.Build(topo.Default())
	if err != nil {
		t.Fatal(err)
	}
	n := build(t, big, p)
	if len(n.ports) < slabFirst*slotChunk {
		t.Fatalf("%d ports: the test needs a network of slabs", len(n.ports))
	}
	for i := range n.ports {
		n.ctlFor(int32(i))
	}
	if want := (len(n.ports) + slotChunk - 1) / slotChunk; len(n.slots) != want {
		t.Errorf("%d chunks for %d ports, want %d", len(n.slots), len(n.ports), want)
	}
	if len(n.slab) != 0 {
		t.Errorf("%d slots allocated beyond the last chunk", len(n.slab))
	}
	if n.slabNext > slabMax {
		t.Errorf("last slab %d chunks, over slabMax %d", n.slabNext, slabMax)
	}
	size := unsafe.Sizeof([slotChunk]ctlSlot{})
	starts := make([]uintptr, len(n.slots))
	for i, c := range n.slots {
		starts[i] = uintptr(unsafe.Pointer(c))
	}
	slices.Sort(starts)
	for i := 1; i < len(starts); i++ {
		if starts[i]-starts[i-1] < size {
			t.Fatalf("chunks at %#x and %#x overlap", starts[i-1], starts[i])
		}
	}
	seen := map[*controller.Port]bool{}
	for i := range n.ports {
		c := n.ctlFor(int32(i))
		if seen[c] {
			t.Fatalf("port %d shares its controller", i)
		}
		seen[c] = true
	}

	small := build(t, smallMegafly(t), p)
	if len(small.ports) >= slabFirst*slotChunk {
		t.Fatalf("%d ports: want a network below the slabs' size", len(small.ports))
	}
	for i := range small.ports {
		small.ctlFor(int32(i))
	}
	if small.slab != nil || small.slabNext != 0 {
		t.Errorf("a small network took a slab of %d chunks", small.slabNext)
	}
}

// TestPredictorsApart: a network whose predictor is neither
// PerfBoundCorrect nor PerfBound builds each port's controller and
// predictor apart (no ctlSlot); every used port then points at its
// predictor's struct for prefetchIdle, which loads its first lines
// (before, a Fixed predictor's one field was a cache miss at every
// decision), and the memory report counts both. A PerfBound is built in
// its port's slot, where a PerfBoundCorrect would be.
func TestPredictorsApart(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Radix: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []predictor.Kind{predictor.KindFixed, predictor.KindNGram, predictor.KindNextGap, predictor.KindPerfBoundCorrectWeighted} {
		t.Run(string(kind), func(t *testing.T) {
			p := table6(eee.DeepSleep, 10*time.Microsecond)
			p.Predictor.Kind = kind
			n := build(t, tp, p)
			if n.slots != nil {
				t.Fatal("slots for a predictor other than PerfBoundCorrect and PerfBound")
			}
			attachConfig(t, n, synthetic("uniform", 9600, 0.3, 2*time.Microsecond), 1)
			run(t, n)
			var used, want int64
			for i := range n.ports {
				pt := &n.ports[i]
				if pt.ctl == nil {
					continue
				}
				at, size := predictor.Layout(pt.ctl.Predictor())
				if at == nil || pt.pred != at {
					t.Fatalf("port %d: prefetches %p, its predictor is at %p", i, pt.pred, at)
				}
				if lines := min(int(size+63)/64, maxPredLines); n.predLines != lines {
					t.Fatalf("%d lines prefetched of a %d-byte predictor, want %d", n.predLines, size, lines)
				}
				used++
				want += int64(unsafe.Sizeof(controller.Port{}) + size)
			}
			if used == 0 {
				t.Fatal("no controller built")
			}
			if got := n.Memory().Controllers; got != want {
				t.Errorf("controllers: report %d bytes, %d ports' controllers and predictors are %d", got, used, want)
			}
		})
	}
	t.Run("perfbound", func(t *testing.T) {
		p := table6(eee.DeepSleep, 0)
		p.Predictor.Kind = predictor.KindPerfBound
		n := build(t, tp, p)
		if n.slots == nil {
			t.Fatal("no slots for PerfBound")
		}
		attachConfig(t, n, synthetic("uniform", 9600, 0.3, 2*time.Microsecond), 1)
		run(t, n)
		used := 0
		for i := range n.ports {
			pt := &n.ports[i]
			if pt.ctl == nil {
				continue
			}
			s := n.slot(n.hints.port[i].slot)
			pb, ok := pt.ctl.Predictor().(*predictor.PerfBound)
			if !ok || pt.ctl != &s.ctl || pt.pred != nil {
				t.Fatalf("port %d: controller %p, its slot's at %p; predictor %T", i, pt.ctl, &s.ctl, pt.ctl.Predictor())
			}
			if at := uintptr(unsafe.Pointer(pb)) - uintptr(unsafe.Pointer(&s.pred)); at+unsafe.Sizeof(*pb) > uintptr(slotPredLines)*64 {
				t.Fatalf("port %d: the PerfBound at %d B into the slot's predictor, past its %d prefetched lines", i, at, slotPredLines)
			}
			used++
		}
		if used == 0 {
			t.Fatal("no controller built")
		}
	})
}
