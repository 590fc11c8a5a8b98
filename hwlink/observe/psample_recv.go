package observe

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// subscribe joins psample's "packets" multicast group in the namespace of
// ncfg.
func (o *PSampleObserver) subscribe(ncfg *netlink.Config) error {
	var err error
	if o.genl, err = genetlink.Dial(ncfg); err != nil {
		return fmt.Errorf("%s: dial generic netlink: %w", o.ifname, err)
	}
	fam, err := o.genl.GetFamily(psampleGenlName)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: kernel lacks psample (CONFIG_PSAMPLE): generic netlink family %q not found: %w", o.ifname, psampleGenlName, hwlink.ErrNotSupported)
		}
		return fmt.Errorf("%s: generic netlink family %q: %w", o.ifname, psampleGenlName, err)
	}
	o.family = fam.ID
	var grp uint32
	for _, g := range fam.Groups {
		if g.Name == psampleMcgrpSample {
			grp = g.ID
		}
	}
	if grp == 0 {
		return fmt.Errorf("%s: psample family has no %q multicast group: %w", o.ifname, psampleMcgrpSample, hwlink.ErrNotSupported)
	}
	if err := o.genl.JoinGroup(grp); err != nil {
		return fmt.Errorf("%s: join psample %q group (needs CAP_NET_ADMIN): %w", o.ifname, psampleMcgrpSample, hwlink.ClassifyErrno(err))
	}
	_ = o.genl.SetReadBuffer(4 << 20)
	return nil
}

// receive reads psample messages until the socket is closed.
func (o *PSampleObserver) receive() {
	defer close(o.done)
	for {
		msgs, _, err := o.genl.Receive()
		if err != nil {
			if hwlink.IsClosedErr(err) {
				return
			}
			o.recvErrs.Add(1)
			if errors.Is(err, unix.ENOBUFS) {
				// The socket overflowed: the sequence numbers will say how
				// many samples were lost; forget the previous samples.
				o.mu.Lock()
				o.est.reset()
				o.mu.Unlock()
				continue
			}
			o.log.Debug("psample receive", "device", o.ifname, "error", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		recvMono, off := clockOffset()
		for _, m := range msgs {
			if m.Header.Command != psampleCmdSample {
				continue
			}
			s, err := decodePSample(m.Data)
			if err != nil {
				o.decodeErr.Add(1)
				continue
			}
			o.ingest(s, recvMono, off)
		}
	}
}

// clockOffset returns CLOCK_MONOTONIC now and CLOCK_REALTIME − CLOCK_MONOTONIC.
func clockOffset() (mono, off time.Duration) {
	var r, m unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &m)
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &r)
	return time.Duration(m.Nano()), time.Duration(r.Nano() - m.Nano())
}

// sampleTime returns a sample's time on CLOCK_MONOTONIC: its kernel
// timestamp (CLOCK_REALTIME) shifted by the clocks' offset, or the receive
// time when there is none or it is implausible (more than 1 s ahead or 10 s
// behind the receive time).
func sampleTime(s PSample, recvMono, off time.Duration) (time.Duration, bool) {
	if !s.HasTimestamp {
		return recvMono, false
	}
	t := time.Duration(s.Timestamp) - off
	if t > recvMono+time.Second || t < recvMono-10*time.Second {
		return recvMono, false
	}
	return t, true
}

// ingest routes one sample to its direction's estimator.
func (o *PSampleObserver) ingest(s PSample, recvMono, off time.Duration) {
	var dir Direction
	switch {
	case s.Group == o.groups[Egress]:
		dir = Egress
		if s.OIfIndex != 0 && s.OIfIndex != uint16(o.ifindex) {
			o.foreign.Add(1)
			return
		}
	case o.dirs > 1 && s.Group == o.groups[Ingress]:
		dir = Ingress
		if s.IIfIndex != 0 && s.IIfIndex != uint16(o.ifindex) {
			o.foreign.Add(1)
			return
		}
	default:
		return
	}
	t, stamped := sampleTime(s, recvMono, off)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.received++
	o.stamped = stamped
	o.push(o.est.add(dir, s, t))
}

// push appends a gap to the ring (callers hold o.mu).
func (o *PSampleObserver) push(g GapSample, ok bool) {
	if !ok {
		return
	}
	st := &o.est.dirs[g.Dir&1].stats
	if o.ring.push(g) {
		st.Samples++
	} else {
		st.SamplesLost++
	}
}
