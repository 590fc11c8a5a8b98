package network

import (
	"unsafe"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/engine"
)

// Memory is the model's memory by component, in bytes, computed from its
// own sizes (lengths and capacities × element sizes), not from the
// garbage collector: what each part holds, not the garbage between
// collections or the runtime's overhead. Pools never shrink, so after a
// run the queues' figure is their high-water mark.
type Memory struct {
	// Ports: the ports' output and input sides (and the second traffic
	// class, vc.go) and the per-port hints.
	Ports int64 `json:"ports"`
	// Queues: the packet pool (every packet in a queue or on a link) and
	// its free list, and injected messages.
	Queues int64 `json:"queues"`
	// Controllers: the ports' controllers and predictors, built on a
	// port's first use (a PerfBoundCorrect's in its slot).
	Controllers int64 `json:"controllers"`
	// Links: the links' power state machines.
	Links int64 `json:"links"`
	// Routing: the per-switch port bases and ECMP's, POWAR's and the
	// consolidation's tables (the topologies compute routes, they store
	// none per node).
	Routing int64 `json:"routing"`
	// Workload: the message records in flight and the driver's per-rank
	// state (when the driver reports it: the replayer does).
	Workload int64 `json:"workload"`
	// Engine: its per-object event counts (8 bytes an object) and the
	// events pending when measured.
	Engine int64 `json:"engine"`
	// Stats: latency samples and the idle-period histograms.
	Stats int64 `json:"stats"`
	// Total is the sum of the above.
	Total int64 `json:"total"`
}

// MemorySizer is implemented by a workload driver that reports the bytes
// of its state (Memory.Workload).
type MemorySizer interface{ MemoryBytes() int64 }

func sliceBytes[T any](s []T) int64 {
	var z T
	return int64(cap(s)) * int64(unsafe.Sizeof(z))
}

// Memory returns the model's memory by component.
func (n *Network) Memory() Memory {
	var m Memory
	m.Ports = sliceBytes(n.ports) + sliceBytes(n.in) + sliceBytes(n.hints.empty) + sliceBytes(n.hints.port) + sliceBytes(n.hints.peerUndecided) + sliceBytes(n.vc)
	m.Queues = sliceBytes(n.pkts) + sliceBytes(n.free) + sliceBytes(n.injects)
	if n.slots != nil {
		for _, c := range append([]*Network{n}, n.parts...) { // a parallel run's partitions have their own
			m.Controllers += sliceBytes(c.slots) + int64(len(c.slots))*int64(unsafe.Sizeof([slotChunk]ctlSlot{}))
			for k := int32(0); k < c.nSlots; k++ {
				m.Controllers += c.slot(k).pred.OutOfLineBytes()
			}
		}
	} else {
		for i := range n.ports {
			if n.ports[i].ctl == nil {
				continue
			}
			_, pred := predictor.Layout(n.ports[i].ctl.Predictor())
			m.Controllers += int64(unsafe.Sizeof(controller.Port{}) + pred)
		}
	}
	m.Links = sliceBytes(n.links)
	m.Routing = sliceBytes(n.swBase) + sliceBytes(n.ecmp.cand) + sliceBytes(n.palQ)
	if n.pw != nil {
		m.Routing += sliceBytes(n.pw.sw) + sliceBytes(n.pw.pending) + sliceBytes(n.pw.on) + sliceBytes(n.pw.upFirst) + sliceBytes(n.pw.upCount)
	}
	m.Routing += sliceBytes(n.portTx) // the powar_model block's ideal
	m.Workload = sliceBytes(n.wl.msgs) + int64(len(n.wl.msgs))*int64(unsafe.Sizeof([msgChunk]wmsg{})) + sliceBytes(n.wl.free) + sliceBytes(n.wl.util)
	if s, ok := n.wl.rep.(MemorySizer); ok {
		m.Workload += s.MemoryBytes()
	}
	// The engine's per-object counts: one for every port, the workload
	// and the consolidation, and outside (sim/engine).
	m.Engine = 8*int64(len(n.ports)+3) + int64(n.eng.Pending())*int64(unsafe.Sizeof(engine.Event{}))
	m.Stats = sliceBytes(n.latSamples)
	for _, h := range append([]*logHist{n.latency, n.portIdle}, n.idle...) {
		if h != nil {
			m.Stats += sliceBytes(h.counts) + sliceBytes(h.sums)
		}
	}
	m.Total = m.Ports + m.Queues + m.Controllers + m.Links + m.Routing + m.Workload + m.Engine + m.Stats
	return m
}
