package engine

import "testing"

// portsModel is a packet model's event pattern on many objects: each
// event schedules the next at one of a few constant delays (lanes) from
// the object itself or for its neighbour, with same-picosecond ties.
type portsModel struct {
	e       *Engine
	objects int32
	left    int
}

func (m *portsModel) Handle(ev Event) {
	if m.left <= 0 {
		return
	}
	m.left--
	switch ev.Kind {
	case 0: // a send: the neighbour's arrival and the end of the send
		m.e.Schedule(ev.At+100*Nanosecond, 1, (ev.Obj+1)%m.objects, ev.Arg)
		m.e.Schedule(ev.At+192*Nanosecond, 2, ev.Obj, ev.Arg)
	case 1: // an arrival: forwarded after a switch latency
		m.e.Schedule(ev.At+78*Nanosecond, 0, ev.Obj, ev.Arg)
	}
}

func (m *portsModel) Prefetch(*Event) {}

// BenchmarkRun is the engine's cost per event (ns/op is per event) on
// portsModel with 20 800 objects (the Megafly-4160's ports), heap and
// lanes.
func BenchmarkRun(b *testing.B) {
	m := &portsModel{objects: 20800, left: b.N}
	m.e = New(NewHeap(1024), m)
	m.e.UseLane(0)
	m.e.UseLane(1)
	m.e.UseLane(2)
	for i := range m.objects {
		m.e.Schedule(int64(i%64)*Nanosecond, 0, i, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	m.e.Run(Forever, uint64(b.N))
}
