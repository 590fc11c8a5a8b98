package hwbackend

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
)

// CheckNetNS refuses a --netns that does not exist (bad input): a name
// `ip netns` does not know, or a missing path. "" is the current one.
func CheckNetNS(netns string) error {
	switch {
	case netns == "":
	case !strings.Contains(netns, "/"):
		if _, err := os.Stat("/run/netns/" + netns); err != nil {
			return configs.BadInput(fmt.Errorf("--netns %q: no such named network namespace (give a name from `ip netns` or a path)", netns))
		}
	default:
		if _, err := os.Stat(netns); err != nil {
			return configs.BadInput(fmt.Errorf("--netns: %w", err))
		}
	}
	return nil
}

// EmulatorInputErr marks the emulator's errors that name something the
// user gave — a missing device or emulator, a physical device without
// --allow-physical, a private bpffs — as bad input; the rest stay runtime
// failures.
func EmulatorInputErr(err error) error {
	if errors.Is(err, hwlink.ErrNoDevice) || errors.Is(err, emulate.ErrNotEmulated) ||
		errors.Is(err, emulate.ErrPhysicalDevice) || errors.Is(err, emulate.ErrPrivateBPFFS) {
		return configs.BadInput(err)
	}
	return err
}
