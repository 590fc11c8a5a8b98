package hil

import (
	"fmt"
	"io"
	"strconv"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// WriteVEF writes the messages the generator sent as a VEF trace (docs/model.md §5)
// with one task per sender (Msg.Sender) and returns each task's node
// (host): task 0 is host a's kernel, task 1 host b's, and every other
// sender gets the next task on its first message. A message goes to the
// same sender's task on its destination host where there is one (a probe's
// request to its responder, which depends on receiving it; the response
// back to the requester), else to that host's kernel's. Each is a
// point-to-point record, in send order; a probe's response depends on the
// receipt of its request (dep 2, after the responder's turnaround), every
// other message is sent at its absolute time since the traffic started
// (dep 0). Sizes are bytes on the wire (headers included).
func WriteVEF(w io.Writer, msgs []Msg) ([]int, error) {
	type sender struct{ host, thread int32 }
	task := map[sender]int32{{0, 0}: 0, {1, 0}: 1}
	nodes := []int{0, 1}
	h := vef.Header{Messages: int64(len(msgs)), Comms: 1, OnlySend: true}
	for _, m := range msgs {
		if m.ReplyTo >= 0 {
			h.OnlySend = false
		}
		if m.Src < 0 || m.Src > 1 || m.Dst < 0 || m.Dst > 1 || m.Sender < 0 {
			return nil, fmt.Errorf("message from host %d (sender %d) to host %d: hosts are 0 and 1", m.Src, m.Sender, m.Dst)
		}
		k := sender{m.Src, m.Sender}
		if _, ok := task[k]; !ok {
			task[k] = int32(len(nodes))
			nodes = append(nodes, int(m.Src))
		}
	}
	h.Tasks = len(nodes)
	comm := make([]int32, len(nodes))
	for i := range comm {
		comm[i] = int32(i)
	}
	vw := vef.NewWriter(w)
	if err := vw.WriteHeader(h, [][]int32{comm}); err != nil {
		return nil, err
	}
	for i, m := range msgs {
		dst, ok := task[sender{m.Dst, m.Sender}]
		if !ok {
			dst = m.Dst
		}
		r := vef.Record{Kind: vef.Message, ID: int64(i), Src: task[sender{m.Src, m.Sender}], Dst: dst, Bytes: m.Bytes,
			Dep: vef.DepNone, Time: int64(m.At) * 1000, DepID: -1}
		if m.ReplyTo >= 0 {
			if m.ReplyTo >= i {
				return nil, fmt.Errorf("message %d answers message %d, which is not sent before it", i, m.ReplyTo)
			}
			r.Dep, r.Time, r.DepID = vef.DepRecv, int64(max(m.Delay, 0))*1000, int64(m.ReplyTo)
		}
		if err := vw.Write(&r); err != nil {
			return nil, err
		}
	}
	return nodes, vw.Flush()
}

// mappingFile is nodes as a workload mapping file (one node per line,
// task order: workload.mapping_file).
func mappingFile(nodes []int) []byte {
	var b []byte
	for _, n := range nodes {
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, '\n')
	}
	return b
}
