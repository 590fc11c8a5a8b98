package observe

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// TestEBPFPermissionHintNamesCapabilities (issue 11, defect 6): a refused
// load or attach names the three capabilities a TC program needs:
// CAP_BPF, CAP_PERFMON (without it the verifier rejects the program) and
// CAP_NET_ADMIN.
func TestEBPFPermissionHintNamesCapabilities(t *testing.T) {
	for _, errno := range []error{unix.EPERM, unix.EACCES} {
		err := hwlink.ClassifyBPFErr(fmt.Errorf("load program: %w", errno))
		if !errors.Is(err, hwlink.ErrPermission) || !errors.Is(err, errno) {
			t.Errorf("%v: %v does not match ErrPermission and the errno", errno, err)
		}
		for _, c := range []string{"CAP_BPF", "CAP_PERFMON", "CAP_NET_ADMIN"} {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("%v: hint %q does not name %s", errno, err, c)
			}
		}
	}
	if err := hwlink.ClassifyBPFErr(unix.EINVAL); strings.Contains(err.Error(), "CAP_") {
		t.Errorf("a non-permission error names capabilities: %v", err)
	}
}
