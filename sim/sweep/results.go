package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"

	"github.com/google/renameio/v2"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/scenario"
)

// Result files of a sweep directory.
const (
	ResultsCSV  = "results.csv"
	ResultsJSON = "results.json"
)

// MetricColumns are the columns taken from a run's summary.json, in order.
var MetricColumns = []string{
	"exec_time_s", "latency_mean_s", "latency_p50_s", "latency_p99_s", "latency_max_s",
	"energy_links_j", "energy_switches_j", "energy_network_j", "energy_nodes_j", "energy_total_j",
	"frac_wake", "frac_transition", "frac_fast_wake", "frac_deep_sleep",
	"transitions", "wakeups", "hits", "misses", "packets", "messages", "pfc_pauses", "events",
	"e2e_stall_s", "tcep_active_ratio", "powar_w_net", "ledger_worst_ratio",
	"tcep_lower_bound",
}

// CompareColumns are the columns computed against a row's baseline.
var CompareColumns = []string{
	"exec_overhead_pct", "latency_overhead_pct", "p99_latency_overhead_pct",
	"links_saving_pct", "network_saving_pct", "total_saving_pct",
	"powar_e_net_norm", "powar_e_cluster_norm", "powar_ideal_e_net_norm", "powar_ideal_e_cluster_norm",
}

// Columns lists results.csv's columns for a plan's axis keys.
func Columns(axisKeys []string) []string {
	cols := []string{"index", "id", "role", "status", "baseline_id"}
	cols = append(cols, axisKeys...)
	cols = append(cols, "seed")
	cols = append(cols, MetricColumns...)
	cols = append(cols, CompareColumns...)
	return append(cols, "wall_s", "error")
}

// cell is one value of the table: a string, a number (its text) or empty.
type cell struct {
	text   string
	number bool
	empty  bool
}

func str(s string) cell { return cell{text: s} }
func none() cell        { return cell{empty: true} }
func num(f float64) cell {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return none()
	}
	return cell{text: strconv.FormatFloat(f, 'g', -1, 64), number: true}
}
func count(n uint64) cell { return cell{text: strconv.FormatUint(n, 10), number: true} }

func metrics(r *scenario.Report) []cell {
	l, e, f := r.LatencyS, r.EnergyJ, r.LinkStateFraction
	return []cell{
		num(r.ExecTimeS), num(l.Mean), num(l.P50), num(l.P99), num(l.Max),
		num(e.Links), num(e.Switches), num(e.Network), num(e.Nodes), num(e.Total),
		num(f.Wake), num(f.Transition), num(f.FastWake), num(f.DeepSleep),
		count(r.Transitions), count(r.Wakeups), count(r.Hits), count(r.Misses),
		count(r.Packets), count(r.Messages), count(r.PFCPauses), count(r.Events),
		optional(r.EndToEnd != nil, func() float64 { return r.EndToEnd.StallS }),
		optional(r.Consolidation != nil, func() float64 { return r.Consolidation.ActiveRatio }),
		optional(r.PowarModel != nil, func() float64 { return r.PowarModel.WNet }),
		optional(r.Ledger != nil, func() float64 { return r.Ledger.WorstRatio }),
		optional(r.Consolidation != nil && r.Consolidation.LowerBound > 0, func() float64 { return r.Consolidation.LowerBound }),
	}
}

// optional is a summary.json block's value, empty where the run has no
// such block (the end-to-end gate, TCEP, POWAR's model, the ports' ledger
// are per scenario).
func optional(present bool, v func() float64) cell {
	if !present {
		return none()
	}
	return num(v())
}

// overhead is 100·(x−b)/b; empty without a baseline value.
func overhead(x, b float64) cell {
	if b == 0 {
		return none()
	}
	return num(100 * (x - b) / b)
}

// saving is 100·(b−x)/b.
func saving(x, b float64) cell {
	if b == 0 {
		return none()
	}
	return num(100 * (b - x) / b)
}

func compare(r, b *scenario.Report) []cell {
	return []cell{
		overhead(r.ExecTimeS, b.ExecTimeS), overhead(r.LatencyS.Mean, b.LatencyS.Mean), overhead(r.LatencyS.P99, b.LatencyS.P99),
		saving(r.EnergyJ.Links, b.EnergyJ.Links), saving(r.EnergyJ.Network, b.EnergyJ.Network), saving(r.EnergyJ.Total, b.EnergyJ.Total),
		powarRatio(r, b, func(m *network.PowarModel) float64 { return m.ENetS }, func(m *network.PowarModel) float64 { return m.ENetS }),
		powarRatio(r, b, func(m *network.PowarModel) float64 { return m.EClusterS }, func(m *network.PowarModel) float64 { return m.EClusterS }),
		powarRatio(b, b, func(m *network.PowarModel) float64 { return m.ENetIdealS }, func(m *network.PowarModel) float64 { return m.ENetS }),
		powarRatio(b, b, func(m *network.PowarModel) float64 { return m.EClusterIdealS }, func(m *network.PowarModel) float64 { return m.EClusterS }),
	}
}

// powarRatio is paper 002's normalised energy x(r) / y(b) from the runs'
// powar_model blocks (the ideal marker: the baseline's ideal over the
// baseline's own); empty if either has none.
func powarRatio(r, b *scenario.Report, x, y func(*network.PowarModel) float64) cell {
	if r.PowarModel == nil || b.PowarModel == nil || y(b.PowarModel) == 0 {
		return none()
	}
	return num(x(r.PowarModel) / y(b.PowarModel))
}

func readSummary(dir string, pt Point) (*scenario.Report, error) {
	data, err := configs.ReadFileLimit(filepath.Join(dir, filepath.FromSlash(pt.Dir), "summary.json"), configs.MaxFileSize, "a run's summary")
	if err != nil {
		return nil, err
	}
	var r scenario.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Table is a sweep's results: Columns and one row per run in plan order.
type Table struct {
	Columns []string
	rows    [][]cell
}

// Rows is the number of rows.
func (t *Table) Rows() int { return len(t.rows) }

// Results reads what the runs of DIR wrote into a table (a pending run's
// row has status pending and empty values).
func Results(dir string, plan *Plan) (*Table, error) {
	type got struct {
		st  Status
		ok  bool
		rep *scenario.Report
	}
	byID := map[string]*got{}
	for _, pt := range plan.Points {
		if byID[pt.ID] != nil {
			continue
		}
		g := &got{}
		g.st, g.ok = ReadStatus(dir, pt)
		if g.ok && g.st.Status == StatusOK {
			rep, err := readSummary(dir, pt)
			if err != nil {
				g.st = Status{Status: StatusFailed, Error: firstLine("summary.json: " + err.Error()), WallS: g.st.WallS, Host: g.st.Host, ID: pt.ID}
			} else {
				g.rep = rep
			}
		}
		byID[pt.ID] = g
	}
	t := &Table{Columns: Columns(plan.AxisKeys)}
	nMetrics := len(MetricColumns) + len(CompareColumns)
	for _, pt := range plan.Points {
		g := byID[pt.ID]
		status := StatusPending
		if g.ok {
			status = g.st.Status
		}
		row := []cell{count(uint64(pt.Index)), str(pt.ID), str(pt.Role), str(status), str(pt.BaselineID)}
		for _, k := range plan.AxisKeys {
			if v, ok := pt.Axes.Get(k); ok {
				row = append(row, str(v))
			} else {
				row = append(row, none())
			}
		}
		row = append(row, count(pt.Seed))
		if g.rep != nil {
			row = append(row, metrics(g.rep)...)
			if b := byID[pt.BaselineID]; pt.BaselineID != "" && b != nil && b.rep != nil {
				row = append(row, compare(g.rep, b.rep)...)
			} else {
				for range CompareColumns {
					row = append(row, none())
				}
			}
		} else {
			for range nMetrics {
				row = append(row, none())
			}
		}
		if g.ok {
			row = append(row, num(g.st.WallS), str(g.st.Error))
		} else {
			row = append(row, none(), none())
		}
		if g.ok && g.st.Error == "" {
			row[len(row)-1] = none()
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

// CSV writes the table as CSV (empty cells empty).
func (t *Table) CSV() ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(t.Columns); err != nil {
		return nil, err
	}
	rec := make([]string, len(t.Columns))
	for _, row := range t.rows {
		for i, c := range row {
			rec[i] = c.text
		}
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// JSON writes the table as a list of objects with the columns as keys in
// order: numbers as numbers, empty cells as null.
func (t *Table) JSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("[")
	for r, row := range t.rows {
		if r > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  {")
		for i, c := range row {
			if i > 0 {
				b.WriteString(", ")
			}
			k, err := json.Marshal(t.Columns[i])
			if err != nil {
				return nil, err
			}
			b.Write(k)
			b.WriteString(": ")
			switch {
			case c.empty:
				b.WriteString("null")
			case c.number:
				b.WriteString(c.text)
			default:
				v, err := json.Marshal(c.text)
				if err != nil {
					return nil, err
				}
				b.Write(v)
			}
		}
		b.WriteString("}")
	}
	if len(t.rows) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	return b.Bytes(), nil
}

// Collect (re)writes DIR/results.csv and DIR/results.json from whatever
// finished, atomically.
func Collect(dir string) (*Table, error) {
	plan, err := ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	t, err := Results(dir, plan)
	if err != nil {
		return nil, err
	}
	c, err := t.CSV()
	if err != nil {
		return nil, err
	}
	j, err := t.JSON()
	if err != nil {
		return nil, err
	}
	if err := renameio.WriteFile(filepath.Join(dir, ResultsCSV), c, 0o644); err != nil {
		return nil, err
	}
	if err := renameio.WriteFile(filepath.Join(dir, ResultsJSON), j, 0o644); err != nil {
		return nil, err
	}
	return t, nil
}

// Failure is a failed run in a status report.
type Failure struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	Error string `json:"error"`
}

// Report is `lpictl sweep status`: counts per plan entry and the failures.
type Report struct {
	Name     string    `json:"name"`
	Total    int       `json:"total"`
	Done     int       `json:"done"`
	Failed   int       `json:"failed"`
	Pending  int       `json:"pending"`
	Failures []Failure `json:"failures"`
}

// StatusOf reads DIR's plan and its runs' status files.
func StatusOf(dir string) (*Report, error) {
	plan, err := ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	r := &Report{Name: plan.Name, Total: len(plan.Points), Failures: []Failure{}}
	for _, pt := range plan.Points {
		st, ok := ReadStatus(dir, pt)
		switch {
		case !ok:
			r.Pending++
		case st.Status == StatusOK:
			r.Done++
		default:
			r.Failed++
			r.Failures = append(r.Failures, Failure{Index: pt.Index, ID: pt.ID, Error: st.Error})
		}
	}
	return r, nil
}
