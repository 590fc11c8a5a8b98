package traces

import (
	"fmt"
	"io"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/schedvef"
)

// WriteVEF writes a workload of kind ti or goal as a VEF trace
// (`lpictl workload convert --to vef`), where VEF can express it
// (schedvef.Write). Another kind, or a program VEF cannot express, is bad
// input (configs.InputError).
func WriteVEF(out io.Writer, w *workload.Workload) error {
	p, ok := w.Program().(*Program)
	if !ok {
		return configs.BadInput(fmt.Errorf("workload convert: kind %s is not a ti or goal trace (workload export --vef writes the others)", w.Jobs[0].Kind))
	}
	return configs.BadInput(schedvef.Write(out, p.Schedule()))
}
