package ti

import (
	"github.com/lpictl/lpictl/sim/workload/sched"
)

// collective converts a collective action: parse its arguments, check it
// against the other ranks' view, expand it into point-to-point steps and
// add the reduction's computation (comp_size flops) after it.
func (rc *rankConv) collective(v verb, args []float64) error {
	n := rc.c.n
	g := collSig{verb: v, root: -1, bytes: -1}
	var comp float64 // flops computed after the collective
	var expand func(tag int32)

	switch v {
	case vBarrier:
		if err := rc.nargs(args, 0, 0, ""); err != nil {
			return err
		}
		expand = func(tag int32) { rc.recursiveDoubling(tag, 0) }

	case vBcast: // count [root [datatype]]
		if err := rc.nargs(args, 1, 3, "count [root [datatype]]"); err != nil {
			return err
		}
		b, root, err := rc.rootedBytes(args, 0, 1, 2)
		if err != nil {
			return err
		}
		g.root, g.bytes = root, b
		expand = func(tag int32) { rc.binomialBcast(tag, root, b) }

	case vReduce: // count comp_size [root [datatype]]
		if err := rc.nargs(args, 2, 4, "count comp_size [root [datatype]]"); err != nil {
			return err
		}
		b, root, err := rc.rootedBytes(args, 0, 2, 3)
		if err != nil {
			return err
		}
		g.root, g.bytes, comp = root, b, args[1]
		expand = func(tag int32) { rc.binomialReduce(tag, root, b) }

	case vAllreduce, vScan, vExscan: // count comp_size [datatype]
		if err := rc.nargs(args, 2, 3, "count comp_size [datatype]"); err != nil {
			return err
		}
		b, err := rc.bytes(args, 0, 2)
		if err != nil {
			return err
		}
		g.bytes, comp = b, args[1]
		if v == vAllreduce {
			expand = func(tag int32) { rc.recursiveDoubling(tag, b) }
		} else {
			expand = func(tag int32) { rc.chain(tag, b) }
		}

	case vAlltoall: // sendcount recvcount [sendtype [recvtype]]
		if err := rc.nargs(args, 2, 4, "sendcount recvcount [sendtype [recvtype]]"); err != nil {
			return err
		}
		sb, err := rc.bytes(args, 0, 2)
		if err != nil {
			return err
		}
		rb, err := rc.bytes(args, 1, 3)
		if err != nil {
			return err
		}
		expand = func(tag int32) {
			rc.pairwise(tag, func(int) int64 { return sb }, func(int) int64 { return rb })
		}

	case vAlltoallv: // send_sum sendcounts[n] recv_sum recvcounts[n] [sendtype [recvtype]]
		if err := rc.nargs(args, 2*n+2, 2*n+4, "send_sum sendcounts… recv_sum recvcounts… [sendtype [recvtype]]"); err != nil {
			return err
		}
		ssz, err := rc.dtype(args, 2*n+2)
		if err != nil {
			return err
		}
		rsz, err := rc.dtype(args, 2*n+3)
		if err != nil {
			return err
		}
		sc, err := rc.counts(args, 1, n)
		if err != nil {
			return err
		}
		rcs, err := rc.counts(args, n+2, n)
		if err != nil {
			return err
		}
		expand = func(tag int32) {
			rc.pairwise(tag, func(j int) int64 { return sc[j] * ssz }, func(j int) int64 { return rcs[j] * rsz })
		}

	case vGather, vScatter: // sendcount recvcount [root [sendtype [recvtype]]]
		if err := rc.nargs(args, 2, 5, "sendcount recvcount [root [sendtype [recvtype]]]"); err != nil {
			return err
		}
		root, err := rc.root(args, 2)
		if err != nil {
			return err
		}
		sb, err := rc.bytes(args, 0, 3)
		if err != nil {
			return err
		}
		rb, err := rc.bytes(args, 1, 4)
		if err != nil {
			return err
		}
		g.root = root
		if v == vGather {
			expand = func(tag int32) { rc.linearGather(tag, root, sb, func(int) int64 { return rb }) }
		} else {
			expand = func(tag int32) { rc.linearScatter(tag, root, func(int) int64 { return sb }, rb) }
		}

	case vAllgather: // sendcount recvcount [sendtype [recvtype]]
		if err := rc.nargs(args, 2, 4, "sendcount recvcount [sendtype [recvtype]]"); err != nil {
			return err
		}
		if _, err := rc.bytes(args, 0, 2); err != nil {
			return err
		}
		rb, err := rc.bytes(args, 1, 3)
		if err != nil {
			return err
		}
		expand = func(tag int32) { rc.ring(tag, func(int) int64 { return rb }) }

	case vGatherv: // sendcount recvcounts[n] [root [sendtype [recvtype]]]
		if err := rc.nargs(args, n+1, n+4, "sendcount recvcounts… [root [sendtype [recvtype]]]"); err != nil {
			return err
		}
		root, err := rc.root(args, n+1)
		if err != nil {
			return err
		}
		sb, err := rc.bytes(args, 0, n+2)
		if err != nil {
			return err
		}
		rcs, err := rc.counts(args, 1, n)
		if err != nil {
			return err
		}
		rsz, err := rc.dtype(args, n+3)
		if err != nil {
			return err
		}
		g.root = root
		expand = func(tag int32) { rc.linearGather(tag, root, sb, func(j int) int64 { return rcs[j] * rsz }) }

	case vAllgatherv:
		// sendcount recvcounts[n] [sendtype [recvtype]], or, as SMPI's replay
		// also reads it, with displacements: … sendtype recvtype disps[n] or
		// … disps[n] (default datatypes). Displacements do not change sizes.
		ti := n + 1 // index of sendtype
		switch {
		case len(args) > 2*n+1:
			if err := rc.nargs(args, 2*n+3, 2*n+3, "sendcount recvcounts… sendtype recvtype disps…"); err != nil {
				return err
			}
		case len(args) > n+3:
			if err := rc.nargs(args, 2*n+1, 2*n+1, "sendcount recvcounts… disps…"); err != nil {
				return err
			}
			ti = len(args) // default datatypes
		default:
			if err := rc.nargs(args, n+1, n+3, "sendcount recvcounts… [sendtype [recvtype]]"); err != nil {
				return err
			}
		}
		if _, err := rc.bytes(args, 0, ti); err != nil {
			return err
		}
		rcs, err := rc.counts(args, 1, n)
		if err != nil {
			return err
		}
		rsz, err := rc.dtype(args, ti+1)
		if err != nil {
			return err
		}
		expand = func(tag int32) { rc.ring(tag, func(j int) int64 { return rcs[j] * rsz }) }

	case vScatterv: // sendcounts[n] recvcount [root [sendtype [recvtype]]]
		if err := rc.nargs(args, n+1, n+4, "sendcounts… recvcount [root [sendtype [recvtype]]]"); err != nil {
			return err
		}
		root, err := rc.root(args, n+1)
		if err != nil {
			return err
		}
		sc, err := rc.counts(args, 0, n)
		if err != nil {
			return err
		}
		ssz, err := rc.dtype(args, n+2)
		if err != nil {
			return err
		}
		rb, err := rc.bytes(args, n, n+3)
		if err != nil {
			return err
		}
		g.root = root
		expand = func(tag int32) { rc.linearScatter(tag, root, func(j int) int64 { return sc[j] * ssz }, rb) }

	case vReducescatter: // recvcounts[n] comp_size [datatype]
		if err := rc.nargs(args, n+1, n+2, "recvcounts… comp_size [datatype]"); err != nil {
			return err
		}
		rcs, err := rc.counts(args, 0, n)
		if err != nil {
			return err
		}
		sz, err := rc.dtype(args, n+1)
		if err != nil {
			return err
		}
		var total int64
		for _, x := range rcs {
			if total += x; total > maxCount {
				return rc.errorf("reducescatter: counts sum to more than 2^53")
			}
		}
		comp = args[n]
		expand = func(tag int32) {
			rc.binomialReduce(tag, 0, total*sz)
			rc.linearScatter(tag, 0, func(j int) int64 { return rcs[j] * sz }, rcs[rc.r]*sz)
		}

	default:
		return rc.errorf("unsupported action %q", v)
	}
	if comp < 0 {
		return rc.errorf("%s: comp_size %v: negative", v, comp)
	}

	k := rc.c.count[rc.r]
	if err := rc.agree(k, g); err != nil {
		return err
	}
	rc.c.count[rc.r]++
	if n > 1 {
		expand(int32(CollTagBase + k%CollTagBase))
	}
	return rc.calc(comp/rc.c.opts.FlopRate, "comp_size")
}

// agree checks collective k of this rank against the first rank's view.
func (rc *rankConv) agree(k int, g collSig) error {
	c := rc.c
	if k == len(c.colls) {
		g.rank, g.line, g.file = int32(rc.r), rc.line, rc.file
		c.colls = append(c.colls, g)
		return nil
	}
	f := &c.colls[k]
	switch {
	case f.verb != g.verb:
		return rc.errorf("rank %d: collective #%d is %s, rank %d has %s at %s:%d", rc.r, k+1, g.verb, f.rank, f.verb, f.file, f.line)
	case f.root != g.root:
		return rc.errorf("rank %d: %s (collective #%d) has root %d, rank %d has root %d at %s:%d", rc.r, g.verb, k+1, g.root, f.rank, f.root, f.file, f.line)
	case f.bytes != g.bytes:
		return rc.errorf("rank %d: %s (collective #%d) of %d bytes, rank %d has %d bytes at %s:%d", rc.r, g.verb, k+1, g.bytes, f.rank, f.bytes, f.file, f.line)
	}
	return nil
}

// bytes returns count args[ci] × the size of datatype args[di] (default when absent).
func (rc *rankConv) bytes(args []float64, ci, di int) (int64, error) {
	cnt, err := rc.count(args, ci)
	if err != nil {
		return 0, err
	}
	sz, err := rc.dtype(args, di)
	if err != nil {
		return 0, err
	}
	return cnt * sz, nil
}

// rootedBytes is bytes and the root at args[ri] (0 when absent).
func (rc *rankConv) rootedBytes(args []float64, ci, ri, di int) (int64, int32, error) {
	root, err := rc.root(args, ri)
	if err != nil {
		return 0, 0, err
	}
	b, err := rc.bytes(args, ci, di)
	return b, root, err
}

// root returns the root at args[i], 0 when absent (as SMPI's parse_root).
func (rc *rankConv) root(args []float64, i int) (int32, error) {
	if i >= len(args) {
		return 0, nil
	}
	r, err := rc.integer(args, i, "root", 0, int64(rc.c.n-1))
	return int32(r), err
}

// counts returns the n counts at args[from:].
func (rc *rankConv) counts(args []float64, from, n int) ([]int64, error) {
	out := make([]int64, n)
	for j := range out {
		x, err := rc.count(args, from+j)
		if err != nil {
			return nil, err
		}
		out[j] = x
	}
	return out, nil
}

// send and recv are a collective's steps (Op.Coll).
func send(peer int, tag int32, b int64) sched.Op {
	return sched.Op{Kind: sched.Send, Peer: int32(peer), Tag: tag, Bytes: b, Coll: true}
}

func recv(peer int, tag int32, b int64) sched.Op {
	return sched.Op{Kind: sched.Recv, Peer: int32(peer), Tag: tag, Bytes: b, Coll: true}
}

// recursiveDoubling is barrier (b = 0) and allreduce: with p the largest
// power of two ≤ n and rem = n − p, rank p+i (i < rem) first sends to rank i
// (fold-in) and finally receives the result from it; ranks 0…p−1 exchange
// b bytes with rank r XOR 2^k for k = 0, 1, …, log2(p)−1, ranks i < rem
// receiving from p+i before and sending to it after.
func (rc *rankConv) recursiveDoubling(tag int32, b int64) {
	r, n := rc.r, rc.c.n
	p := 1
	for p*2 <= n {
		p *= 2
	}
	rem := n - p
	if r >= p {
		rc.step(send(r-p, tag, b))
		rc.step(recv(r-p, tag, b))
		return
	}
	if r < rem {
		rc.step(recv(r+p, tag, b))
	}
	for mask := 1; mask < p; mask <<= 1 {
		rc.step(send(r^mask, tag, b), recv(r^mask, tag, b))
	}
	if r < rem {
		rc.step(send(r+p, tag, b))
	}
}

// binomialBcast: with v = (r − root) mod n, rank v receives from v − 2^k
// where 2^k is v's lowest set bit, then sends to v + 2^j for each j < k
// (all j for the root) with v + 2^j < n, largest first, one after the other.
func (rc *rankConv) binomialBcast(tag int32, root int32, b int64) {
	n := rc.c.n
	v := (rc.r - int(root) + n) % n
	abs := func(u int) int { return (u + int(root)) % n }
	mask := 1
	for mask < n {
		if v&mask != 0 {
			rc.step(recv(abs(v-mask), tag, b))
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if v+mask < n {
			rc.step(send(abs(v+mask), tag, b))
		}
	}
}

// binomialReduce is binomialBcast reversed: rank v receives from v + 2^j
// (< n) for j = 0, 1, … below its lowest set bit 2^k, one after the other,
// then sends to v − 2^k (the root sends nothing).
func (rc *rankConv) binomialReduce(tag int32, root int32, b int64) {
	n := rc.c.n
	v := (rc.r - int(root) + n) % n
	abs := func(u int) int { return (u + int(root)) % n }
	for mask := 1; mask < n; mask <<= 1 {
		if v&mask != 0 {
			rc.step(send(abs(v-mask), tag, b))
			return
		}
		if v+mask < n {
			rc.step(recv(abs(v+mask), tag, b))
		}
	}
}

// pairwise is alltoall(v): in step k = 1…n−1 rank r sends sb(dst) bytes to
// dst = r+k and receives rb(src) from src = r−k (mod n), both at once.
func (rc *rankConv) pairwise(tag int32, sb, rb func(peer int) int64) {
	r, n := rc.r, rc.c.n
	for k := 1; k < n; k++ {
		dst, src := (r+k)%n, (r-k+n)%n
		rc.step(send(dst, tag, sb(dst)), recv(src, tag, rb(src)))
	}
}

// linearGather: every rank but the root sends sb bytes to the root; the
// root receives rb(j) bytes from every other rank j, all at once.
func (rc *rankConv) linearGather(tag int32, root int32, sb int64, rb func(j int) int64) {
	r, n := rc.r, rc.c.n
	if r != int(root) {
		rc.step(send(int(root), tag, sb))
		return
	}
	ops := make([]sched.Op, 0, n-1)
	for j := range n {
		if j != r {
			ops = append(ops, recv(j, tag, rb(j)))
		}
	}
	rc.step(ops...)
}

// linearScatter: the root sends sb(j) bytes to every other rank j, all at
// once; every other rank receives rb bytes from the root.
func (rc *rankConv) linearScatter(tag int32, root int32, sb func(j int) int64, rb int64) {
	r, n := rc.r, rc.c.n
	if r != int(root) {
		rc.step(recv(int(root), tag, rb))
		return
	}
	ops := make([]sched.Op, 0, n-1)
	for j := range n {
		if j != r {
			ops = append(ops, send(j, tag, sb(j)))
		}
	}
	rc.step(ops...)
}

// ring is allgather(v): in step k = 0…n−2 rank r sends block (r−k) mod n
// to r+1 and receives block (r−k−1) mod n from r−1, both at once; block j
// has size(j) bytes.
func (rc *rankConv) ring(tag int32, size func(j int) int64) {
	r, n := rc.r, rc.c.n
	for k := 0; k < n-1; k++ {
		sblk, rblk := ((r-k)%n+n)%n, ((r-k-1)%n+n)%n
		rc.step(send((r+1)%n, tag, size(sblk)), recv((r-1+n)%n, tag, size(rblk)))
	}
}

// chain is scan and exscan: rank r receives b bytes from r−1 (r > 0), then
// sends b bytes to r+1 (r < n−1).
func (rc *rankConv) chain(tag int32, b int64) {
	r, n := rc.r, rc.c.n
	if r > 0 {
		rc.step(recv(r-1, tag, b))
	}
	if r < n-1 {
		rc.step(send(r+1, tag, b))
	}
}
