package topo

import "fmt"

// FatTree is a folded-Clos fat tree with n levels of radix-2k switches, in
// the extended generalised fat tree form XGFT(n; m_1..m_n; w_1..w_n):
//
//   - fattree: the k-ary n-tree of Petrini & Vanneschi, m_i = k, w_i = k
//     (w_1 = 1): k^n nodes, n·k^(n−1) switches; the top switches use only
//     their k down ports (the k up ports are unconnected).
//   - rlft: the real-life fat tree of paper 000 Table 7 (Zahavi's RLFT,
//     Al-Fares' k-ary fat tree for 3 levels): like the k-ary n-tree but the
//     top switches use all 2k ports downwards, so m_n = 2k: 2k^n nodes,
//     2k^(n−1) switches on each lower level and k^(n−1) on top. Radix 26,
//     3 levels: 4394 nodes, 338 leaf, 338 middle, 169 top switches. Radix 16,
//     3 levels: the 1024-host 3-tier fat tree of htsim (16 pods of 8 leaves
//     and 8 middles, 64 top switches).
//
// Numbering: level 1 (leaves) first, then level 2, …, level n (top).
// A level-i switch is (a, b): a is the subtree it roots (nodes
// a·D_i … (a+1)·D_i − 1 with D_i = m_1·…·m_i) and b its replica among
// R_i = w_1·…·w_i switches rooting that subtree; its index in the level is
// a·R_i + b. Ports: 0..m_i−1 down (port c to child c), m_i..m_i+w_{i+1}−1
// up (port m_i+q to parent q = (a/m_{i+1}, b·w_{i+1}+q)).
// Node d is on port d mod m_1 of leaf d / m_1.
//
// Routing: D-mod-k (Zahavi, Gómez et al.). A packet for node d at a switch
// whose subtree contains d goes down (the path is unique); otherwise it
// goes up through parent q = (d / R_i) mod w_{i+1}, which spreads the
// destinations of a leaf over all its up links and gives every destination
// a single root.
type FatTree struct {
	name   string
	role   []string // per level
	levels int
	radix  int
	down   []int // m_i, index 1..n
	up     []int // w_{i+1}: parents of a level-i switch, index 1..n (0 on top)
	span   []int // D_i: nodes under a level-i switch, index 0..n
	repl   []int // R_i: replicas of a subtree at level i, index 1..n
	count  []int // switches on level i, index 1..n
	first  []int // index of the first level-i switch, index 1..n+1
}

type treeDims struct {
	nodes, switches int
	down, up        []int
}

// treeShape returns the arities of a fattree or rlft; nodes < 0 if the tree
// exceeds the size limits.
func treeShape(kind string, radix, levels int) treeDims {
	k := radix / 2
	t := treeDims{down: make([]int, levels+1), up: make([]int, levels+1)}
	for i := 1; i <= levels; i++ {
		t.down[i], t.up[i] = k, k
	}
	t.up[levels] = 0
	if kind == KindRLFT {
		t.down[levels] = radix
	}
	t.nodes = 1
	for i := 1; i <= levels; i++ {
		t.nodes = mulCap(t.nodes, t.down[i])
	}
	repl := 1
	for i := 1; i <= levels; i++ {
		t.switches += mulCap(t.nodes/mulCapDiv(t.down, i), repl)
		repl = mulCap(repl, t.up[i])
	}
	if t.nodes > MaxNodes || t.switches > MaxSwitches {
		t.nodes = -1
	}
	return t
}

// mulCapDiv is m_1·…·m_i (capped).
func mulCapDiv(down []int, i int) int {
	p := 1
	for j := 1; j <= i; j++ {
		p = mulCap(p, down[j])
	}
	return p
}

func newFatTree(c Config) *FatTree {
	sh := treeShape(c.Kind, c.Radix, c.Levels)
	n := c.Levels
	t := &FatTree{
		name:   fmt.Sprintf("%s-%d", c.Kind, sh.nodes),
		levels: n,
		radix:  c.Radix,
		down:   sh.down,
		up:     sh.up,
		span:   make([]int, n+1),
		repl:   make([]int, n+1),
		count:  make([]int, n+1),
		first:  make([]int, n+2),
		role:   make([]string, n+1),
	}
	t.span[0] = 1
	for i := 1; i <= n; i++ {
		t.span[i] = t.span[i-1] * t.down[i]
	}
	t.repl[1] = 1
	for i := 2; i <= n; i++ {
		t.repl[i] = t.repl[i-1] * t.up[i-1]
	}
	t.first[1] = 0
	for i := 1; i <= n; i++ {
		t.count[i] = sh.nodes / t.span[i] * t.repl[i]
		t.first[i+1] = t.first[i] + t.count[i]
		switch {
		case i == n && n > 1:
			t.role[i] = "top"
		case i == 1:
			t.role[i] = "leaf"
		default:
			t.role[i] = "middle"
		}
	}
	return t
}

// Name implements Topology.
func (t *FatTree) Name() string { return t.name }

// Nodes implements Topology.
func (t *FatTree) Nodes() int { return t.span[t.levels] }

// Switches implements Topology.
func (t *FatTree) Switches() int { return t.first[t.levels+1] }

// Levels is the number of switch levels.
func (t *FatTree) Levels() int { return t.levels }

// Radix implements Topology: 2k for every switch.
func (t *FatTree) Radix(int) int { return t.radix }

// level returns the level of switch s and its (a, b) label.
func (t *FatTree) level(s int) (i, a, b int) {
	i = 1
	for s >= t.first[i+1] {
		i++
	}
	j := s - t.first[i]
	return i, j / t.repl[i], j % t.repl[i]
}

// Groups implements Grouped: a fat tree's groups are its pods, the
// subtrees rooted at the level below the top (every leaf and middle
// switch of a pod, and the nodes under them, talk to the rest only through
// the top), so that a parallel run cuts only the top's links
// (sim/network/parallel.go). A tree of one level is one group.
func (t *FatTree) Groups() int {
	if t.levels < 2 {
		return 1
	}
	return t.span[t.levels] / t.span[t.levels-1]
}

// SwitchGroup implements Grouped: the pod of a switch below the top; the
// top switches, which join every pod, are dealt among the pods in turn.
func (t *FatTree) SwitchGroup(s int) int {
	if t.levels < 2 {
		return 0
	}
	i, a, b := t.level(s)
	if i == t.levels {
		return (a*t.repl[i] + b) % t.Groups()
	}
	return a * t.span[i] / t.span[t.levels-1]
}

// Level is the level of switch s: 1 for leaves, Levels() for the top.
func (t *FatTree) Level(s int) int {
	i, _, _ := t.level(s)
	return i
}

// SwitchRole implements Topology: "leaf", "middle" or "top".
func (t *FatTree) SwitchRole(s int) string {
	i, _, _ := t.level(s)
	return t.role[i]
}

// Attach implements Topology.
func (t *FatTree) Attach(node int) (sw, port int) {
	return node / t.down[1], node % t.down[1]
}

// PortPeer implements Topology.
func (t *FatTree) PortPeer(s, p int) (End, bool) {
	i, a, b := t.level(s)
	if p < t.down[i] {
		if i == 1 {
			return End{Kind: NodeEnd, ID: int32(a*t.down[1] + p)}, true
		}
		// child (i−1, a·m_i + p, b / w_i); its up port to us is m_{i−1} + b mod w_i
		w := t.up[i-1]
		child := t.first[i-1] + (a*t.down[i]+p)*t.repl[i-1] + b/w
		return End{Kind: SwitchEnd, ID: int32(child), Port: int32(t.down[i-1] + b%w)}, true
	}
	q := p - t.down[i]
	if q >= t.up[i] {
		return End{}, false
	}
	pa, pb := a/t.down[i+1], b*t.up[i]+q
	parent := t.first[i+1] + pa*t.repl[i+1] + pb
	return End{Kind: SwitchEnd, ID: int32(parent), Port: int32(a % t.down[i+1])}, true
}

// Links implements Topology: the node cables, then the up cables of each
// level from the leaves to the top, in switch and port order.
func (t *FatTree) Links() []Link {
	n := t.Nodes()
	total := n
	for i := 1; i < t.levels; i++ {
		total += t.count[i] * t.up[i]
	}
	links := make([]Link, 0, total)
	for node := range n {
		sw, p := t.Attach(node)
		links = append(links, Link{
			A:     End{Kind: NodeEnd, ID: int32(node)},
			B:     End{Kind: SwitchEnd, ID: int32(sw), Port: int32(p)},
			Class: Injection,
		})
	}
	for s := range t.first[t.levels] {
		i, _, _ := t.level(s)
		for q := range t.up[i] {
			p := t.down[i] + q
			peer, _ := t.PortPeer(s, p)
			links = append(links, Link{
				A:     End{Kind: SwitchEnd, ID: int32(s), Port: int32(p)},
				B:     peer,
				Class: Local,
			})
		}
	}
	return links
}

// Route implements Topology (D-mod-k, see the type's comment).
func (t *FatTree) Route(s, dst int) int {
	i, a, _ := t.level(s)
	if dst/t.span[i] == a {
		return dst / t.span[i-1] % t.down[i]
	}
	return t.down[i] + dst/t.repl[i]%t.up[i]
}

// Distance implements Topology: 2L − i links from a level-i switch whose
// lowest ancestor above dst is on level L (i links when it is above dst).
func (t *FatTree) Distance(s, dst int) int {
	i, a, _ := t.level(s)
	lo := a * t.span[i] // first node under s
	for l := i; l <= t.levels; l++ {
		if dst/t.span[l] == lo/t.span[l] {
			return 2*l - i
		}
	}
	return 2*t.levels - i // unreachable: the top spans every node
}
