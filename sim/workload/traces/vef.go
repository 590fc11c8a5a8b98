package traces

import (
	"fmt"
	"io"

	"github.com/google/renameio/v2"

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

// WriteVEFFile is WriteVEF to path, atomically (renameio: a temporary file
// in the same folder, renamed into place), so a failed conversion leaves
// nothing behind.
func WriteVEFFile(path string, w *workload.Workload) error {
	f, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o644))
	if err != nil {
		return err
	}
	defer f.Cleanup()
	if err := WriteVEF(f, w); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}
