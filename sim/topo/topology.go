package topo

// EndKind says whether a link end is a node's NIC or a switch port.
type EndKind uint8

// Link end kinds.
const (
	NodeEnd EndKind = iota
	SwitchEnd
)

// End is one end of a link: a node's NIC (Port is always 0) or a switch port.
type End struct {
	Kind EndKind
	ID   int32 // node or switch index
	Port int32 // port index on the switch (0 for a NIC)
}

// LinkClass groups links for reporting (ports.csv, idle histograms by class).
type LinkClass uint8

// Link classes.
const (
	Injection LinkClass = iota // node ↔ switch
	Local                      // switch ↔ switch inside a group/pod/dimension
	Global                     // switch ↔ switch between groups (dragonfly, megafly)
)

// Link is one full-duplex cable between two ends.
type Link struct {
	A, B  End
	Class LinkClass
}

// Topology is a network with deterministic minimal routing (docs/model.md §3). It is
// immutable after construction and safe for concurrent reads. Nodes are
// numbered 0..Nodes()-1, switches 0..Switches()-1, and switch s has ports
// 0..Radix(s)-1 (a port may be unconnected: PortPeer reports it).
type Topology interface {
	// Name is a short label, e.g. "megafly-4160".
	Name() string
	Nodes() int
	Switches() int
	// Radix is the number of ports of switch s.
	Radix(s int) int
	// Links lists every cable exactly once, in a deterministic order.
	Links() []Link
	// Attach returns the switch and port a node's NIC is cabled to.
	Attach(node int) (sw, port int)
	// PortPeer returns what switch s port p is cabled to; ok is false for
	// an unconnected port.
	PortPeer(s, p int) (peer End, ok bool)
	// Route returns the output port switch s uses for a packet to node dst
	// (deterministic minimal routing; the port leads to dst's NIC when s is
	// dst's switch).
	Route(s, dst int) int
	// Distance is the number of links a packet crosses from switch s to
	// node dst, counting the final switch→NIC link (≥ 1).
	Distance(s, dst int) int
	// SwitchRole labels switch s for reports: "leaf", "spine", "core", "router"…
	SwitchRole(s int) string
}

// Hops is the number of links a packet crosses from node src to node dst:
// the injection link plus the distance from src's switch.
func Hops(t Topology, src, dst int) int {
	if src == dst {
		return 0
	}
	sw, _ := t.Attach(src)
	return 1 + t.Distance(sw, dst)
}
