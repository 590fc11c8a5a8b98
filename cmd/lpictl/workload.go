package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/topo"
	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/schedvef"
	"github.com/lpictl/lpictl/sim/workload/traces"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// workloadFile is the part of a scenario `lpictl workload` reads: the
// workload and topology sections (other top-level sections are ignored).
type workloadFile struct {
	Workload workload.Config `yaml:"workload"`
	Topology topo.Config     `yaml:"topology"`
	Seed     uint64          `yaml:"seed"`
}

type workloadOptions struct {
	config string
	sets   []string
	json   bool
	ideal  bool
	ranks  bool
	idealL string
	idealB float64
	vef    bool
	out    string
	to     string
}

func newWorkloadCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Describe or export a simulator workload (MPI models, VEF traces, synthetic traffic)",
		Long: `Reads the workload: (and topology:) sections of a scenario file, e.g.
configs/workloads/*.yaml, with --set overrides (workload.kind=lammps, workload.ranks=64 …).
See docs/workloads.md.`,
	}
	cmd.AddCommand(newWorkloadDescribeCommand(), newWorkloadExportCommand(), newWorkloadConvertCommand())
	return cmd
}

func addWorkloadFlags(cmd *cobra.Command, o *workloadOptions) {
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "scenario or workload YAML file (see configs/workloads/)")
	f.StringArrayVar(&o.sets, "set", nil, "override a key, e.g. workload.ranks=64 (repeatable)")
}

func newWorkloadDescribeCommand() *cobra.Command {
	var o workloadOptions
	cmd := &cobra.Command{
		Use:   "describe [-c FILE] [--set k=v]… [--json]",
		Short: "Print a workload's ranks, messages, bytes, collectives, compute and ideal-network time",
		Example: `  lpictl workload describe -c configs/workloads/lammps.yaml
  lpictl workload describe --set workload.kind=stencil --set workload.ranks=64 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkloadDescribe(cmd, o) },
	}
	addWorkloadFlags(cmd, &o)
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&o.ideal, "ideal", true, "replay on a contention-free network for the expected execution time")
	cmd.Flags().BoolVar(&o.ranks, "ranks", false, "also print each rank's node, sends, receives, bytes and compute (from the ideal replay)")
	cmd.Flags().StringVar(&o.idealL, "ideal-latency", time.Duration(workload.DefaultIdealLatency/1000).String(), "the ideal network's latency per message (0: none)")
	cmd.Flags().Float64Var(&o.idealB, "ideal-bandwidth", workload.DefaultIdealBandwidth, "the ideal network's bandwidth in bit/s (0: infinite)")
	return cmd
}

func newWorkloadConvertCommand() *cobra.Command {
	var o workloadOptions
	cmd := &cobra.Command{
		Use:   "convert --to vef [-c FILE] [--set k=v]… [-o FILE]",
		Short: "Convert a SimGrid TI or GOAL trace to VEF, where VEF can express it",
		Long: `Reads a workload of kind ti (SimGrid time-independent trace) or goal (GOAL schedule) and
writes it as a VEF trace. VEF gives each message at most one dependency (none, the send or the
receipt of one message) and replays eagerly; a program that needs more — a wait for several
requests (waitall), a start dependency (irequires), a receive from any source — is refused with
one line naming the rank, the operation and its source line (exit 2). See docs/workloads.md.`,
		Example: `  lpictl workload convert --to vef --set workload.kind=ti --set workload.file=out/ring.ti -o ring.vef
  lpictl workload convert --to vef --set workload.kind=goal --set workload.file=pingpong.goal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkloadConvert(cmd, o) },
	}
	addWorkloadFlags(cmd, &o)
	cmd.Flags().StringVar(&o.to, "to", "", "output format: vef (required)")
	cmd.Flags().StringVarP(&o.out, "output", "o", "-", "output file (- for stdout); written atomically")
	return cmd
}

func newWorkloadExportCommand() *cobra.Command {
	var o workloadOptions
	cmd := &cobra.Command{
		Use:   "export --vef [-c FILE] [--set k=v]… [-o FILE]",
		Short: "Write a workload as a VEF trace",
		Example: `  lpictl workload export --vef -c configs/workloads/mlwf.yaml -o mlwf.vef
  lpictl workload export --vef --set workload.kind=alltoall --set workload.ranks=8 --set workload.steps=2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkloadExport(cmd, o) },
	}
	addWorkloadFlags(cmd, &o)
	cmd.Flags().BoolVar(&o.vef, "vef", false, "write VEF (the only format; required)")
	cmd.Flags().StringVarP(&o.out, "output", "o", "-", "output file (- for stdout); written atomically")
	return cmd
}

// keepSections blanks every top-level section other than keep, preserving
// line numbers, so strict decoding checks only what this command reads.
func keepSections(data []byte, keep ...string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return data, nil // let configs.Decode report it
	}
	lines := strings.SplitAfter(string(data), "\n")
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if contains(keep, k.Value) {
			continue
		}
		end := len(lines) // up to the next top-level key
		if i+2 < len(m.Content) {
			end = m.Content[i+2].Line - 1
		}
		if k.Column != 1 {
			return nil, fmt.Errorf("line %d: cannot skip section %q (write it in block style)", k.Line, k.Value)
		}
		for l := k.Line - 1; l < end && l < len(lines); l++ {
			if strings.HasSuffix(lines[l], "\n") {
				lines[l] = "\n"
			} else {
				lines[l] = ""
			}
		}
	}
	return []byte(strings.Join(lines, "")), nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func loadWorkload(o workloadOptions) (*workload.Workload, int, error) {
	var wf workloadFile
	var data []byte
	name := "--set"
	if o.config != "" {
		var err error
		if data, err = configs.ReadFile(o.config); err != nil {
			return nil, 0, badInput(err)
		}
		name = o.config
		if data, err = keepSections(data, "workload", "topology", "seed"); err != nil {
			return nil, 0, badInput(fmt.Errorf("%s: %w", name, err))
		}
	}
	if err := configs.Decode(data, name, &wf, o.sets); err != nil {
		return nil, 0, badInput(err)
	}
	if o.config != "" {
		wf.Workload.Resolve(filepath.Dir(o.config))
	}
	t, err := topo.Build(wf.Topology)
	if err != nil {
		return nil, 0, badInput(err)
	}
	w, err := workload.Build(wf.Workload, t.Nodes(), wf.Seed)
	if err != nil {
		return nil, 0, badInput(err)
	}
	return w, t.Nodes(), nil
}

// rankDescription is one rank's line of describe --ranks.
type rankDescription struct {
	Rank          int   `json:"rank"`
	Node          int   `json:"node"`
	Sends         int64 `json:"sends"`
	Recvs         int64 `json:"receives"`
	BytesSent     int64 `json:"bytes_sent"`
	BytesReceived int64 `json:"bytes_received"`
	ComputePS     int64 `json:"compute_ps"`
	FinishPS      int64 `json:"finish_ps"`
}

// workloadDescription is what describe prints. Its JSON is a contract:
// every key is always there, 0 when the value is 0; the keys of the ideal
// replay are null with --ideal=false (not computed, which 0 would hide).
type workloadDescription struct {
	Kind          string           `json:"kind"`
	Ranks         int              `json:"ranks"`
	Nodes         int              `json:"nodes"`
	Jobs          []workload.Job   `json:"jobs"`
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
	// ideal replay; PerRank with --ranks.
	IntraMessages *int64            `json:"intra_node_messages"`
	IntraBytes    *int64            `json:"intra_node_bytes"`
	PerRank       []rankDescription `json:"per_rank,omitempty"`
}

// traceError makes a bad trace record found after Build (FILE:LINE) bad
// input, exit 2; other errors stay runtime failures.
func traceError(err error) error {
	var ve *vef.Error
	if errors.As(err, &ve) {
		return badInput(err)
	}
	return err
}

func runWorkloadDescribe(cmd *cobra.Command, o workloadOptions) error {
	if o.ranks && !o.ideal {
		return badInput(errors.New("workload describe: --ranks comes from the ideal replay; drop --ideal=false"))
	}
	w, nodes, err := loadWorkload(o)
	if err != nil {
		return err
	}
	sum, err := w.Summarize()
	if err != nil {
		return traceError(err)
	}
	kind := workload.KindMulti
	if len(w.Jobs) == 1 {
		kind = w.Jobs[0].Kind
	}
	d := workloadDescription{
		Kind: kind, Ranks: w.Ranks, Nodes: nodes, Jobs: w.Jobs,
		Records:     sum.Header.Messages + sum.Header.CollRecords,
		P2PMessages: sum.Header.Messages, P2PBytes: sum.P2PBytes, Collectives: sum.Collectives,
		ComputeMaxPS: sum.MaxCompute, ComputeMeanPS: sum.MeanCompute,
	}
	host := workload.NewIdealHost()
	if o.ideal {
		lat, err := predictor.ParseDuration(o.idealL)
		if err != nil || lat < 0 {
			return badInput(fmt.Errorf("--ideal-latency %q: want a duration ≥ 0, e.g. 550ns or 0", o.idealL))
		}
		if !(o.idealB >= 0) || math.IsInf(o.idealB, 0) {
			return badInput(fmt.Errorf("--ideal-bandwidth %v: want bit/s ≥ 0 (0: infinite)", o.idealB))
		}
		host.Latency, host.Bandwidth = int64(lat)*1000, o.idealB
		r, err := w.NewDriver()
		if err != nil {
			return err
		}
		defer r.Close()
		if err := host.Run(r); err != nil {
			if w.Program() != nil {
				return badInput(err) // a deadlocked program trace
			}
			return traceError(err)
		}
		st := r.Stats()
		d.Messages, d.Bytes, d.CollMsgs, d.IdealExecPS = &st.Messages, &st.Bytes, &st.CollMessages, &st.ExecTime
		d.IntraMessages, d.IntraBytes = &st.IntraMessages, &st.IntraBytes
		if o.ranks {
			for rk := range st.RankBusy {
				d.PerRank = append(d.PerRank, rankDescription{Rank: rk, Node: w.Nodes[rk],
					Sends: st.RankSends[rk], Recvs: st.RankRecvs[rk], BytesSent: st.RankBytesSent[rk], BytesReceived: st.RankBytesRecv[rk],
					ComputePS: st.RankBusy[rk], FinishPS: st.RankFinish[rk]})
			}
		}
		var util float64
		d.MeanUtil = &util
		d.Algorithms = map[string]int64{}
		for a, n := range st.Algorithms {
			if n > 0 {
				d.Algorithms[workload.Algorithm(a).String()] += n
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
	out := cmd.OutOrStdout()
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
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
	if o.ideal {
		var as []string
		for k, n := range d.Algorithms {
			as = append(as, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(as)
		fmt.Fprintf(tw, "network messages\t%d (%d from collectives), %d B\n", *d.Messages, *d.CollMsgs, *d.Bytes)
		if len(as) > 0 || len(cs) == 0 {
			fmt.Fprintf(tw, "algorithms\t%s\n", listOrNone(as))
		} else {
			// TI traces expand their collectives as SMPI does
			// (docs/workloads.md), not by lpictl's algorithms.
			fmt.Fprintf(tw, "algorithms\tthe trace reader's own expansions (docs/workloads.md)\n")
		}
		fmt.Fprintf(tw, "ideal execution time\t%v (contention-free: %v + size/%.0f Gb/s per message)\n",
			psDur(*d.IdealExecPS), psDur(host.Latency), host.Bandwidth/1e9)
		fmt.Fprintf(tw, "mean utilisation\t%.3f\n", *d.MeanUtil)
		if *d.IntraMessages > 0 {
			fmt.Fprintf(tw, "intra-node messages\t%d, %d B (ranks sharing a node; not in network messages)\n", *d.IntraMessages, *d.IntraBytes)
		}
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

// listOrNone joins items with commas, or says "none".
func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

func psDur(ps int64) time.Duration { return time.Duration(ps / 1000) }

func runWorkloadConvert(cmd *cobra.Command, o workloadOptions) error {
	if o.to != "vef" {
		return badInput(fmt.Errorf("workload convert: --to %q: the one target format is vef", o.to))
	}
	w, _, err := loadWorkload(o)
	if err != nil {
		return err
	}
	p, ok := w.Program().(*traces.Program)
	if !ok {
		return badInput(fmt.Errorf("workload convert: kind %s is not a ti or goal trace (workload export --vef writes the others)", w.Jobs[0].Kind))
	}
	write := func(out io.Writer) error {
		if err := schedvef.Write(out, p.Schedule()); err != nil {
			return badInput(err)
		}
		return nil
	}
	if o.out == "-" {
		return write(cmd.OutOrStdout())
	}
	f, err := renameio.NewPendingFile(o.out, renameio.WithPermissions(0o644))
	if err != nil {
		return err
	}
	defer f.Cleanup()
	if err := write(f); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}

func runWorkloadExport(cmd *cobra.Command, o workloadOptions) error {
	if !o.vef {
		return badInput(errors.New("workload export: say the format: --vef"))
	}
	w, _, err := loadWorkload(o)
	if err != nil {
		return err
	}
	if o.out == "-" {
		_, err := vef.WriteAll(cmd.OutOrStdout(), w.Open)
		return traceError(err)
	}
	_, err = vef.WriteFile(o.out, w.Open)
	return traceError(err)
}
