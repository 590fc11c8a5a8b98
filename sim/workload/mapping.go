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
func LinearMapping(ranks, nodes int) ([]int, error) {
	if ranks > nodes {
		return nil, fmt.Errorf("workload.ranks: %d ranks do not fit on %d nodes (one rank per node)", ranks, nodes)
	}
	m := make([]int, ranks)
	for i := range m {
		m[i] = i
	}
	return m, nil
}

// RandomMapping places the ranks on distinct nodes drawn by a seeded
// random permutation (math/rand/v2 PCG).
func RandomMapping(ranks, nodes int, seed uint64) ([]int, error) {
	if ranks > nodes {
		return nil, fmt.Errorf("workload.ranks: %d ranks do not fit on %d nodes (one rank per node)", ranks, nodes)
	}
	rng := rand.New(rand.NewPCG(seed, mappingStream))
	perm := rng.Perm(nodes)
	return perm[:ranks], nil
}

// ReadMappingFile reads a mapping file (see ReadMapping).
func ReadMappingFile(path string, ranks, nodes int) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workload.mapping_file: %w", err)
	}
	defer f.Close()
	return ReadMapping(f, path, ranks, nodes)
}

// ReadMapping reads one node number per line for ranks 0, 1, …; blank lines
// and text after '#' are ignored. Every rank needs a distinct node in
// [0, nodes). Errors read "NAME:LINE: …".
func ReadMapping(r io.Reader, name string, ranks, nodes int) ([]int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	used := make(map[int]int, ranks)
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
		if prev, dup := used[n]; dup {
			return nil, fmt.Errorf("%s:%d: node %d already holds rank %d (one rank per node)", name, line, n, prev)
		}
		used[n] = len(m)
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
