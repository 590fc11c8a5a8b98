package network

import (
	"flag"
	"os"
	"testing"
)

// TestMain makes every test of the package check, at each read, the
// copies of the controllers' sleep floors that peerFloor reads
// (verifyFloor). Not the benchmarks: a check reads the controller lines
// the copy spares.
func TestMain(m *testing.M) {
	flag.Parse()
	verifyFloors = flag.Lookup("test.bench").Value.String() == ""
	os.Exit(m.Run())
}
