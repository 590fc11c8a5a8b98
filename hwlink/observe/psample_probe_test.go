package observe

import (
	"os"
	"path/filepath"
	"testing"
)

func TestKernelModuleAvailable(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/module/act_sample"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !kernelModuleAvailable(root, "act_sample") || kernelModuleAvailable(root, "cls_matchall") {
		t.Error("module detection")
	}
}
