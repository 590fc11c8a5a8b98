package workload

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// RankDescription is one rank's line of `lpictl workload describe --ranks`.
type RankDescription struct {
	Rank          int   `json:"rank"`
	Node          int   `json:"node"`
	Sends         int64 `json:"sends"`
	Recvs         int64 `json:"receives"`
	BytesSent     int64 `json:"bytes_sent"`
	BytesReceived int64 `json:"bytes_received"`
	ComputePS     int64 `json:"compute_ps"`
	FinishPS      int64 `json:"finish_ps"`
}

// Description is what `lpictl workload describe` prints. Its JSON is a
// contract: every key is always there, 0 when the value is 0; the keys of
// the ideal replay are null without it (not computed, which 0 would hide).
type Description struct {
	Kind          string           `json:"kind"`
	Ranks         int              `json:"ranks"`
	Nodes         int              `json:"nodes"`
	Jobs          []Job            `json:"jobs"`
	Records       int64            `json:"records"`
	P2PMessages   int64            `json:"p2p_messages"`
	P2PBytes      int64            `json:"p2p_bytes"`
	Collectives   map[string]int64 `json:"collectives"`
	ComputeMaxPS  int64            `json:"compute_max_ps"`
	ComputeMeanPS int64            `json:"compute_mean_ps"`
	// From the ideal replay (contention-free network); nil without it.
	Messages    *int64           `json:"messages"`
	Bytes       *int64           `json:"bytes"`
	CollMsgs    *int64           `json:"collective_messages"`
	Algorithms  map[string]int64 `json:"algorithms"`
	IdealExecPS *int64           `json:"ideal_exec_ps"`
	MeanUtil    *float64         `json:"mean_utilisation"`
	// Intra-node messages and bytes (ranks sharing a node), from the
	// ideal replay; PerRank with the ranks.
	IntraMessages *int64            `json:"intra_node_messages"`
	IntraBytes    *int64            `json:"intra_node_bytes"`
	PerRank       []RankDescription `json:"per_rank,omitempty"`

	ideal *IdealHost // the ideal replay's network, for the text
}

// TraceError makes a bad trace record found after Build (vef.Error:
// FILE:LINE) bad input (configs.InputError); other errors are returned
// as they are.
func TraceError(err error) error {
	var ve *vef.Error
	if errors.As(err, &ve) {
		return configs.BadInput(err)
	}
	return err
}

// Describe describes w on a network of nodes nodes, without the ideal
// replay (Description.Replay adds it). A bad trace record is bad input
// (configs.InputError).
func Describe(w *Workload, nodes int) (*Description, error) {
	sum, err := w.Summarize()
	if err != nil {
		return nil, TraceError(err)
	}
	kind := KindMulti
	if len(w.Jobs) == 1 {
		kind = w.Jobs[0].Kind
	}
	return &Description{
		Kind: kind, Ranks: w.Ranks, Nodes: nodes, Jobs: w.Jobs,
		Records:     sum.Header.Messages + sum.Header.CollRecords,
		P2PMessages: sum.Header.Messages, P2PBytes: sum.P2PBytes, Collectives: sum.Collectives,
		ComputeMaxPS: sum.MaxCompute, ComputeMeanPS: sum.MeanCompute,
	}, nil
}

// Replay replays w on the contention-free network ideal and adds what it
// found: messages, bytes, algorithms, the ideal execution time and
// utilisation, and with ranks each rank's line. A bad trace record or a
// deadlocked program is bad input (configs.InputError).
func (d *Description) Replay(w *Workload, ideal *IdealHost, ranks bool) error {
	d.ideal = ideal
	r, err := w.NewDriver()
	if err != nil {
		return err
	}
	defer r.Close()
	if err := ideal.Run(r); err != nil {
		if w.Program() != nil {
			return configs.BadInput(err) // a deadlocked program trace
		}
		return TraceError(err)
	}
	d.addIdeal(w, r.Stats(), ranks)
	return nil
}

// addIdeal fills the figures of the ideal replay.
func (d *Description) addIdeal(w *Workload, st Stats, ranks bool) {
	d.Messages, d.Bytes, d.CollMsgs, d.IdealExecPS = &st.Messages, &st.Bytes, &st.CollMessages, &st.ExecTime
	d.IntraMessages, d.IntraBytes = &st.IntraMessages, &st.IntraBytes
	if ranks {
		for rk := range st.RankBusy {
			d.PerRank = append(d.PerRank, RankDescription{Rank: rk, Node: w.Nodes[rk],
				Sends: st.RankSends[rk], Recvs: st.RankRecvs[rk], BytesSent: st.RankBytesSent[rk], BytesReceived: st.RankBytesRecv[rk],
				ComputePS: st.RankBusy[rk], FinishPS: st.RankFinish[rk]})
		}
	}
	var util float64
	d.MeanUtil = &util
	d.Algorithms = map[string]int64{}
	for a, n := range st.Algorithms {
		if n > 0 {
			d.Algorithms[Algorithm(a).String()] += n
		}
	}
	var busy int64
	for _, b := range st.RankBusy {
		busy += b
	}
	if st.ExecTime > 0 && w.Ranks > 0 {
		util = float64(busy) / float64(st.ExecTime) / float64(w.Ranks)
	}
}

// WriteText writes the description as `lpictl workload describe` prints it.
func (d *Description) WriteText(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "kind\t%s\n", d.Kind)
	fmt.Fprintf(tw, "ranks\t%d on a network of %d nodes\n", d.Ranks, d.Nodes)
	for _, j := range d.Jobs {
		if len(d.Jobs) > 1 {
			fmt.Fprintf(tw, "job %s\t%s, ranks %d–%d, repeated %d×\n", j.Name, j.Kind, j.FirstRank, j.FirstRank+j.Ranks-1, j.Repeat)
		}
	}
	fmt.Fprintf(tw, "trace records\t%d (%d point-to-point, %d B)\n", d.Records, d.P2PMessages, d.P2PBytes)
	var ops []string
	for k := range d.Collectives {
		ops = append(ops, k)
	}
	sort.Strings(ops)
	var cs []string
	for _, k := range ops {
		cs = append(cs, fmt.Sprintf("%s %d", k, d.Collectives[k]))
	}
	fmt.Fprintf(tw, "collectives\t%s\n", listOrNone(cs))
	fmt.Fprintf(tw, "compute per rank\tmax %v, mean %v\n", psDur(d.ComputeMaxPS), psDur(d.ComputeMeanPS))
	if d.ideal != nil {
		d.writeIdeal(tw, len(cs) == 0)
	}
	if err := tw.Flush(); err != nil || len(d.PerRank) == 0 {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tnode\tsends\treceives\tbytes sent\tbytes received\tcompute\tfinish\t")
	for _, r := range d.PerRank {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%v\t%v\t\n", r.Rank, r.Node, r.Sends, r.Recvs, r.BytesSent, r.BytesReceived, psDur(r.ComputePS), psDur(r.FinishPS))
	}
	return tw.Flush()
}

// writeIdeal writes the ideal replay's lines.
func (d *Description) writeIdeal(tw io.Writer, noCollectives bool) {
	var as []string
	for k, n := range d.Algorithms {
		as = append(as, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(as)
	fmt.Fprintf(tw, "network messages\t%d (%d from collectives), %d B\n", *d.Messages, *d.CollMsgs, *d.Bytes)
	if len(as) > 0 || noCollectives {
		fmt.Fprintf(tw, "algorithms\t%s\n", listOrNone(as))
	} else {
		// TI traces expand their collectives as SMPI does
		// (docs/workloads.md), not by lpictl's algorithms.
		fmt.Fprintf(tw, "algorithms\tthe trace reader's own expansions (docs/workloads.md)\n")
	}
	fmt.Fprintf(tw, "ideal execution time\t%v (contention-free: %v + size/%.0f Gb/s per message)\n",
		psDur(*d.IdealExecPS), psDur(d.ideal.Latency), d.ideal.Bandwidth/1e9)
	fmt.Fprintf(tw, "mean utilisation\t%.3f\n", *d.MeanUtil)
	if *d.IntraMessages > 0 {
		fmt.Fprintf(tw, "intra-node messages\t%d, %d B (ranks sharing a node; not in network messages)\n", *d.IntraMessages, *d.IntraBytes)
	}
}

// listOrNone joins items with commas, or says "none".
func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

func psDur(ps int64) time.Duration { return time.Duration(ps / 1000) }
