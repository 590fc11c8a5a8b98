package workload

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// Mapping kinds (workload.mapping).
const (
	MappingLinear = "linear" // rank r on node r
	MappingRandom = "random" // a seeded random permutation of the nodes
	MappingFile   = "file"   // workload.mapping_file: one node per line
)

// mappingStream is the PCG stream of the random mapping.
const mappingStream = 0x6d6170 // "map"

// LinearMapping places rank r on node r.
func LinearMapping(ranks, nodes int) ([]int, error) { return LinearMappingK(ranks, nodes, 1) }

// fits checks that ranks fit on nodes with k per node.
func fits(ranks, nodes, k int) error {
	if ranks > nodes*k {
		if k == 1 {
			return fmt.Errorf("workload.ranks: %d ranks do not fit on %d nodes (one rank per node)", ranks, nodes)
		}
		return fmt.Errorf("workload.ranks: %d ranks do not fit on %d nodes (%d per node)", ranks, nodes, k)
	}
	return nil
}

// LinearMappingK places k consecutive ranks on each node: rank r on node
// r/k.
func LinearMappingK(ranks, nodes, k int) ([]int, error) {
	if err := fits(ranks, nodes, k); err != nil {
		return nil, err
	}
	m := make([]int, ranks)
	for i := range m {
		m[i] = i / k
	}
	return m, nil
}

// RandomMapping places the ranks on distinct nodes drawn by a seeded
// random permutation (math/rand/v2 PCG).
func RandomMapping(ranks, nodes int, seed uint64) ([]int, error) {
	return RandomMappingK(ranks, nodes, 1, seed)
}

// RandomMappingK places k consecutive ranks on each node of a seeded random
// permutation of the nodes: rank r on perm[r/k] (k = 1: RandomMapping).
func RandomMappingK(ranks, nodes, k int, seed uint64) ([]int, error) {
	if err := fits(ranks, nodes, k); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, mappingStream))
	perm := rng.Perm(nodes)
	m := make([]int, ranks)
	for i := range m {
		m[i] = perm[i/k]
	}
	return m, nil
}

// ReadMappingFile reads a mapping file (see ReadMapping).
func ReadMappingFile(path string, ranks, nodes int) ([]int, error) {
	return ReadMappingFileK(path, ranks, nodes, 1)
}

// ReadMappingFileK reads a mapping file allowing k ranks per node (see
// ReadMappingK).
func ReadMappingFileK(path string, ranks, nodes, k int) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workload.mapping_file: %w", err)
	}
	defer f.Close()
	return ReadMappingK(f, path, ranks, nodes, k)
}

// ReadMapping reads one node number per line for ranks 0, 1, …; blank lines
// and text after '#' are ignored. Every rank needs a distinct node in
// [0, nodes). Errors read "NAME:LINE: …".
func ReadMapping(r io.Reader, name string, ranks, nodes int) ([]int, error) {
	return ReadMappingK(r, name, ranks, nodes, 1)
}

// ReadMappingK is ReadMapping with up to k ranks per node.
func ReadMappingK(r io.Reader, name string, ranks, nodes, k int) ([]int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	used := make(map[int][]int, ranks) // node → its ranks
	var m []int
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: malformed node number %q", name, line, s)
		}
		if n < 0 || n >= nodes {
			return nil, fmt.Errorf("%s:%d: node %d out of range [0, %d)", name, line, n, nodes)
		}
		if len(m) >= ranks {
			return nil, fmt.Errorf("%s:%d: more lines than the workload's %d ranks", name, line, ranks)
		}
		if prev := used[n]; len(prev) >= k {
			if k == 1 {
				return nil, fmt.Errorf("%s:%d: node %d already holds rank %d (one rank per node)", name, line, n, prev[0])
			}
			return nil, fmt.Errorf("%s:%d: node %d already holds ranks %v (%d per node: workload.ranks_per_node)", name, line, n, prev, k)
		}
		used[n] = append(used[n], len(m))
		m = append(m, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(m) != ranks {
		return nil, fmt.Errorf("%s:%d: %d nodes for %d ranks (want one line per rank)", name, line+1, len(m), ranks)
	}
	return m, nil
}
