package eeectl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// EEEEvent reports that a port's EEE settings changed: the kernel's
// ETHTOOL_MSG_EEE_NTF, sent after any successful change through ethtool
// netlink or the ETHTOOL_SEEE ioctl — by lpictl itself as well as by
// anyone else (NetworkManager, systemd-networkd, udev .link files, a user
// running ethtool). The message does not say who made the change: compare
// State with what was last set to notice outside changes.
type EEEEvent struct {
	Index int
	Name  string
	// State is the port's EEE state after the change, as carried by the
	// notification (the same attributes as ETHTOOL_MSG_EEE_GET_REPLY).
	State EEEState
	Time  time.Time
}

// EEESubscribeOptions configure SubscribeEEE.
type EEESubscribeOptions struct {
	NetNS hwlink.NetNS
	// OnError receives errors from the netlink socket and undecodable
	// notifications (optional).
	OnError func(error)
}

// SubscribeEEE reports EEE changes of the ports in opts.NetNS (ethtool
// netlink's "monitor" multicast group, ETHTOOL_MSG_EEE_NTF) until ctx ends,
// then closes the channel. It needs no privileges. Errors match
// ErrNotSupported when the kernel has no ethtool netlink.
func SubscribeEEE(ctx context.Context, opts EEESubscribeOptions) (<-chan EEEEvent, error) {
	c, err := dialEthtoolMonitor(opts.NetNS)
	if err != nil {
		return nil, err
	}
	out := make(chan EEEEvent, 64)
	stop := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-stop:
		}
		c.Close()
	}()
	go func() {
		defer close(out)
		defer close(stop)
		for {
			msgs, _, err := c.Receive()
			if err != nil {
				if ctx.Err() != nil || hwlink.IsClosedErr(err) {
					return
				}
				if opts.OnError != nil {
					opts.OnError(fmt.Errorf("EEE notifications: %w", err))
				}
				if !errors.Is(err, unix.ENOBUFS) {
					time.Sleep(10 * time.Millisecond)
				}
				continue
			}
			now := time.Now()
			for _, m := range msgs {
				if m.Header.Command != unix.ETHTOOL_MSG_EEE_NTF {
					continue
				}
				ev, err := decodeEEENotification(m.Data)
				if err != nil {
					if opts.OnError != nil {
						opts.OnError(err)
					}
					continue
				}
				ev.Time = now
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// dialEthtoolMonitor opens a generic netlink socket in ns joined to the
// ethtool family's monitor group.
func dialEthtoolMonitor(ns hwlink.NetNS) (*genetlink.Conn, error) {
	c, err := hwlink.DialIn(ns, genetlink.Dial)
	if err != nil {
		return nil, fmt.Errorf("dial generic netlink: %w", err)
	}
	fam, err := c.GetFamily(unix.ETHTOOL_GENL_NAME)
	if err != nil {
		c.Close()
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("generic netlink family %q (CONFIG_ETHTOOL_NETLINK): %w: %w", unix.ETHTOOL_GENL_NAME, hwlink.ErrNotSupported, err)
		}
		return nil, fmt.Errorf("generic netlink family %q: %w", unix.ETHTOOL_GENL_NAME, err)
	}
	var grp uint32
	for _, g := range fam.Groups {
		if g.Name == unix.ETHTOOL_MCGRP_MONITOR_NAME {
			grp = g.ID
		}
	}
	if grp == 0 {
		c.Close()
		return nil, fmt.Errorf("ethtool family has no %q multicast group: %w", unix.ETHTOOL_MCGRP_MONITOR_NAME, hwlink.ErrNotSupported)
	}
	if err := c.JoinGroup(grp); err != nil {
		c.Close()
		return nil, fmt.Errorf("join ethtool %q group: %w", unix.ETHTOOL_MCGRP_MONITOR_NAME, hwlink.ClassifyErrno(err))
	}
	return c, nil
}

// decodeEEENotification decodes the attributes of ETHTOOL_MSG_EEE_NTF (the
// payload after the generic netlink header).
func decodeEEENotification(b []byte) (EEEEvent, error) {
	var ev EEEEvent
	st, name, err := decodeEEEReply(b)
	if err != nil {
		return ev, fmt.Errorf("EEE notification: %w", err)
	}
	ev.State, ev.Name = st, name
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return ev, fmt.Errorf("EEE notification: %w", err)
	}
	for ad.Next() {
		if ad.Type() != unix.ETHTOOL_A_EEE_HEADER {
			continue
		}
		ad.Nested(func(nad *netlink.AttributeDecoder) error {
			for nad.Next() {
				if nad.Type() == unix.ETHTOOL_A_HEADER_DEV_INDEX {
					ev.Index = int(nad.Uint32())
				}
			}
			return nil
		})
	}
	if err := ad.Err(); err != nil {
		return ev, fmt.Errorf("EEE notification header: %w", err)
	}
	if ev.Index == 0 && ev.Name == "" {
		return ev, errors.New("EEE notification without device")
	}
	return ev, nil
}
