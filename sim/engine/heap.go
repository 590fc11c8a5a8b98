package engine

// Heap is a typed 4-ary min-heap of events: no interface boxing, no
// allocation once its backing array has grown to the peak pending count.
type Heap struct {
	a []Event
}

// NewHeap returns an empty heap with room for capacity events.
func NewHeap(capacity int) *Heap { return &Heap{a: make([]Event, 0, capacity)} }

// Len returns the number of events.
func (h *Heap) Len() int { return len(h.a) }

// Push adds an event.
func (h *Heap) Push(e Event) {
	h.a = append(h.a, e)
	a := h.a
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&a[p]) {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = e
}

// Peek returns the first event without removing it (nil if none).
func (h *Heap) Peek() *Event {
	if len(h.a) == 0 {
		return nil
	}
	return &h.a[0]
}

func (h *Heap) peek() *Event { return h.Peek() }

// Pop removes and returns the first event.
func (h *Heap) Pop() Event {
	top := h.a[0]
	h.drop()
	return top
}

// drop removes the first event (the engine has copied it from Peek).
func (h *Heap) drop() {
	a := h.a
	n := len(a) - 1
	last := a[n]
	h.a = a[:n]
	if n == 0 {
		return
	}
	a = a[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if a[j].before(&a[m]) {
				m = j
			}
		}
		if !a[m].before(&last) {
			break
		}
		a[i] = a[m]
		i = m
	}
	a[i] = last
}
