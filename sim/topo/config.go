package topo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Topology kinds (Config.Kind).
const (
	KindMegafly   = "megafly"   // Megafly / Dragonfly+ (docs/model.md §3.1)
	KindFatTree   = "fattree"   // k-ary n-tree (Petrini & Vanneschi)
	KindRLFT      = "rlft"      // real-life fat tree (paper 000 Table 7)
	KindTorus3D   = "torus3d"   // 3D torus (paper 000 Table 7)
	KindDragonfly = "dragonfly" // canonical dragonfly (Kim et al. 2008)
	KindFBFly     = "fbfly"     // flattened butterfly (paper 004)
	KindHyperX    = "hyperx"    // HyperX (Ahn et al., SC 2009)
)

// Kinds lists the topology kinds Build accepts.
func Kinds() []string {
	return []string{KindMegafly, KindFatTree, KindRLFT, KindTorus3D, KindDragonfly, KindFBFly, KindHyperX}
}

// Defaults. Zero fields of a Config take these values; those that come from
// a paper say which table.
const (
	// Megafly: docs/model.md §3.1 and paper 000 Table 6 (switch radix 16, 1040
	// switches, 4160 nodes): 8 leaves, 8 spines, 8 nodes per leaf, 8 global
	// links per spine, 65 groups. With radix set, each of these is radix/2.
	defaultMegaflyRadix = 16

	// RLFT: paper 000 Table 7 (radix 26: 338 leaf, 338 middle, 169 top
	// switches, 13 nodes per leaf, 4394 nodes), three levels.
	defaultRLFTRadix = 26
	// fattree: ours, the 8-ary 3-tree (radix 16, 512 nodes).
	defaultFatTreeRadix = 16
	defaultTreeLevels   = 3

	// 3D torus: paper 000 Table 7 (1000 switches, 4000 nodes, 28000 links):
	// 10×10×10 switches with 4 nodes each; 28000 = 1000 × 24 + 4000 implies a
	// radix-24 switch, of which 4 + 6 ports are cabled.
	defaultTorusSide  = 10
	defaultTorusNodes = 4
	defaultTorusRadix = 24

	// Dragonfly: ours, the balanced a = 2p = 2h dragonfly of Kim et al.
	// (ISCA 2008) with p = h = 4, a = 8: 33 groups, 264 routers, 1056 nodes.
	defaultDragonflyP = 4

	// Flattened butterfly: paper 004 (512-node 2D FBFLY); the paper does not
	// give the layout, the canonical one is 8×8 routers × 8 nodes, radix 22.
	defaultFBFlySide  = 8
	defaultFBFlyNodes = 8

	// HyperX: ours, a 3-dimensional 4×4×4 lattice with 4 nodes per switch
	// (64 switches, 256 nodes, radix 13); unequal sides are its point.
	defaultHyperXSide  = 4
	defaultHyperXNodes = 4
	defaultHyperXDims  = 3
)

// Size limits that keep every index in an int32 End and Links() in memory.
const (
	MaxNodes    = 1 << 22
	MaxSwitches = 1 << 22
	MaxRadix    = 1 << 12
	maxLevels   = 8
	maxDims     = 8
)

// KindSection marks the section's keys as depending on its kind
// (configs.KindSection): --set topology.kind=K drops the file's other
// topology keys, which belonged to its previous kind.
func (Config) KindSection() {}

// Config selects and sizes a topology. Zero fields take the default of the
// kind (the paper's network where there is one); fields a kind does not use
// must be left zero. YAML key: `topology`.
type Config struct {
	// Kind is megafly (default), fattree, rlft, torus3d, dragonfly, fbfly or hyperx.
	Kind string `yaml:"kind" json:"kind"`
	// Groups: megafly and dragonfly; default the maximum, one global link
	// per pair of groups (spines × global_links + 1, routers × global_links + 1).
	Groups int `yaml:"groups,omitempty" json:"groups,omitempty"`
	// Leaves and Spines per group: megafly (default 8, or radix/2).
	Leaves int `yaml:"leaves,omitempty" json:"leaves,omitempty"`
	Spines int `yaml:"spines,omitempty" json:"spines,omitempty"`
	// Routers per group (a): dragonfly (default 8, or 2p).
	Routers int `yaml:"routers,omitempty" json:"routers,omitempty"`
	// NodesPerSwitch: nodes per leaf (megafly, default 8) or per router
	// (dragonfly 4, torus3d 4, fbfly 8, hyperx 4). Fat trees derive it from the radix.
	NodesPerSwitch int `yaml:"nodes_per_switch,omitempty" json:"nodes_per_switch,omitempty"`
	// GlobalLinks per spine (megafly, default 8) or per router (dragonfly, default 4).
	GlobalLinks int `yaml:"global_links,omitempty" json:"global_links,omitempty"`
	// Radix of every switch. Fat trees: defines the tree (even; default 16
	// for fattree, 26 for rlft). Other kinds: default the ports in use
	// (torus3d: at least 24, Table 7); a larger radix leaves ports
	// unconnected, which only changes the Table 7 link count.
	Radix int `yaml:"radix,omitempty" json:"radix,omitempty"`
	// Levels of switches: fattree and rlft (default 3).
	Levels int `yaml:"levels,omitempty" json:"levels,omitempty"`
	// Dims: switches per dimension. torus3d: three sides (default
	// [10,10,10]); fbfly: one or more (default [8,8]); hyperx: one or
	// more, S_1…S_L (default [4,4,4]).
	Dims []int `yaml:"dims,omitempty" json:"dims,omitempty"`
	// Trunk is the number of parallel cables of every neighbour link of a
	// torus3d (an aggregated link, paper 002's 4-wide trunks); 0 and 1 are
	// a single cable. Other kinds refuse it.
	Trunk int `yaml:"trunk,omitempty" json:"trunk,omitempty"`
	// Dateline gives the hops of a torus3d the Dally–Seitz dateline
	// classes (Torus.HopClass), which the simulator carries as its two
	// traffic classes: dimension-order routing becomes deadlock-free (see
	// Torus). Any trunk; other kinds refuse it.
	Dateline bool `yaml:"dateline,omitempty" json:"dateline,omitempty"`
}

// Default is the network of paper 000 Table 6: the 4160-node Megafly.
func Default() Config {
	return Config{
		Kind:           KindMegafly,
		Groups:         65,
		Leaves:         8,
		Spines:         8,
		NodesPerSwitch: 8,
		GlobalLinks:    8,
	}
}

// fieldErr formats a validation error naming the YAML field.
func fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("topology.%s: %s", field, fmt.Sprintf(format, args...))
}

// field is one numeric field of Config with its YAML name.
type field struct {
	name string
	v    int
}

func (c *Config) intFields() []field {
	return []field{
		{"groups", c.Groups}, {"leaves", c.Leaves}, {"spines", c.Spines},
		{"routers", c.Routers}, {"nodes_per_switch", c.NodesPerSwitch},
		{"global_links", c.GlobalLinks}, {"radix", c.Radix}, {"levels", c.Levels},
		{"trunk", c.Trunk},
	}
}

// used lists the fields each kind reads.
func used(kind string) []string {
	switch kind {
	case KindMegafly:
		return []string{"groups", "leaves", "spines", "nodes_per_switch", "global_links", "radix"}
	case KindDragonfly:
		return []string{"groups", "routers", "nodes_per_switch", "global_links", "radix"}
	case KindFatTree, KindRLFT:
		return []string{"radix", "levels"}
	case KindTorus3D:
		return []string{"dims", "nodes_per_switch", "radix", "trunk"}
	case KindFBFly, KindHyperX:
		return []string{"dims", "nodes_per_switch", "radix"}
	}
	return nil
}

// Normalized returns the config with the kind and every zero field set to
// its default, and checks it (the error is Validate's).
func (c Config) Normalized() (Config, error) {
	n := c
	n.Dims = slices.Clone(c.Dims)
	n.Kind = strings.ToLower(strings.TrimSpace(n.Kind))
	if n.Kind == "" {
		n.Kind = KindMegafly
	}
	if !slices.Contains(Kinds(), n.Kind) {
		return n, fieldErr("kind", "unknown kind %q (want %s)", c.Kind, strings.Join(Kinds(), ", "))
	}
	use := used(n.Kind)
	for _, f := range n.intFields() {
		if f.v < 0 {
			return n, fieldErr(f.name, "must be positive (0 selects the default), got %d", f.v)
		}
		if f.v != 0 && !slices.Contains(use, f.name) {
			return n, fieldErr(f.name, "not used by kind %s (uses %s)", n.Kind, strings.Join(use, ", "))
		}
	}
	if n.Dateline && n.Kind != KindTorus3D {
		return n, fieldErr("dateline", "not used by kind %s (torus3d only)", n.Kind)
	}
	if len(n.Dims) != 0 && !slices.Contains(use, "dims") {
		return n, fieldErr("dims", "not used by kind %s (uses %s)", n.Kind, strings.Join(use, ", "))
	}
	if n.Radix > MaxRadix {
		return n, fieldErr("radix", "%d exceeds the limit of %d ports", n.Radix, MaxRadix)
	}
	var err error
	switch n.Kind {
	case KindMegafly:
		err = n.normalizeMegafly()
	case KindDragonfly:
		err = n.normalizeDragonfly()
	case KindFatTree, KindRLFT:
		err = n.normalizeTree()
	case KindTorus3D, KindFBFly, KindHyperX:
		err = n.normalizeGrid()
	}
	return n, err
}

// Validate reports the first problem of the config, naming the field as
// topology.<field>.
func (c Config) Validate() error {
	_, err := c.Normalized()
	return err
}

// Build validates the config and constructs the topology.
func Build(c Config) (Topology, error) {
	n, err := c.Normalized()
	if err != nil {
		return nil, err
	}
	switch n.Kind {
	case KindMegafly:
		return newMegafly(n), nil
	case KindDragonfly:
		return newDragonfly(n), nil
	case KindFatTree, KindRLFT:
		return newFatTree(n), nil
	case KindTorus3D:
		return newTorus(n), nil
	case KindFBFly, KindHyperX:
		return newHyperX(n), nil
	}
	return nil, errors.New("topology: unreachable kind") // Normalized checked the kind
}

// mulCap multiplies non-negative ints, saturating at 1<<40 so that size
// checks cannot overflow.
func mulCap(a, b int) int {
	const limit = 1 << 40
	if a == 0 || b == 0 {
		return 0
	}
	if a > limit/b {
		return limit + 1
	}
	return min(a*b, limit+1)
}

func checkSize(kind string, nodes, switches int) error {
	if nodes > MaxNodes {
		return fmt.Errorf("topology: this %s has %d nodes, more than the limit of %d", kind, nodes, MaxNodes)
	}
	if switches > MaxSwitches {
		return fmt.Errorf("topology: this %s has %d switches, more than the limit of %d", kind, switches, MaxSwitches)
	}
	return nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func (c *Config) normalizeMegafly() error {
	half := defaultMegaflyRadix / 2
	if c.Radix != 0 {
		half = c.Radix / 2
		if half == 0 && (c.Leaves == 0 || c.Spines == 0 || c.NodesPerSwitch == 0 || c.GlobalLinks == 0) {
			return fieldErr("radix", "%d is too small for a megafly (leaves, spines, nodes and global links default to radix/2)", c.Radix)
		}
	}
	c.Leaves = orDefault(c.Leaves, half)
	c.Spines = orDefault(c.Spines, half)
	c.NodesPerSwitch = orDefault(c.NodesPerSwitch, half)
	c.GlobalLinks = orDefault(c.GlobalLinks, half)
	if c.Leaves > MaxRadix || c.Spines > MaxRadix || c.NodesPerSwitch > MaxRadix || c.GlobalLinks > MaxRadix {
		return fmt.Errorf("topology: megafly ports per switch exceed the limit of %d", MaxRadix)
	}
	leafPorts := c.NodesPerSwitch + c.Spines
	spinePorts := c.Leaves + c.GlobalLinks
	if c.Radix != 0 {
		if c.Radix < leafPorts {
			return fieldErr("radix", "%d is too small for a megafly leaf with %d nodes and %d spines (needs %d ports)",
				c.Radix, c.NodesPerSwitch, c.Spines, leafPorts)
		}
		if c.Radix < spinePorts {
			return fieldErr("radix", "%d is too small for a megafly spine with %d leaves and %d global links (needs %d ports)",
				c.Radix, c.Leaves, c.GlobalLinks, spinePorts)
		}
	}
	maxGroups := mulCap(c.Spines, c.GlobalLinks) + 1
	if c.Groups == 0 {
		c.Groups = maxGroups
	}
	if c.Groups > maxGroups {
		return fieldErr("groups", "%d is more than spines × global_links + 1 = %d (a megafly joins each pair of groups by one global link)",
			c.Groups, maxGroups)
	}
	nodes := mulCap(mulCap(c.Groups, c.Leaves), c.NodesPerSwitch)
	switches := mulCap(c.Groups, c.Leaves+c.Spines)
	return checkSize("megafly", nodes, switches)
}

func (c *Config) normalizeDragonfly() error {
	p := defaultDragonflyP
	if c.Radix != 0 {
		p = (c.Radix + 1) / 4
		if p == 0 && (c.NodesPerSwitch == 0 || c.Routers == 0 || c.GlobalLinks == 0) {
			return fieldErr("radix", "%d is too small for a balanced dragonfly (p = h = (radix+1)/4, a = 2p; needs ≥ 3)", c.Radix)
		}
	}
	c.NodesPerSwitch = orDefault(c.NodesPerSwitch, p)
	c.GlobalLinks = orDefault(c.GlobalLinks, p)
	c.Routers = orDefault(c.Routers, 2*p)
	if c.NodesPerSwitch > MaxRadix || c.Routers > MaxRadix || c.GlobalLinks > MaxRadix {
		return fmt.Errorf("topology: dragonfly ports per router exceed the limit of %d", MaxRadix)
	}
	ports := c.NodesPerSwitch + c.Routers - 1 + c.GlobalLinks
	if c.Radix != 0 && c.Radix < ports {
		return fieldErr("radix", "%d is too small for a dragonfly router with %d nodes, %d local and %d global links (needs %d ports)",
			c.Radix, c.NodesPerSwitch, c.Routers-1, c.GlobalLinks, ports)
	}
	maxGroups := mulCap(c.Routers, c.GlobalLinks) + 1
	if c.Groups == 0 {
		c.Groups = maxGroups
	}
	if c.Groups > maxGroups {
		return fieldErr("groups", "%d is more than routers × global_links + 1 = %d (a dragonfly joins each pair of groups by one global link)",
			c.Groups, maxGroups)
	}
	nodes := mulCap(mulCap(c.Groups, c.Routers), c.NodesPerSwitch)
	return checkSize("dragonfly", nodes, mulCap(c.Groups, c.Routers))
}

func (c *Config) normalizeTree() error {
	def := defaultFatTreeRadix
	if c.Kind == KindRLFT {
		def = defaultRLFTRadix
	}
	c.Radix = orDefault(c.Radix, def)
	c.Levels = orDefault(c.Levels, defaultTreeLevels)
	if c.Radix%2 != 0 {
		return fieldErr("radix", "%d must be even for a %s (half the ports go down, half up)", c.Radix, c.Kind)
	}
	if c.Radix < 4 {
		return fieldErr("radix", "%d is too small for a %s (needs an even radix ≥ 4)", c.Radix, c.Kind)
	}
	if c.Levels > maxLevels {
		return fieldErr("levels", "%d exceeds the limit of %d levels", c.Levels, maxLevels)
	}
	t := treeShape(c.Kind, c.Radix, c.Levels)
	if t.nodes < 0 {
		return fmt.Errorf("topology: this %s has more than %d nodes or %d switches", c.Kind, MaxNodes, MaxSwitches)
	}
	return nil
}

func (c *Config) normalizeGrid() error {
	side, nodes, wantDims := defaultFBFlySide, defaultFBFlyNodes, 2
	switch c.Kind {
	case KindTorus3D:
		side, nodes, wantDims = defaultTorusSide, defaultTorusNodes, 3
	case KindHyperX:
		side, nodes, wantDims = defaultHyperXSide, defaultHyperXNodes, defaultHyperXDims
	}
	if len(c.Dims) == 0 {
		c.Dims = slices.Repeat([]int{side}, wantDims)
	}
	if c.Kind == KindTorus3D && len(c.Dims) != 3 {
		return fieldErr("dims", "a torus3d needs 3 sides, got %d", len(c.Dims))
	}
	if len(c.Dims) > maxDims {
		return fieldErr("dims", "%d dimensions exceed the limit of %d", len(c.Dims), maxDims)
	}
	switches := 1
	for i, k := range c.Dims {
		if k <= 0 {
			return fieldErr(fmt.Sprintf("dims[%d]", i), "must be ≥ 1, got %d", k)
		}
		switches = mulCap(switches, k)
	}
	c.NodesPerSwitch = orDefault(c.NodesPerSwitch, nodes)
	if c.NodesPerSwitch > MaxRadix {
		return fieldErr("nodes_per_switch", "%d exceeds the limit of %d", c.NodesPerSwitch, MaxRadix)
	}
	if c.Trunk > MaxRadix {
		return fieldErr("trunk", "%d exceeds the limit of %d", c.Trunk, MaxRadix)
	}
	ports := c.NodesPerSwitch
	for _, k := range c.Dims {
		if c.Kind == KindTorus3D {
			ports += 2 * max(1, c.Trunk)
		} else {
			ports += k - 1
		}
	}
	if ports > MaxRadix {
		return fmt.Errorf("topology: this %s needs %d ports per switch, more than the limit of %d", c.Kind, ports, MaxRadix)
	}
	if c.Radix == 0 {
		c.Radix = ports
		if c.Kind == KindTorus3D {
			c.Radix = max(ports, defaultTorusRadix)
		}
	}
	if c.Radix < ports {
		what := "a neighbour each way in every dimension"
		if c.Trunk > 1 {
			what = fmt.Sprintf("a %d-cable trunk to a neighbour each way in every dimension", c.Trunk)
		}
		if c.Kind != KindTorus3D {
			what = "every other router of each dimension"
		}
		return fieldErr("radix", "%d is too small for a %s switch with %d nodes and %s (needs %d ports)",
			c.Radix, c.Kind, c.NodesPerSwitch, what, ports)
	}
	return checkSize(c.Kind, mulCap(switches, c.NodesPerSwitch), switches)
}
