package scenario

import (
	"fmt"
	"io"
	"time"
)

// Emit writes the outcome as `lpictl sim run` prints it: to dir (when not
// "": summary.json, perf.json and the CSV files) and to w, as one JSON
// object (withPerf adds the wall-clock figures) or as the table.
func (o *Outcome) Emit(w io.Writer, dir string, asJSON, withPerf bool) error {
	if dir != "" {
		if err := o.WriteDir(dir); err != nil {
			return err
		}
	}
	if asJSON {
		return o.WriteJSON(w, withPerf)
	}
	return o.WriteTable(w)
}

// Interrupted says how far an interrupted run (^C, SIGTERM) got and where
// its partial output is (dir, when not ""); nil for a complete run and for
// a deadlocked one (its error is the run's, a runtime failure).
func (o *Outcome) Interrupted(dir string) error {
	if !o.Report.Incomplete || o.Report.Deadlock != "" {
		return nil
	}
	where := ""
	if dir != "" {
		where = "; " + dir + " holds it"
	}
	return fmt.Errorf("interrupted after %v simulated: the output covers the run up to there (incomplete%s)",
		time.Duration(o.Report.ExecTimeS*1e9).Round(time.Microsecond), where)
}
