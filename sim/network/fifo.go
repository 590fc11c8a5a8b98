package network

// fifo is a growable ring of packet indices; it allocates only while it
// grows to its peak size and not at all until first used.
type fifo struct {
	buf  []int32
	head int32
	n    int32
}

func (f *fifo) push(v int32) {
	if int(f.n) == len(f.buf) {
		f.grow()
	}
	f.buf[(int(f.head)+int(f.n))&(len(f.buf)-1)] = v
	f.n++
}

func (f *fifo) grow() {
	size := 2 * len(f.buf)
	if size == 0 {
		size = 4
	}
	nb := make([]int32, size)
	for i := 0; i < int(f.n); i++ {
		nb[i] = f.buf[(int(f.head)+i)&(len(f.buf)-1)]
	}
	f.buf, f.head = nb, 0
}

func (f *fifo) front() int32 { return f.buf[f.head] }

func (f *fifo) pop() int32 {
	v := f.buf[f.head]
	f.head = int32((int(f.head) + 1) & (len(f.buf) - 1))
	f.n--
	return v
}
