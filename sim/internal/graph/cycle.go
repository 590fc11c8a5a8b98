package graph

// HasCycle reports whether the directed graph edges (edges[u][v]: an
// edge u → v) has a cycle: a depth-first search that colours a node grey
// while it is on the path and black once done; an edge to a grey node
// closes a cycle. The answer does not depend on map order.
func HasCycle[N comparable](edges map[N]map[N]bool) bool {
	const (
		white = iota
		grey
		black
	)
	state := map[N]int{}
	var visit func(u N) bool
	visit = func(u N) bool {
		state[u] = grey
		for v := range edges[u] {
			if state[v] == grey || (state[v] == white && visit(v)) {
				return true
			}
		}
		state[u] = black
		return false
	}
	for u := range edges {
		if state[u] == white && visit(u) {
			return true
		}
	}
	return false
}
