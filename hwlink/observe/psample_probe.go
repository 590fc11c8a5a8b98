package observe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mdlayher/genetlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// PSampleSupport says whether psample observation can work in a namespace.
type PSampleSupport struct {
	OK     bool
	Reason string
}

// ProbePSample checks, without changing anything, whether the kernel has
// the psample generic netlink family (in ns) and the act_sample and
// cls_matchall modules (loaded, built in or installed).
func ProbePSample(ns hwlink.NetNS) PSampleSupport {
	return probePSample(ns, "/")
}

func probePSample(ns hwlink.NetNS, root string) PSampleSupport {
	c, err := hwlink.DialIn(ns, genetlink.Dial)
	if err != nil {
		return PSampleSupport{Reason: "generic netlink: " + err.Error()}
	}
	defer c.Close()
	if _, err := c.GetFamily(psampleGenlName); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return PSampleSupport{Reason: "kernel lacks psample (CONFIG_PSAMPLE): generic netlink family \"psample\" not found"}
		}
		return PSampleSupport{Reason: "psample family: " + err.Error()}
	}
	for _, m := range []struct{ mod, cfg string }{{"act_sample", "CONFIG_NET_ACT_SAMPLE"}, {"cls_matchall", "CONFIG_NET_CLS_MATCHALL"}} {
		if !kernelModuleAvailable(root, m.mod) {
			return PSampleSupport{Reason: fmt.Sprintf("kernel lacks %s (%s): not loaded, built in or installed", m.mod, m.cfg)}
		}
	}
	return PSampleSupport{OK: true, Reason: "psample family, act_sample and cls_matchall present"}
}

// kernelModuleAvailable reports whether module name is loaded
// (/sys/module), built in (modules.builtin) or installed (modules.dep) for
// the running kernel, under root.
func kernelModuleAvailable(root, name string) bool {
	if _, err := os.Stat(filepath.Join(root, "sys/module", name)); err == nil {
		return true
	}
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	dir := filepath.Join(root, "lib/modules", unix.ByteSliceToString(u.Release[:]))
	for _, f := range []string{"modules.builtin", "modules.dep"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			mod, _, _ := strings.Cut(line, ":")
			base := filepath.Base(mod)
			if base == name+".ko" || strings.HasPrefix(base, name+".ko.") {
				return true
			}
		}
	}
	return false
}

// psampleOffloadDrivers are switchdev drivers known to offload the tc
// sample action (mlxsw: matchall + sample on ingress, and egress on
// Spectrum-2 and later). DSA's tc offload has no sample action.
var psampleOffloadDrivers = map[string]bool{
	"mlxsw_spectrum": true, "mlxsw_spectrum2": true, "mlxsw_spectrum3": true, "mlxsw_spectrum4": true,
}

// PSampleOffloads reports whether a switchdev driver is known to offload
// the tc sample action to its ASIC.
func PSampleOffloads(driver string) bool { return psampleOffloadDrivers[driver] }
