package workload

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// Algorithm is how a collective is expanded into point-to-point messages.
type Algorithm uint8

// Collective algorithms (docs/workloads.md gives rounds and messages).
const (
	AlgNone              Algorithm = iota // one-task communicator: nothing to send
	AlgBinomialBcast                      // MPICH binomial tree, largest subtree first
	AlgBinomialReduce                     // MPICH binomial tree towards the root
	AlgRecursiveDoubling                  // allreduce, MPICH (non-power-of-two fold)
	AlgRing                               // allreduce: reduce-scatter ring + allgather ring
	AlgRabenseifner                       // allreduce: recursive halving + doubling (MPICH long)
	AlgLinearGather                       // every task sends to the root
	AlgLinearScatter                      // the root sends to every task
	AlgRingAllgather                      // P−1 ring steps
	AlgDissemination                      // barrier, ⌈log2 P⌉ rounds
	AlgBruck                              // alltoall, ⌈log2 P⌉ rounds
	AlgPairwise                           // alltoall, P−1 exchange steps
	numAlgorithms
)

var algNames = [numAlgorithms]string{"none", "binomial", "binomial", "recursive-doubling", "ring",
	"rabenseifner", "linear", "linear", "ring", "dissemination", "bruck", "pairwise"}

func (a Algorithm) String() string {
	if a < numAlgorithms {
		return algNames[a]
	}
	return fmt.Sprintf("alg%d", uint8(a))
}

// Collectives chooses the algorithms that depend on the message size
// (YAML key workload.collectives).
type Collectives struct {
	// AllreduceThreshold: allreduce of fewer bytes uses recursive doubling,
	// larger ones AllreduceLarge (which also needs bytes ≥ tasks). Default
	// 10000 B, Open MPI's tuned decision (intermediate_message).
	AllreduceThreshold Bytes `yaml:"allreduce_threshold,omitempty" json:"allreduce_threshold,omitempty"`
	// AllreduceLarge is "ring" (default, Open MPI) or "rabenseifner" (MPICH's
	// long-message algorithm; far fewer messages on large communicators).
	AllreduceLarge string `yaml:"allreduce_large,omitempty" json:"allreduce_large,omitempty"`
	// AlltoallThreshold: alltoall with at most this many bytes per
	// destination on ≥ 8 tasks uses Bruck, otherwise pairwise exchange.
	// Default 256 B, MPICH's MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE.
	AlltoallThreshold Bytes `yaml:"alltoall_threshold,omitempty" json:"alltoall_threshold,omitempty"`
}

// Defaults of Collectives.
const (
	DefaultAllreduceThreshold = 10000
	DefaultAlltoallThreshold  = 256
)

func (c Collectives) normalized() Collectives {
	if c.AllreduceThreshold == 0 {
		c.AllreduceThreshold = DefaultAllreduceThreshold
	}
	if c.AlltoallThreshold == 0 {
		c.AlltoallThreshold = DefaultAlltoallThreshold
	}
	if c.AllreduceLarge == "" {
		c.AllreduceLarge = "ring"
	}
	return c
}

func (c Collectives) validate(prefix string) error {
	if c.AllreduceThreshold < 0 {
		return fmt.Errorf("%s.collectives.allreduce_threshold: must be ≥ 0", prefix)
	}
	if c.AlltoallThreshold < 0 {
		return fmt.Errorf("%s.collectives.alltoall_threshold: must be ≥ 0", prefix)
	}
	switch strings.ToLower(c.AllreduceLarge) {
	case "", "ring", "rabenseifner":
	default:
		return fmt.Errorf("%s.collectives.allreduce_large: unknown algorithm %q (want ring or rabenseifner)", prefix, c.AllreduceLarge)
	}
	return nil
}

// plan is one collective's expansion: which member sends what to whom in
// each step. A member's step s issues its sends, then waits for its
// receives of step s; steps with neither pass at once.
type plan struct {
	alg       Algorithm
	p, root   int32
	k         int32 // ⌈log2 p⌉, or log2 pof2 for the recursive algorithms
	pof2, rem int32
	x         int64   // the common size
	sizes     []int64 // per member: gather/scatter/allgather block, alltoall send
	vectorial bool
}

func ceilLog2(p int32) int32 {
	if p <= 1 {
		return 0
	}
	return int32(bits.Len32(uint32(p - 1)))
}

// choose picks the algorithm for an operation (docs/model.md §5: "standard MPI
// algorithms"; docs/workloads.md).
func choose(op vef.Op, p int32, x int64, vectorial bool, c Collectives) Algorithm {
	if p <= 1 {
		return AlgNone
	}
	switch op {
	case vef.Bcast:
		return AlgBinomialBcast
	case vef.Reduce:
		return AlgBinomialReduce
	case vef.Allreduce:
		if x < int64(c.AllreduceThreshold) || x < int64(p) {
			return AlgRecursiveDoubling
		}
		if strings.EqualFold(c.AllreduceLarge, "rabenseifner") {
			return AlgRabenseifner
		}
		return AlgRing
	case vef.Gather:
		return AlgLinearGather
	case vef.Scatter:
		return AlgLinearScatter
	case vef.Allgather:
		return AlgRingAllgather
	case vef.Barrier:
		return AlgDissemination
	case vef.Alltoall:
		if !vectorial && x <= int64(c.AlltoallThreshold) && p >= 8 {
			return AlgBruck
		}
		return AlgPairwise
	}
	return AlgNone
}

func (pl *plan) init() {
	pl.k = ceilLog2(pl.p)
	if pl.alg == AlgRecursiveDoubling || pl.alg == AlgRabenseifner {
		pl.pof2 = int32(1) << (bits.Len32(uint32(pl.p)) - 1)
		pl.rem = pl.p - pl.pof2
		pl.k = int32(bits.Len32(uint32(pl.pof2)) - 1)
	}
}

func (pl *plan) rel(m int32) int32 { return (m - pl.root + pl.p) % pl.p }
func (pl *plan) abs(r int32) int32 { return (r + pl.root) % pl.p }

// newrank/actual: MPICH's folding of a non-power-of-two communicator.
func (pl *plan) newrank(m int32) int32 {
	if m < 2*pl.rem {
		if m%2 == 0 {
			return -1
		}
		return m / 2
	}
	return m - pl.rem
}

func (pl *plan) actual(nr int32) int32 {
	if nr < pl.rem {
		return nr*2 + 1
	}
	return nr + pl.rem
}

// steps is the number of steps of member m.
func (pl *plan) steps(m int32) int32 {
	switch pl.alg {
	case AlgNone:
		return 0
	case AlgBinomialBcast, AlgBinomialReduce, AlgDissemination, AlgBruck:
		return pl.k
	case AlgRecursiveDoubling, AlgRabenseifner:
		n := pl.k
		if pl.alg == AlgRabenseifner {
			n *= 2
		}
		if pl.rem > 0 {
			n += 2
		}
		return n
	case AlgRing:
		return 2 * (pl.p - 1)
	case AlgLinearGather, AlgLinearScatter:
		return 1
	case AlgRingAllgather, AlgPairwise:
		return pl.p - 1
	}
	return 0
}

// foldStep maps a recursive algorithm's step to (phase, inner step):
// phase 0 = pre-fold, 1 = main, 2 = post-fold.
func (pl *plan) foldStep(s int32) (int32, int32) {
	if pl.rem == 0 {
		return 1, s
	}
	last := pl.steps(0) - 1
	switch s {
	case 0:
		return 0, 0
	case last:
		return 2, 0
	}
	return 1, s - 1
}

// blocks is the size of Rabenseifner's blocks [a, b): MPICH
// (MPIR_Allreduce_intra_reduce_scatter_allgather) cuts the X bytes into
// pof2 blocks of ⌊X/pof2⌋ and gives the X mod pof2 bytes left over to the
// first blocks, one each; a message carries a run of whole blocks, so the
// sizes add up to X exactly, never rounded up.
func (pl *plan) blocks(a, b int32) int64 {
	n := int64(pl.pof2)
	q, r := pl.x/n, pl.x%n
	return int64(b-a)*q + max(0, min(int64(b), r)-int64(a))
}

// rabenseifnerBytes is what newrank nr sends in main step j (MPICH's
// index arithmetic, send_idx/recv_idx/last_idx). Reduce-scatter step j
// < k pairs nr with nr ^ 2^j and halves the range of blocks nr holds (all
// pof2 at first): the member whose bit j is 0 keeps the lower half and
// sends the upper, the other the reverse. Allgather step j ≥ k undoes
// reduce-scatter step jj = 2k−1−j: nr sends the range it kept there.
func (pl *plan) rabenseifnerBytes(nr, j int32) int64 {
	jj := j
	if j >= pl.k {
		jj = 2*pl.k - 1 - j
	}
	start := int32(0) // the range nr holds before reduce-scatter step jj
	for i := int32(0); i < jj; i++ {
		if nr>>i&1 == 1 {
			start += pl.pof2 >> (i + 1)
		}
	}
	half := pl.pof2 >> (jj + 1)
	lower := nr>>jj&1 == 0 // nr keeps the lower half
	if lower == (j < pl.k) {
		// reduce-scatter: the upper half goes; allgather: the kept lower half
		return pl.blocks(start+half, start+2*half)
	}
	return pl.blocks(start, start+half)
}

func (pl *plan) chunk(c int32) int64 {
	n := int64(pl.p)
	b := pl.x / n
	if int64(c) < pl.x%n {
		b++
	}
	return b
}

func (pl *plan) share(m, dst int32) int64 {
	if !pl.vectorial {
		return pl.sizes[m]
	}
	n := int64(pl.p)
	t := pl.sizes[m]
	b := t / n
	if int64((dst-m+pl.p)%pl.p) < t%n {
		b++
	}
	return b
}

// sendCount is how many messages member m sends in step s.
func (pl *plan) sendCount(m, s int32) int32 {
	switch pl.alg {
	case AlgLinearScatter:
		if m == pl.root {
			return pl.p - 1
		}
		return 0
	case AlgLinearGather:
		if m == pl.root {
			return 0
		}
		return 1
	}
	if _, ok := pl.send1(m, s); ok {
		return 1
	}
	return 0
}

// send returns the i-th message member m sends in step s.
func (pl *plan) send(m, s, i int32) (int32, int64) {
	switch pl.alg {
	case AlgLinearScatter:
		d := pl.abs(i + 1)
		return d, pl.sizes[d]
	case AlgLinearGather:
		return pl.root, pl.sizes[m]
	}
	d, _ := pl.send1(m, s)
	return d, pl.bytes(m, s, d)
}

// send1 gives the single destination of member m in step s, if any.
func (pl *plan) send1(m, s int32) (int32, bool) {
	switch pl.alg {
	case AlgBinomialBcast:
		r, mask := pl.rel(m), int32(1)<<(pl.k-1-s)
		if r%(2*mask) == 0 && r+mask < pl.p {
			return pl.abs(r + mask), true
		}
	case AlgBinomialReduce:
		r, mask := pl.rel(m), int32(1)<<s
		if r%(2*mask) == mask {
			return pl.abs(r - mask), true
		}
	case AlgRecursiveDoubling, AlgRabenseifner:
		phase, j := pl.foldStep(s)
		switch phase {
		case 0:
			if m < 2*pl.rem && m%2 == 0 {
				return m + 1, true
			}
		case 2:
			if m < 2*pl.rem && m%2 == 1 {
				return m - 1, true
			}
		default:
			nr := pl.newrank(m)
			if nr < 0 {
				return 0, false
			}
			mask := int32(1) << j
			if pl.alg == AlgRabenseifner && j >= pl.k {
				mask = pl.pof2 >> (j - pl.k + 1)
			}
			return pl.actual(nr ^ mask), true
		}
	case AlgRing, AlgRingAllgather:
		return (m + 1) % pl.p, true
	case AlgDissemination, AlgBruck:
		return (m + int32(1)<<s) % pl.p, true
	case AlgPairwise:
		return (m + s + 1) % pl.p, true
	}
	return 0, false
}

// bytes of the message member m sends to d in step s (single-send algorithms).
func (pl *plan) bytes(m, s, d int32) int64 {
	switch pl.alg {
	case AlgBinomialBcast, AlgBinomialReduce, AlgRecursiveDoubling:
		return pl.x
	case AlgRabenseifner:
		phase, j := pl.foldStep(s)
		if phase != 1 {
			return pl.x
		}
		return pl.rabenseifnerBytes(pl.newrank(m), j)
	case AlgRing:
		if s < pl.p-1 {
			return pl.chunk((m - s + pl.p) % pl.p)
		}
		s2 := s - (pl.p - 1)
		return pl.chunk(((m+1-s2)%pl.p + pl.p) % pl.p)
	case AlgRingAllgather:
		return pl.sizes[(m-s+pl.p)%pl.p]
	case AlgDissemination:
		return 0
	case AlgBruck:
		var n int64
		bit := int64(1) << s
		p := int64(pl.p)
		// blocks j in [0, p) with bit s set: full periods plus the tail.
		n = (p / (2 * bit)) * bit
		if r := p % (2 * bit); r > bit {
			n += r - bit
		}
		return pl.sizes[m] * n
	case AlgPairwise:
		return pl.share(m, d)
	}
	return 0
}

// recvs is how many messages member m waits for in step s.
func (pl *plan) recvs(m, s int32) int32 {
	switch pl.alg {
	case AlgNone:
		return 0
	case AlgBinomialBcast:
		r, mask := pl.rel(m), int32(1)<<(pl.k-1-s)
		if r%(2*mask) == mask {
			return 1
		}
	case AlgBinomialReduce:
		r, mask := pl.rel(m), int32(1)<<s
		if r%(2*mask) == 0 && r+mask < pl.p {
			return 1
		}
	case AlgRecursiveDoubling, AlgRabenseifner:
		phase, _ := pl.foldStep(s)
		switch phase {
		case 0:
			if m < 2*pl.rem && m%2 == 1 {
				return 1
			}
		case 2:
			if m < 2*pl.rem && m%2 == 0 {
				return 1
			}
		default:
			if pl.newrank(m) >= 0 {
				return 1
			}
		}
	case AlgLinearGather:
		if m == pl.root {
			return pl.p - 1
		}
	case AlgLinearScatter:
		if m != pl.root {
			return 1
		}
	case AlgRing, AlgRingAllgather, AlgDissemination, AlgBruck, AlgPairwise:
		return 1
	}
	return 0
}
