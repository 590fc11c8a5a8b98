package hwlink

import (
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

func TestHopTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "hops.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ht, err := ParseHopConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if ht.Default() != 3 {
		t.Errorf("default %d", ht.Default())
	}
	// docs/model.md §2.2 worked example: 70 % at 4 hops, 30 % at 6, bound 1 % → l = 0.00225.
	if l := 0.01 * HopFactor(ht.Port("swp1")); math.Abs(l-0.00225) > 1e-12 {
		t.Errorf("l = %v, want 0.00225", l)
	}
	if d := ht.Port("eth0"); len(d) != 1 || d[0].Hops != 4 || d[0].Share != 1 {
		t.Errorf("eth0 %v", d)
	}
	if d := ht.Port("other"); len(d) != 1 || d[0].Hops != 3 {
		t.Errorf("default port %v", d)
	}
	for addr, want := range map[string]int{
		"10.1.2.3": 2, "10.1.200.1": 7, "10.2.0.1": 6, "192.0.2.1": 3, "2001:db8::1": 5, "::ffff:10.1.2.3": 2,
	} {
		if got := ht.Destination(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Destination(%s) = %d, want %d", addr, got, want)
		}
	}
	empty, err := ParseHopConfig(nil)
	if err != nil || empty.Default() != 1 || HopFactor(empty.Port("x")) != 1 {
		t.Errorf("empty config: %v %v", empty, err)
	}
}

func TestHopConfigErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown key":    "defualt: 3\n",
		"zero hops":      "ports: {eth0: 0}\n",
		"negative share": "ports: {eth0: [{hops: 2, share: -1}]}\n",
		"empty dist":     "ports: {eth0: []}\n",
		"bad prefix":     "prefixes: {10.0.0.0/33: 2}\n",
		"default range":  "default: 5000\n",
		"not yaml":       "{{{",
		"prefix hops":    "prefixes: {10.0.0.0/8: 0}\n",
	} {
		if _, err := ParseHopConfig([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %q", name, doc)
		}
	}
}

func FuzzParseHopConfig(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "hops.yaml")); err == nil {
		f.Add(data)
	}
	f.Add([]byte("default: 2\n"))
	f.Add([]byte("ports: {eth0: [{hops: 1, share: 1e308}, {hops: 2, share: 1e308}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ht, err := ParseHopConfig(data)
		if err != nil {
			return
		}
		if ht.Default() < 1 {
			t.Fatalf("default %d", ht.Default())
		}
		for name := range ht.ports {
			f := HopFactor(ht.Port(name))
			if !(f > 0 && f <= 1) {
				t.Fatalf("hop factor %v for %s", f, name)
			}
		}
		_ = ht.Destination(netip.MustParseAddr("10.0.0.1"))
	})
}
