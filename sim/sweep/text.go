package sweep

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// String is "key=value …" (empty without axes).
func (a AxisValues) String() string {
	var b strings.Builder
	for i, kv := range a {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(kv.Key + "=" + kv.Value)
	}
	return b.String()
}

// Label is "ROLE key=value … seed=N", as the run's progress lines name it.
func (pt Point) Label() string {
	if len(pt.Axes) == 0 {
		return fmt.Sprintf("%s seed=%d", pt.Role, pt.Seed)
	}
	return fmt.Sprintf("%s %s seed=%d", pt.Role, pt.Axes, pt.Seed)
}

// String is the progress line of a finished run: "[k/n] run I ID LABEL:
// STATUS in Ts" and its error.
func (ev Event) String() string {
	line := fmt.Sprintf("[%d/%d] run %d %s %s: %s in %.3gs", ev.Finished, ev.Total, ev.Point.Index,
		ev.Point.ID, ev.Point.Label(), ev.Status.Status, ev.Status.WallS)
	if ev.Status.Error != "" {
		line += ": " + ev.Status.Error
	}
	return line
}

// WriteTable writes the plan's runs in index order, as `lpictl sweep plan`
// prints them: index, id, role, seed, baseline id and axis values.
func (p *Plan) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tID\tROLE\tSEED\tBASELINE\tAXES")
	for _, pt := range p.Points {
		bl := pt.BaselineID
		if bl == "" {
			bl = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\n", pt.Index, pt.ID, pt.Role, pt.Seed, bl, strings.TrimSpace(pt.Axes.String()))
	}
	return tw.Flush()
}

// WriteText writes the counts and the failures, as `lpictl sweep status`
// prints them.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s: %d runs: %d done, %d failed, %d pending\n", r.Name, r.Total, r.Done, r.Failed, r.Pending)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "failed: run %d (%s): %s\n", f.Index, f.ID, f.Error)
	}
	return nil
}
