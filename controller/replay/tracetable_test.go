package replay

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
)

// TestTraceTableAsTabwriter: TraceTable aligns as text/tabwriter with
// AlignRight and padding 2 (the --trace table's former writer).
func TestTraceTableAsTabwriter(t *testing.T) {
	rows := [][]string{{"#", "line", "start", "gap"}, {"1", "12", "6.5µs", "never"}, {"200", "3", "0s", "1h0m0.5s"}}
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', tabwriter.AlignRight)
	var st TraceTable
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
		st.Row(r...)
	}
	tw.Flush()
	var got bytes.Buffer
	if _, err := st.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}
