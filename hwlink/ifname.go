package hwlink

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// CheckIfname rejects names the kernel cannot take: empty, or IFNAMSIZ
// (16) bytes or longer.
func CheckIfname(ifname string) error {
	if ifname == "" || len(ifname) >= unix.IFNAMSIZ {
		return fmt.Errorf("invalid interface name %q", ifname)
	}
	return nil
}
