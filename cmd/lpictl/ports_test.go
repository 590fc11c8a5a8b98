package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// TestPortsCommandNetns runs `lpictl ports` inside a test namespace that
// holds one end of a veth pair.
func TestPortsCommandNetns(t *testing.T) {
	p := hwlinktest.NewPair(t)

	var out bytes.Buffer
	root := newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"ports", "--netns", p.PathA})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 2 {
		t.Fatalf("want header and one port:\n%s", text)
	}
	for _, want := range []string{p.NameA, "veth", "10G", "up", "n/a", "no: ", "EOPNOTSUPP"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("port line lacks %q:\n%s", want, text)
		}
	}

	out.Reset()
	root = newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"ports", "--json", "--netns", p.PathB})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var ports []hwlink.PortInfo
	if err := json.Unmarshal(out.Bytes(), &ports); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(ports) != 1 {
		t.Fatalf("ports %+v", ports)
	}
	got := ports[0]
	if got.Name != p.NameB || got.Index != p.IndexB || got.Driver.Driver != "veth" || !got.Carrier ||
		got.Speed != 10_000_000_000 || got.EEE != nil || got.Actuation.CanSetTimer {
		t.Errorf("port %+v", got)
	}
}

func TestPortsCommandBadNetns(t *testing.T) {
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs([]string{"ports", "--netns", "no-such-namespace-lpictl"})
	err := root.Execute()
	if err == nil {
		t.Fatal("accepted a missing namespace")
	}
	if code := run([]string{"ports", "--netns", "no-such-namespace-lpictl"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
}
