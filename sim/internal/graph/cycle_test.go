package graph

import "testing"

// TestHasCycle: one row per shape, by hand.
func TestHasCycle(t *testing.T) {
	for _, c := range []struct {
		name  string
		edges map[int]map[int]bool
		want  bool
	}{
		{"empty", map[int]map[int]bool{}, false},
		{"chain", map[int]map[int]bool{1: {2: true}, 2: {3: true}}, false},
		{"diamond", map[int]map[int]bool{1: {2: true, 3: true}, 2: {4: true}, 3: {4: true}}, false},
		{"self-loop", map[int]map[int]bool{1: {1: true}}, true},
		{"ring", map[int]map[int]bool{1: {2: true}, 2: {3: true}, 3: {1: true}}, true},
		{"ring-behind-chain", map[int]map[int]bool{0: {1: true}, 1: {2: true}, 2: {3: true}, 3: {1: true}}, true},
	} {
		if got := HasCycle(c.edges); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
