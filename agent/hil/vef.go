package hil

import (
	"fmt"
	"io"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// WriteVEF writes the messages the generator sent as a VEF trace (docs/model.md §5)
// of two tasks, 0 = host a and 1 = host b: each message is a
// point-to-point record, in send order; a probe's response depends on the
// receipt of its request (dep 2, after the responder's turnaround), every
// other message is sent at its absolute time since the traffic started
// (dep 0). Sizes are bytes on the wire (headers included).
func WriteVEF(w io.Writer, msgs []Msg) error {
	h := vef.Header{Tasks: 2, Messages: int64(len(msgs)), Comms: 1, OnlySend: true}
	for _, m := range msgs {
		if m.ReplyTo >= 0 {
			h.OnlySend = false
		}
	}
	vw := vef.NewWriter(w)
	if err := vw.WriteHeader(h, [][]int32{{0, 1}}); err != nil {
		return err
	}
	for i, m := range msgs {
		r := vef.Record{Kind: vef.Message, ID: int64(i), Src: m.Src, Dst: m.Dst, Bytes: m.Bytes,
			Dep: vef.DepNone, Time: int64(m.At) * 1000, DepID: -1}
		if m.ReplyTo >= 0 {
			if m.ReplyTo >= i {
				return fmt.Errorf("message %d answers message %d, which is not sent before it", i, m.ReplyTo)
			}
			r.Dep, r.Time, r.DepID = vef.DepRecv, int64(max(m.Delay, 0))*1000, int64(m.ReplyTo)
		}
		if err := vw.Write(&r); err != nil {
			return err
		}
	}
	return vw.Flush()
}
