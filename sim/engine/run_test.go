package engine

import (
	"math"
	"testing"
)

// TestRunMaxLimit checks that Run's max counts the events of that call
// only, whatever ran before, and that a max as large as a uint64 goes
// means no limit.
func TestRunMaxLimit(t *testing.T) {
	var ran []int32
	e := New(NewHeap(0), handlerFunc(func(ev Event) { ran = append(ran, ev.Obj) }))
	for i := range int32(5) {
		e.Schedule(int64(i), 1, i, 0)
	}
	if !e.Run(Forever, 2) || len(ran) != 2 {
		t.Fatalf("Run(max 2): ran %v", ran)
	}
	if !e.Run(Forever, 1) || len(ran) != 3 {
		t.Fatalf("Run(max 1) after 2: ran %v", ran)
	}
	if e.Run(Forever, math.MaxUint64) || len(ran) != 5 {
		t.Fatalf("Run(max MaxUint64): ran %v", ran)
	}
	for i, o := range ran {
		if o != int32(i) {
			t.Fatalf("order %v", ran)
		}
	}
}
