package hil

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/controller/replay"
)

// The simulator's half of the check sees every frame the hosts send
// (docs/hil.md "What is compared"): the generator's own datagrams and
// probes with their exact send times and the probes' request→response
// dependency (Msgs), and everything else — TCP segments and their ACKs,
// iperf3's control and data, ARP — captured where it leaves the host, on
// its emulated egress port (a0, b0), with an AF_PACKET socket that sees
// outgoing frames. The switch's ports (s0, s1) forward these; the
// simulator's switch does the same.

// tapFrame is one frame a host sent.
type tapFrame struct {
	at    time.Duration // CLOCK_MONOTONIC: when it passed the tap
	bytes int           // the frame (Ethernet header included, no FCS)
	gen   bool          // a datagram of the generator (its header's magic)
	tcp   bool          // a TCP segment
	ports [2]uint16     // TCP or UDP source and destination ports
	data  bool          // a TCP segment that carries payload
}

// tap captures the frames one host sends on its egress device.
type tap struct {
	fd     int
	task   int32
	rx     rxClock
	mu     sync.Mutex
	frames []tapFrame
	err    error
	done   chan struct{}
}

// maxTapFrames bounds a tap (MaxPackets per run, with ACKs).
const maxTapFrames = 2 * MaxPackets

// openTap opens an AF_PACKET socket in host h's namespace bound to dev,
// keeping outgoing frames only.
func openTap(h *Host, dev string, task int32, rx rxClock) (*tap, error) {
	t := &tap{fd: -1, task: task, rx: rx, done: make(chan struct{})}
	err := inNS(h.Handle, func() error {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		proto := htons(unix.ETH_P_ALL)
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
		if err != nil {
			return fmt.Errorf("AF_PACKET socket: %w", err)
		}
		t.fd = fd
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifi.Index}); err != nil {
			return fmt.Errorf("bind to %s: %w", dev, err)
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			return err
		}
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	})
	if err != nil {
		if t.fd >= 0 {
			_ = unix.Close(t.fd)
		}
		return nil, fmt.Errorf("capture on %s: %w", dev, err)
	}
	return t, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// run reads frames until stop is closed (polling every 20 ms), then drains
// what is queued.
func (t *tap) run(stop <-chan struct{}) {
	defer close(t.done)
	buf := make([]byte, 128) // headers only: the length comes from recvmsg
	oob := make([]byte, oobLen)
	fds := []unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLIN}}
	stopping := false
	for {
		if !stopping {
			select {
			case <-stop:
				stopping = true
			default:
			}
		}
		n, err := unix.Poll(fds, 20)
		if err != nil && !errors.Is(err, unix.EINTR) {
			t.fail(err)
			return
		}
		if n == 0 {
			if stopping {
				return
			}
			continue
		}
		for {
			m, oobn, flags, from, err := unix.Recvmsg(t.fd, buf, oob, unix.MSG_DONTWAIT|unix.MSG_TRUNC)
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EWOULDBLOCK) {
				break
			}
			if err != nil {
				t.fail(err)
				return
			}
			_ = flags
			ll, ok := from.(*unix.SockaddrLinklayer)
			if !ok || ll.Pkttype != unix.PACKET_OUTGOING {
				continue
			}
			f := parseFrame(buf[:min(m, len(buf))], m)
			f.at = t.rx.at(oob[:oobn], mono())
			t.mu.Lock()
			if len(t.frames) < maxTapFrames {
				t.frames = append(t.frames, f)
			} else if t.err == nil {
				t.err = fmt.Errorf("more than %d frames", maxTapFrames)
			}
			t.mu.Unlock()
		}
	}
}

func (t *tap) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
	}
}

// close waits for run to end and closes the socket.
func (t *tap) close() ([]tapFrame, error) {
	<-t.done
	_ = unix.Close(t.fd)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.frames, t.err
}

// parseFrame classifies an Ethernet frame of length n whose first bytes
// are b.
func parseFrame(b []byte, n int) tapFrame {
	f := tapFrame{bytes: n}
	if len(b) < 14+20 || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
		return f
	}
	ip := b[14:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ihl < 20 || len(ip) < ihl+8 {
		return f
	}
	l4 := ip[ihl:]
	f.ports = [2]uint16{binary.BigEndian.Uint16(l4), binary.BigEndian.Uint16(l4[2:])}
	switch ip[9] {
	case unix.IPPROTO_UDP:
		if len(l4) >= 8+4 && binary.LittleEndian.Uint32(l4[8:]) == magic {
			f.gen = true
		}
	case unix.IPPROTO_TCP:
		f.tcp = true
		if len(l4) >= 13 {
			off := int(l4[12]>>4) * 4
			f.data = total-ihl-off > 0
		}
	}
	return f
}

// capturedMsgs turns the taps' frames into VEF messages (dep 0, at their
// time since t0; the generator's datagrams are left out: Msgs has them).
func capturedMsgs(frames []tapFrame, src int32, t0 time.Duration) []Msg {
	var out []Msg
	for _, f := range frames {
		if f.gen || f.at < t0 {
			continue
		}
		out = append(out, Msg{Src: src, Dst: 1 - src, Bytes: int64(f.bytes), At: f.at - t0, ReplyTo: -1})
	}
	return out
}

// captureSlack is how long after a port's wake-up ended a captured frame
// still counts as held by it: the frame's serialisation at 1 Gb/s and the
// tap's own latency.
const captureSlack = 20 * time.Microsecond

// unholdCaptured moves the frames captured on a0 and b0 (Sender 0) back to
// when they reached the port's egress hook, where the agents' traces of
// those ports (traces, CLOCK_MONOTONIC ps; t0 is the traffic's start on
// that clock) show it: a frame that left within a wake-up of its port
// (from the end of an idle period that cost a wait to captureSlack after
// the wait) was held there, and goes back to the idle period's end.
// Otherwise the simulator, replaying it at its departure, would make its
// simulated port pay the wake-up a second time. It returns the messages,
// in send order again (ReplyTo renumbered), and how many moved.
func unholdCaptured(msgs []Msg, t0 time.Duration, traces map[string][]replay.TraceRow) ([]Msg, int) {
	moved := 0
	out := slices.Clone(msgs)
	for i := range out {
		m := &out[i]
		if m.Sender != 0 || m.Src < 0 || m.Src > 1 {
			continue
		}
		rows := traces[pathFrom(m.Src)[0]]
		at := replay.PS(t0+m.At) * 1000
		// The last idle period that ended at or before the departure.
		k := sort.Search(len(rows), func(j int) bool { return rows[j].End() > at }) - 1
		if k < 0 || rows[k].Delay <= 0 {
			continue
		}
		end := rows[k].End()
		if at <= end+rows[k].Delay+replay.PS(captureSlack)*1000 && end >= replay.PS(t0)*1000 {
			m.At = time.Duration(end/1000) - t0
			moved++
		}
	}
	if moved == 0 {
		return out, 0
	}
	return mergeMsgs([]FlowResult{{msgs: out}}), moved
}

// pathFrom is the two egress ports a message from host src (0 = a,
// 1 = b) crosses: its host's, then the switch's towards the other host
// (LinePorts).
func pathFrom(src int32) [2]string {
	return [2]string{LinePorts[2*src].Dev, LinePorts[2*src+1].Dev}
}

// waitMatch is how long after the time a packet reached its port's egress
// hook is expected (its send, or its departure from the host's port) an
// idle period's end still counts as that packet's: the syscall, the
// frame's serialisation at 1 Gb/s and the forwarding through s.
const waitMatch = 60 * time.Microsecond

// unblockSends gives the simulator each datagram whose sender was still
// in its previous send when it fell due (Msg.Due > 0) at the time the
// sender would have sent it had that previous message paid no wake-up:
// its send time less the wake-ups the previous message paid on its way
// (its host's port, then the switch's port towards the other host, as the
// agents' traces show them: an idle period that the message ended within
// waitMatch of when it reached the port) and less what the previous
// message itself moved, but not before it was due. Under the spin delay a
// send returns only after its packet has crossed the line, wake-ups
// included, so a held sender's measured send times hold those wake-ups,
// each train of held datagrams all of them; the simulator's blocking
// senders hold a datagram behind their own delivery of the previous
// message, with their own wake-ups (docs/hil.md "Limits"). Left in, a
// simulated sender whose port did not wait there would send late anyway,
// and its ports would see gaps the real ones never had. What is not a
// wake-up (the kernel's forwarding, another CPU's spin) stays in the send
// time. It returns the messages in send order again and how many moved.
func unblockSends(msgs []Msg, t0 time.Duration, traces map[string][]replay.TraceRow) ([]Msg, int) {
	// waitAt is the wait that a packet reaching port at at (ps) paid
	// there, if it ended an idle period within waitMatch, and when it
	// reached it.
	waitAt := func(port string, at replay.PS) (replay.PS, replay.PS) {
		rows := traces[port]
		k := sort.Search(len(rows), func(j int) bool { return rows[j].End() >= at })
		if k < len(rows) && rows[k].End() <= at+replay.PS(waitMatch)*1000 {
			return rows[k].Delay, rows[k].End()
		}
		return 0, at
	}
	// wakeups is what message m's own wake-ups held its sender.
	wakeups := func(m Msg) time.Duration {
		path := pathFrom(m.Src)
		w1, reached := waitAt(path[0], replay.PS(t0+m.At)*1000)
		w2, _ := waitAt(path[1], reached+w1)
		return time.Duration((w1 + w2) / 1000)
	}
	type sender struct{ src, id int32 }
	last := map[sender]int{}
	out := slices.Clone(msgs)
	moved := 0
	for i := range out {
		m := &out[i]
		if m.Sender == 0 || m.Src < 0 || m.Src > 1 {
			continue
		}
		key := sender{m.Src, m.Sender}
		prev, ok := last[key]
		last[key] = i
		if !ok || m.Due <= 0 || m.Due >= m.At {
			continue
		}
		shift := msgs[prev].At - out[prev].At + wakeups(msgs[prev])
		if at := max(m.Due, m.At-shift); at < m.At {
			m.At = at
			moved++
		}
	}
	if moved == 0 {
		return out, 0
	}
	return mergeMsgs([]FlowResult{{msgs: out}}), moved
}
