package vef

import (
	"errors"
	"fmt"
	"io"
)

// Kind says whether a record is a point-to-point message or one task's part
// of a collective operation.
type Kind uint8

// Record kinds.
const (
	Message    Kind = iota // "<id> <src> <dst> <bytes> <dep> <time> <iddep>"
	Collective             // "G<id> <comm> <op> <task> <send> <recv> <dep> <time> <iddep>"
)

// Dep is the dependency kind of a record (docs/model.md §5).
type Dep uint8

// Dependency kinds.
const (
	// DepNone: independent; the record is released at the absolute time
	// Time (iddep −1).
	DepNone Dep = 0
	// DepSend: released Time after the send of message DepID.
	DepSend Dep = 1
	// DepRecv: released Time after the receipt (last byte at its
	// destination) of message DepID.
	DepRecv Dep = 2
	// DepColl: released Time after the task finished its part in
	// collective G<DepID>.
	DepColl Dep = 3
)

// Op is a collective operation (docs/model.md §5 table).
type Op uint8

// Collective operations, numbered as in VEF.
const (
	Bcast Op = iota
	Reduce
	Allreduce
	Gather
	Scatter
	Allgather
	Barrier
	Alltoall
	NumOps
)

var opNames = [NumOps]string{"bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "barrier", "alltoall"}

func (o Op) String() string {
	if o < NumOps {
		return opNames[o]
	}
	return fmt.Sprintf("op%d", uint8(o))
}

// Record is one line of a VEF body. For a Message, Src sends Bytes to Dst;
// for a Collective, Src is the task, Bytes and Recv are its send and receive
// sizes, Comm and Op say which communicator and operation, and ID is the G
// number shared by all records of the operation.
type Record struct {
	Kind  Kind
	ID    int64
	Src   int32
	Dst   int32 // Message only
	Comm  int32 // Collective only
	Op    Op    // Collective only
	Bytes int64
	Recv  int64 // Collective only
	Dep   Dep
	// Time is the delay after the dependency, or the absolute release time
	// for DepNone, in picoseconds.
	Time  int64
	DepID int64 // −1 for DepNone; a message ID, or a G number for DepColl
	// Line is the source line (0 for generated records); errors use it.
	Line int64
}

// Header is the first line of a trace.
type Header struct {
	Tasks       int
	Messages    int64
	Comms       int
	CollOps     int64 // distinct G numbers
	CollRecords int64 // G lines (one per participating task)
	OnlySend    bool  // no record has a receive (2) dependency
}

// Source is a stream of VEF records: a trace file being read, or a workload
// generated on the fly. Records come in trace order; message IDs are dense
// from 0, G numbers are dense from 0 in order of first appearance. A
// dependency usually refers to an earlier record, but may refer to a later
// one (a forward reference: docs/model.md §5 does not order records by their
// dependencies); the replayer holds the dependent record until the
// referenced one is read.
type Source interface {
	// Tasks is the number of tasks (ranks).
	Tasks() int
	// Comms lists each communicator's tasks; Comms()[0] is the world. The
	// position of a task in its list is its rank in the communicator.
	Comms() [][]int32
	// Next fills r with the next record; io.EOF at the end.
	Next(r *Record) error
}

// Progress is implemented by sources that know how far through they are
// (0…1); multi-job merging uses it.
type Progress interface {
	Progress() float64
}

// Scan reads src to the end and returns the header that describes it.
func Scan(src Source) (Header, error) {
	h := Header{Tasks: src.Tasks(), Comms: len(src.Comms()), OnlySend: true}
	var r Record
	var maxG int64 = -1
	for {
		err := src.Next(&r)
		if errors.Is(err, io.EOF) {
			return h, nil
		}
		if err != nil {
			return h, err
		}
		if r.Dep == DepRecv {
			h.OnlySend = false
		}
		switch r.Kind {
		case Message:
			h.Messages++
		case Collective:
			h.CollRecords++
			if r.ID > maxG {
				maxG = r.ID
				h.CollOps = maxG + 1
			}
		}
	}
}
