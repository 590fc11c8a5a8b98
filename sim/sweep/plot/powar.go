package plot

import "strings"

// powarFigure is paper 002 Figs. 4 and 5: against t_PDT (log axis), (a)
// the run-time overhead, (b) the network energy E_net and (c) the system
// energy E_cluster of the paper's normalised power model, both over the
// reference run's (the baseline: always on), one series per selection
// function (the routing column: Round-Robin, First-On, POWAR, Alonso), a row of
// panels per workload (the name column, if the sweep has one). The dashed
// line of each series is the paper's "ideal" marker: the reference run's
// energy with every port on only while it transmits.
func powarFigure(t *Table, rows []int) (*figure, error) {
	const xcol = "predictor.pdt"
	if err := requireCols(t, xcol, "routing", "exec_overhead_pct", "powar_e_net_norm", "powar_e_cluster_norm",
		"powar_ideal_e_net_norm", "powar_ideal_e_cluster_norm"); err != nil {
		return nil, err
	}
	rows = pointRows(t, rows)
	x := &xAxis{label: "Power-down threshold t_PDT", scale: xDuration, log: true}
	specs := []panelSpec{
		{title: "(a) Run time", yLabel: "Run time overhead (%)",
			ys: []ySpec{{col: "exec_overhead_pct"}}},
		{title: "(b) Network energy", yLabel: "E_net / reference",
			ys: []ySpec{{col: "powar_e_net_norm"}, {col: "powar_ideal_e_net_norm", dash: true}}},
		{title: "(c) System energy", yLabel: "E_cluster / reference",
			ys: []ySpec{{col: "powar_e_cluster_norm"}, {col: "powar_ideal_e_cluster_norm", dash: true}}},
	}
	notes := []lineNote{{name: "ideal: instant on/off (b, c)", dash: true}}
	var rowKey func(int) string
	if t.Has("name") {
		rowKey = func(r int) string { return t.Cell(r, "name") }
	}
	return linesFigure(t, rows, x, columnX(t, xcol, xDuration, nil),
		describeKey(t, []string{"routing"}, selectionLabel), rowKey, specs, notes)
}

// selectionLabel names a routing value by paper 002's selection functions.
func selectionLabel(_, v string) string {
	switch {
	case strings.Contains(v, "alonso: true"):
		return "Alonso"
	case strings.Contains(v, "round_robin: true"):
		return "Round-Robin"
	case strings.Contains(v, "first_on: true"):
		return "First-On"
	case strings.Contains(v, "kind: powar"):
		return "POWAR"
	case strings.Contains(v, "kind: ecmp"):
		return "ECMP"
	case strings.Contains(v, "kind: minimal"):
		return "minimal (DOR, D-mod-k)"
	}
	return v
}
