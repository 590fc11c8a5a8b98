package network

import (
	"strconv"
	"strings"

	"github.com/lpictl/lpictl/sim/eee"
)

// PortTraceCSVHeader is the header line of port_trace.csv: one line per
// idle period of the traced port, in order. lpictl predict replays the
// file decision by decision (controller/replay).
const PortTraceCSVHeader = "start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent"

// TraceRow is one idle period of the traced port.
type TraceRow struct {
	Start int64 // the output queue emptied after the last bit (ps)
	Gap   int64 // until a packet entered it again (ps, > 0)
	// PDT is the t_PDT armed for the period (ps), −1 for a port that never
	// sleeps.
	PDT    int64
	Missed bool  // the packet had to wait for the link's power state
	Delay  int64 // how long it waited (ps; 0 on a hit)
	// Sent holds (hops, packets) pairs, ascending by hops: the packets the
	// port sent since its previous idle period ended (since time 0 for the
	// first), which its controller saw before deciding t_PDT.
	Sent [][2]uint64
}

// CSV formats the row.
func (r *TraceRow) CSV() string {
	var b strings.Builder
	b.Grow(64)
	b.WriteString(strconv.FormatInt(r.Start, 10))
	b.WriteByte(',')
	b.WriteString(strconv.FormatInt(r.Gap, 10))
	b.WriteByte(',')
	b.WriteString(strconv.FormatInt(r.PDT, 10))
	if r.Missed {
		b.WriteString(",miss,")
	} else {
		b.WriteString(",hit,")
	}
	b.WriteString(strconv.FormatInt(r.Delay, 10))
	b.WriteByte(',')
	for k, hc := range r.Sent {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(hc[0], 10))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(hc[1], 10))
	}
	return b.String()
}

// portTrace records the traced port's idle periods in a compact form: a
// record is a few words (see TraceRows), about 48 bytes per idle period.
type portTrace struct {
	port int32
	sent [256]uint64 // packets per hop count since the last idle period
	rows []traceRecord
	hops []uint64 // (hops << 56 | packets) of every record, in order
}

type traceRecord struct {
	start, gap, pdt, delay int64
	hopsEnd                int32 // end of the record's pairs in hops
	missed                 bool
}

func (t *portTrace) idleEnded(start, gap, pdt int64, missed bool, delay int64) {
	for h, c := range t.sent {
		if c != 0 {
			t.hops = append(t.hops, uint64(h)<<56|c)
			t.sent[h] = 0
		}
	}
	if pdt == eee.Never {
		pdt = -1
	}
	t.rows = append(t.rows, traceRecord{start: start, gap: gap, pdt: pdt, delay: delay, missed: missed, hopsEnd: int32(len(t.hops))})
}

// TracePort records every idle period of port p, with what its controller
// saw before each decision, for TraceRows (port_trace.csv). Call it before
// the run.
func (n *Network) TracePort(p PortID) error {
	if err := n.checkPort(p); err != nil {
		return err
	}
	n.trace = &portTrace{port: int32(p)}
	n.watch(int32(p))
	return nil
}

// TraceRows calls f with each recorded idle period of the traced port, in
// order (none without TracePort).
func (n *Network) TraceRows(f func(*TraceRow)) {
	t := n.trace
	if t == nil {
		return
	}
	var row TraceRow
	from := 0
	for _, r := range t.rows {
		row = TraceRow{Start: r.start, Gap: r.gap, PDT: r.pdt, Missed: r.missed, Delay: r.delay, Sent: row.Sent[:0]}
		for _, hc := range t.hops[from:r.hopsEnd] {
			row.Sent = append(row.Sent, [2]uint64{hc >> 56, hc & (1<<56 - 1)})
		}
		from = int(r.hopsEnd)
		f(&row)
	}
}
