package topo

import "fmt"

// Dragonfly is the canonical dragonfly of Kim, Dally, Scott and Abts (ISCA
// 2008): G groups of a routers, each router with p nodes, a fully connected
// group (a − 1 local links per router) and h global links; every pair of
// groups is joined by exactly one global link.
//
// Numbering: router g·a+r is router r of group g; node (g·a+r)·p+q is on its
// port q. Ports: 0..p−1 nodes; p..p+a−2 local, to router t of the group on
// port p+t for t < r and p+t−1 for t > r; p+a−1+i global link i.
//
// Wiring (the "consecutive" arrangement, the same rule as docs/model.md §3.1's
// Megafly): global link i of router r of group g goes to group (g + d) mod G
// with d = 1 + i + h·r, arriving on the link of the peer group with offset
// G − d; links with d ≥ G are unconnected.
//
// Routing: minimal in the dragonfly sense, local → global → local: a router
// sends a packet for its own nodes down, for its group straight to the
// destination router, and for another group to the router of its group
// that owns the global link to that group (over it if that is itself).
// At most one global link is used, as the deadlock-avoidance schemes for
// dragonflies assume. A path over two global links that lands directly on
// the destination router can be one link shorter in the graph; this routing
// never takes it (docs/topologies.md gives how often that happens).
type Dragonfly struct {
	name                      string
	groups, routers, perRtr   int
	globals, radix, localBase int
	globalBase                int
}

func newDragonfly(c Config) *Dragonfly {
	d := &Dragonfly{
		name:       fmt.Sprintf("dragonfly-%d", c.Groups*c.Routers*c.NodesPerSwitch),
		groups:     c.Groups,
		routers:    c.Routers,
		perRtr:     c.NodesPerSwitch,
		globals:    c.GlobalLinks,
		radix:      c.Radix,
		localBase:  c.NodesPerSwitch,
		globalBase: c.NodesPerSwitch + c.Routers - 1,
	}
	if d.radix == 0 {
		d.radix = d.globalBase + d.globals
	}
	return d
}

// Name implements Topology.
func (d *Dragonfly) Name() string { return d.name }

// Nodes implements Topology.
func (d *Dragonfly) Nodes() int { return d.groups * d.routers * d.perRtr }

// Switches implements Topology.
func (d *Dragonfly) Switches() int { return d.groups * d.routers }

// Groups is the number of groups.
func (d *Dragonfly) Groups() int { return d.groups }

// SwitchGroup is the group of router s.
func (d *Dragonfly) SwitchGroup(s int) int { return s / d.routers }

// Radix implements Topology.
func (d *Dragonfly) Radix(int) int { return d.radix }

// SwitchRole implements Topology: every switch is a "router".
func (d *Dragonfly) SwitchRole(int) string { return "router" }

// Attach implements Topology.
func (d *Dragonfly) Attach(node int) (sw, port int) { return node / d.perRtr, node % d.perRtr }

func (d *Dragonfly) localPort(own, to int) int {
	if to < own {
		return d.localBase + to
	}
	return d.localBase + to - 1
}

// globalPeer returns the far end of global link i of router r in group g.
func (d *Dragonfly) globalPeer(g, r, i int) (End, bool) {
	off := 1 + i + d.globals*r
	if off >= d.groups {
		return End{}, false
	}
	g2 := (g + off) % d.groups
	back := d.groups - off - 1
	r2, i2 := back/d.globals, back%d.globals
	return End{Kind: SwitchEnd, ID: int32(g2*d.routers + r2), Port: int32(d.globalBase + i2)}, true
}

// PortPeer implements Topology.
func (d *Dragonfly) PortPeer(s, p int) (End, bool) {
	g, r := s/d.routers, s%d.routers
	switch {
	case p < d.localBase:
		return End{Kind: NodeEnd, ID: int32(s*d.perRtr + p)}, true
	case p < d.globalBase:
		t := p - d.localBase
		if t >= r {
			t++
		}
		return End{Kind: SwitchEnd, ID: int32(g*d.routers + t), Port: int32(d.localPort(t, r))}, true
	case p < d.globalBase+d.globals:
		return d.globalPeer(g, r, p-d.globalBase)
	}
	return End{}, false
}

// Links implements Topology: the node cables, the local cables (router
// pairs in order, group by group), then the global cables, each once from
// its lower-numbered group.
func (d *Dragonfly) Links() []Link {
	nLocal := d.groups * d.routers * (d.routers - 1) / 2
	links := make([]Link, 0, d.Nodes()+nLocal+d.groups*(d.groups-1)/2)
	for node := range d.Nodes() {
		links = append(links, Link{
			A:     End{Kind: NodeEnd, ID: int32(node)},
			B:     End{Kind: SwitchEnd, ID: int32(node / d.perRtr), Port: int32(node % d.perRtr)},
			Class: Injection,
		})
	}
	for g := range d.groups {
		for r := range d.routers {
			for t := r + 1; t < d.routers; t++ {
				links = append(links, Link{
					A:     End{Kind: SwitchEnd, ID: int32(g*d.routers + r), Port: int32(d.localPort(r, t))},
					B:     End{Kind: SwitchEnd, ID: int32(g*d.routers + t), Port: int32(d.localPort(t, r))},
					Class: Local,
				})
			}
		}
	}
	for g := range d.groups {
		for r := range d.routers {
			for i := range d.globals {
				peer, ok := d.globalPeer(g, r, i)
				if !ok || int(peer.ID)/d.routers < g {
					continue
				}
				links = append(links, Link{
					A:     End{Kind: SwitchEnd, ID: int32(g*d.routers + r), Port: int32(d.globalBase + i)},
					B:     peer,
					Class: Global,
				})
			}
		}
	}
	return links
}

// Route implements Topology (see the type's comment).
func (d *Dragonfly) Route(s, dst int) int {
	g, r := s/d.routers, s%d.routers
	rd := dst / d.perRtr
	gd := rd / d.routers
	if g == gd {
		if t := rd % d.routers; t != r {
			return d.localPort(r, t)
		}
		return dst % d.perRtr
	}
	j := (gd-g+d.groups)%d.groups - 1
	if owner := j / d.globals; owner != r {
		return d.localPort(r, owner)
	}
	return d.globalBase + j%d.globals
}

// Distance implements Topology.
func (d *Dragonfly) Distance(s, dst int) int {
	g, r := s/d.routers, s%d.routers
	rd := dst / d.perRtr
	gd := rd / d.routers
	if g == gd {
		if rd%d.routers != r {
			return 2
		}
		return 1
	}
	j := (gd-g+d.groups)%d.groups - 1
	n := 2 // global, node
	if j/d.globals != r {
		n++ // local to the owner
	}
	// the link arrives at router (G − j − 2) / h of the destination group
	if (d.groups-j-2)/d.globals != rd%d.routers {
		n++ // local to the destination router
	}
	return n
}
