package agent_test

import (
	"testing"

	"github.com/lpictl/lpictl/agent"
)

func TestPortInfoFirmwareAndPeerEEE(t *testing.T) {
	be := newFake("eth0", "eth1")
	be.ports["eth0"].firmware = "1.2.3 0x8000abcd"
	be.ports["eth0"].peer = []string{"1000baseT/Full", "100baseT/Full"}
	r := start(t, testConfig(t, agent.Observe, "eth0", "eth1"), be, nil)
	reg := r.a.Registry()
	if v := metric(t, reg, "lpictl_port_info", map[string]string{"device": "eth0", "firmware": "1.2.3 0x8000abcd",
		"peer_eee_modes": "1000baseT/Full,100baseT/Full"}); v != 1 {
		t.Errorf("eth0 port_info = %v, want 1 with firmware and sorted peer modes", v)
	}
	if v := metric(t, reg, "lpictl_port_info", map[string]string{"device": "eth1", "firmware": "", "peer_eee_modes": ""}); v != 1 {
		t.Errorf("eth1 port_info = %v, want 1 with empty labels", v)
	}
}
