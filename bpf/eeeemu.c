//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * eeeemu: an emulated EEE port for lpictl (see docs/hil.md).
 *
 * Attached at TCX (or clsact/cls_bpf) egress of one interface, with fq as
 * the interface's root qdisc. It runs the port power state machine of
 * docs/model.md §1 for the port's transmit direction, lazily (docs/model.md §1.1 performance
 * hint, as sim/eee does): no timer is ever armed; the state a packet finds
 * follows from when the last transmission ended (free_at), the t_PDT armed
 * then and the preset's transition times:
 *
 *   awake --(idle >= t_PDT)--> going down (t_s) --> low power (Fast Wake,
 *   Deep Sleep, or hybrid: Fast Wake for `hold`, then Deep Sleep)
 *   --(packet)--> going up (t_w of the state left) --> awake
 *
 * A packet that finds the port awake leaves at once; one that finds it in
 * low power waits t_w; one that finds it going down waits the rest of t_s,
 * then t_w; a packet that finds the port busy (transmitting, waking, or
 * holding earlier packets) leaves after them. The wait is applied as an
 * earliest departure time (skb->tstamp, CLOCK_MONOTONIC), which the fq
 * qdisc honours. Departure times are non-decreasing per port, so packets
 * are never reordered. With a rate set, each packet also occupies the
 * emulated link for its serialisation time and leaves when its last bit
 * would have (tstamp = end of its transmission).
 *
 * Idle period (docs/model.md §1.1): from the end of the transmission that emptied
 * the queue to the next packet's arrival. A gap of 0 (back-to-back) is no
 * idle period; a gap of exactly t_PDT is a miss.
 *
 * Each ended idle period is exported through the `events` ring buffer
 * (struct emu_event: its end, length, the t_PDT armed for it, hit or miss,
 * the wait the packet paid, and its number), so that user space (the
 * agent's "emulated" observer) sees the port's own idle periods, which run
 * from a departure to the next arrival, with the port's own outcome. The
 * event is filled under the lock and reserved/submitted after it (no
 * helper may run under a bpf_spin_lock): only packets that end an idle
 * period pay for the ring buffer. Two CPUs may submit in the other order
 * than they ended their periods; the sequence number lets the reader put
 * them back in order. A full ring counts the event in events_lost.
 *
 * Delay ledger (controller/ledger.go, per idle period): the wait each
 * packet that ends an idle period pays for the power state is added to
 * S (emu_state.ledger_spent_ns), whatever the configuration. With
 * emu_config.ledger on and a rate l, an idle period whose timer expires at
 * t = free_at + t_PDT starts going down only if S + c <= l * (t - start)
 * (the budget, in integer ns: floor((t - start) * rate_q32 / 2^32));
 * otherwise the port stays awake until the earliest time that holds, and
 * goes down then if the period lasts that long (S is constant during an
 * idle period: it grows only when one ends). The charge of the period is
 * at most c when c covers the mode's t_s + deepest t_w, so S never
 * exceeds l * T + c. Held periods are exported with EVENT_HELD and the
 * t_PDT they ran.
 *
 * Per-device instance: user space loads one copy of this program and its
 * three maps per emulated interface (interfaces in different network
 * namespaces may share an ifindex), so the maps have one entry.
 *
 * Concurrency: the state is one value updated under a bpf_spin_lock, so
 * packets sent on several CPUs at once are serialised exactly as one
 * transmitter serialises them. The clock is read before the lock (no
 * helper may be called while holding it); a packet whose clock reading is
 * older than the last departure simply finds the port busy and queues
 * behind. The configuration is a separate, memory-mapped map that user
 * space writes one aligned 8-byte field at a time; the program reads each
 * field once per packet and copies t_PDT and the effective mode into the
 * state at each departure ("armed" for the idle period that follows, as a
 * real PDT timer is armed when the queue empties).
 *
 * How the wait is applied (emu_config.delay):
 *  - DELAY_EDT: the departure time goes into skb->tstamp and the fq root
 *    qdisc holds the packet until then; the sender is not blocked.
 *  - DELAY_SPIN, for kernels without fq: the program itself waits on the
 *    clock (bpf_loop) until the departure time, at most spin_max_ns per
 *    packet, on the sending CPU with bottom halves disabled. Precise, but
 *    it costs that CPU the whole wait and blocks the sender meanwhile.
 *  - DELAY_NONE: states, waits and energy are accounted, packets are not
 *    held (the status then shows what the port would have done).
 *
 * Link mode (emu_config.lpi = LPI_LINK; docs/model.md §1.2 "per link", the
 * simulator's sim/eee.Link with PerLink): the two ends of one link are two
 * copies of this program (two devices, possibly in two namespaces) that
 * share one lpi_link map, pinned by user space under the link's name. Each
 * end keeps its own registers (t_PDT, hold, ledger: its emu_config) and
 * counters (its slot emu_link.end[emu_config.link_end]); the power state
 * is the link's, one for both directions, under the link's lock:
 *  - the link's idle period starts when both ends are idle: at the later
 *    end's last departure (busy_until_ns); the end that transmitted last
 *    (owner) runs the timer with its t_PDT, armed at its last departure;
 *  - the owner's timer expires at T = busy_until + t_PDT, later if either
 *    end's ledger does not allow going down yet (T = the later of the two
 *    ends' allowed times, as the simulator's peer floor); the link never
 *    goes down while either end's EEE or tx LPI is off;
 *  - the power-down handshake of docs/model.md §1.1 with the one-way time
 *    H = emu_config.handshake_ns: the peer refuses a request that finds a
 *    packet before T + H; otherwise both directions start going down at
 *    D = T + 2H and are low at D + t_s;
 *  - the first packet on either end after T (T + H at the peer) wakes the
 *    link (t_s remainder and t_w, or the t_w of the state it finds); a
 *    packet on the other end while it wakes waits for ready_at_ns, and a
 *    packet whose end has its own packets queued waits behind them;
 *  - the state times, wake-ups and deepens are the link's (both ends
 *    count the same sleep); each end counts its own idle periods (from its
 *    own last departure), their hits and misses (a miss: the packet waited
 *    for the link's power state) and charges its own ledger.
 * A slot whose epoch differs from its end's attached_ns is a new end: it
 * starts over, idle since its attach. Per direction (the default), the
 * lpi_link map is unused.
 *
 * The program never drops traffic: it always returns -1 (TCX_NEXT /
 * TC_ACT_UNSPEC).
 */
#include "headers/lpi_bpf.h"

/* Ethernet preamble+SFD (8), FCS (4) and minimum inter-frame gap (12): bytes
 * on the wire that skb->len (which includes the MAC header) leaves out, per
 * segment. Same as idlegap.c. */
#define WIRE_OVERHEAD 24

/* Low-power modes (docs/model.md §1), the values of sim/eee.Mode. */
#define MODE_ALWAYS_ON 0
#define MODE_FAST_WAKE 1
#define MODE_DEEP_SLEEP 2
#define MODE_HYBRID 3

/* Port states, the order of sim/eee.State and of emu_state.time_ns. */
#define ST_WAKE 0
#define ST_GOING_DOWN 1
#define ST_FAST_WAKE 2
#define ST_DEEP_SLEEP 3
#define ST_GOING_UP 4
#define NUM_STATES 5

/* emu_config.flags: the EEE "registers" (ethtool's enabled, tx_lpi_enabled).
 * The port only goes down with both set and a mode other than always-on. */
#define FLAG_EEE_ENABLED (1U << 0)
#define FLAG_TX_LPI_ENABLED (1U << 1)

/* emu_config.ledger */
#define LEDGER_OFF 0 /* account S only */
#define LEDGER_ON 1  /* the port goes down only while S + c <= budget */

/* emu_config.delay */
#define DELAY_EDT 0
#define DELAY_SPIN 1
#define DELAY_NONE 2

/* emu_config.lpi: LPI symmetry (docs/model.md §1.2) */
#define LPI_DIRECTION 0 /* each egress port on its own */
#define LPI_LINK 1      /* the two ends of a link share the lpi_link map */

/* Configuration, written by user space (hwlink) through a memory mapping,
 * one aligned 8-byte field at a time. Times are in ns, already multiplied
 * by the time scale. Fields after `flags` are metadata the program does
 * not read (they let another process find out what was attached). */
struct emu_config {
	__u64 pdt_ns;            /* t_PDT: the tx LPI timer */
	__u64 sleep_fw_ns;       /* t_s of Fast Wake */
	__u64 wake_fw_ns;        /* t_w of Fast Wake */
	__u64 sleep_ds_ns;       /* t_s of Deep Sleep */
	__u64 wake_ds_ns;        /* t_w of Deep Sleep */
	__u64 hold_ns;           /* hybrid: time in Fast Wake before Deep Sleep */
	__u64 ns_per_byte_q16;   /* serialisation, Q16 ns per wire byte; 0 = none */
	__u64 clock_override_ns; /* tests only (BPF_PROG_TEST_RUN): the clock; 0 = bpf_ktime_get_ns */
	__u64 spin_max_ns;       /* DELAY_SPIN: longest wait per packet */
	__u32 mode;              /* MODE_* */
	__u32 flags;             /* FLAG_* */
	__u32 delay;             /* DELAY_* */
	__u32 ledger;            /* LEDGER_*: whether the delay ledger holds the port */
	/* The delay ledger (see "Delay ledger" above), written by user space:
	 * the rate l as a Q32 fraction (1 << 32 = 1, at most that), the
	 * reserve c and the start of the budget. A new start restarts the
	 * ledger (spent, held and overruns from 0). */
	__u64 ledger_rate_q32;
	__u64 ledger_reserve_ns;
	__u64 ledger_start_ns;
	/* Metadata for user space. */
	__u64 power_wake_uw;     /* port power per state, µW */
	__u64 power_fw_uw;
	__u64 power_ds_uw;
	__u64 rate_bps;          /* serialisation rate (0 = none) */
	__u64 preset_rate_bps;   /* the preset's link rate */
	__u64 scale_milli;       /* time scale × 1000 */
	__u64 attached_ns;       /* CLOCK_MONOTONIC at attach */
	__u64 netns_ino;
	__u32 ifindex;
	__u32 attach;            /* 1 = TCX, 2 = clsact */
	__u32 setup;             /* what attach added: 1 = fq root qdisc, 2 = clsact qdisc */
	__u32 version;           /* layout version */
	char ifname[16];
	char preset[48];
	char driver[32];
	/* Link mode (user space writes these before attaching). */
	__u64 handshake_ns;      /* H: one-way time of the power-down request */
	__u32 lpi;               /* LPI_* */
	__u32 link_end;          /* this end's slot in lpi_link (0 or 1) */
	char link[32];           /* the link's name (metadata) */
};

/* State, owned by the program (user space writes it once, before the
 * program is attached). time_ns sums to free_at_ns - t0_ns. */
struct emu_state {
	struct bpf_spin_lock lock;
	__u32 armed_mode;        /* effective mode of the idle period after free_at (ALWAYS_ON: never sleeps) */
	__u64 armed_pdt_ns;      /* t_PDT of that idle period */
	__u64 t0_ns;             /* accounting starts here */
	__u64 free_at_ns;        /* end of the last transmission (the port's last departure) */
	__u64 time_ns[NUM_STATES];
	__u64 packets;
	__u64 bytes;
	__u64 idle_periods;      /* packets that found the port idle (gap > 0) */
	__u64 hits;              /* idle periods shorter than t_PDT (or no sleeping) */
	__u64 misses;            /* idle periods that reached t_PDT: the port went down */
	__u64 wakeups;           /* going-up transitions (one per miss) */
	__u64 deepens;           /* hybrid Fast Wake -> Deep Sleep steps */
	__u64 delayed;           /* packets held back (power state or queue) */
	__u64 delay_ns;          /* their total wait before transmission */
	__u64 delay_max_ns;
	__u64 tstamp_kept;       /* packets whose own later departure time was kept */
	__u64 spin_capped;       /* DELAY_SPIN: waits cut to spin_max_ns */
	__u64 events_lost;       /* ended idle periods not exported: the events ring was full (atomic add) */
	/* The delay ledger, since ledger_start_ns (accounted whether it holds
	 * the port or not). */
	__u64 ledger_start_ns;   /* the configuration's start these count from */
	__u64 ledger_spent_ns;   /* S: the waits of the packets that ended idle periods */
	__u64 ledger_held;       /* idle periods the ledger kept awake past their t_PDT */
	__u64 ledger_overruns;   /* charges after which S exceeded the budget (rate > 0) */
};

/* One end of a link in link mode: its armed registers and ledger, copied
 * at each of its packets, and its counters (as emu_state's). */
struct emu_end {
	__u64 epoch_ns;          /* the end's emu_config.attached_ns: another value is a new end */
	__u64 free_at_ns;        /* end of the end's last transmission */
	__u64 armed_pdt_ns;      /* the end's t_PDT at its last departure */
	__u64 hold_ns;           /* the end's hybrid hold at its last packet */
	__u32 armed_mode;        /* the end's effective mode at its last departure */
	__u32 ledger;            /* 1: the end's ledger is on with a rate (holds the link) */
	__u64 ledger_rate_q32;   /* the end's ledger configuration at its last packet */
	__u64 ledger_reserve_ns;
	__u64 ledger_start_ns;
	__u64 ledger_spent_ns;
	__u64 ledger_held;
	__u64 ledger_overruns;
	__u64 packets;
	__u64 bytes;
	__u64 idle_periods;
	__u64 hits;
	__u64 misses;
	__u64 wakeups;           /* wake-ups this end's packets caused */
	__u64 deepens;
	__u64 delayed;
	__u64 delay_ns;
	__u64 delay_max_ns;
	__u64 tstamp_kept;
	__u64 spin_capped;
};

/* A link in link mode, shared by its two ends' programs. time_ns sums to
 * busy_until_ns - t0_ns. The fields after end[] are written once by user
 * space when it creates the link (both ends must agree on them). */
struct emu_link {
	struct bpf_spin_lock lock;
	__u32 owner;             /* the end that transmitted last: its timer runs */
	__u64 t0_ns;
	__u64 busy_until_ns;     /* the later of the ends' last departures */
	__u64 ready_at_ns;       /* end of the link's last wake-up */
	__u64 time_ns[NUM_STATES];
	__u64 wakeups;           /* the link's going-up transitions (one per power-down) */
	__u64 deepens;
	struct emu_end end[2];
	__u64 handshake_ns;
	__u64 scale_milli;
	__u64 rate_bps;
	__u64 sleep_fw_ns;
	__u64 wake_fw_ns;
	__u64 sleep_ds_ns;
	__u64 wake_ds_ns;
	__u32 mode;
	__u32 version;
	char preset[48];
};

/* emu_event.flags */
#define EVENT_MISSED (1U << 0) /* the period reached t_PDT: the port went down, the packet paid a wake-up */
#define EVENT_SLEEPS (1U << 1) /* the port could go down in this period (mode armed is not always-on) */
#define EVENT_HELD (1U << 2)   /* the ledger kept the port awake past the armed t_PDT (pdt_ns is the t_PDT it ran) */

/* One ended idle period (docs/model.md §1.1), in CLOCK_MONOTONIC ns. The period ran
 * from end_ns - gap_ns (the last departure) to end_ns (the next packet
 * reached the port). */
struct emu_event {
	__u64 end_ns;
	__u64 gap_ns;            /* > 0 */
	__u64 pdt_ns;            /* t_PDT the period ran: the armed one, or later when the ledger held the port */
	__u64 delay_ns;          /* the wait the packet paid for the power state (t_s remainder + t_w, or t_w; 0 on a hit) */
	__u64 seq;               /* the period's number since attach, from 1 (emu_state.idle_periods) */
	__u32 flags;             /* EVENT_* */
	__u32 mode;              /* the mode armed for the period (MODE_*) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct emu_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct emu_state);
} state SEC(".maps");

/* The link state of link mode; user space replaces this map with the
 * link's pinned one for the second end. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct emu_link);
} lpi_link SEC(".maps");

/* Ended idle periods for user space, drained by polling (no wake-ups).
 * 1 MiB holds about 18 000 events (48 bytes and an 8-byte header each). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

struct spin_ctx {
	__u64 until;
};

static long spin_step(__u64 i, void *ctx)
{
	struct spin_ctx *s = ctx;
	return bpf_ktime_get_ns() >= s->until; /* 1 stops the loop */
}

/* bpf_loop's limit (BPF_MAX_LOOPS); about 0.3 s of clock reads. */
#define SPIN_MAX_LOOPS (1U << 23)

#define U64_MAX (~0ULL)

/* ledger_span is the least time t - start at which the budget
 * floor((t - start) * rate / 2^32) reaches need: ceil(need * 2^32 / rate),
 * U64_MAX when that is beyond 2^63 ns. rate is in (0, 2^32], so the
 * remainder shifted by 32 fits in 64 bits. hwlink's ledgerSpan is the same
 * arithmetic in Go. */
static __always_inline __u64 ledger_span(__u64 need, __u64 rate)
{
	__u64 q = need / rate, r = need % rate;
	if (q >> 31)
		return U64_MAX;
	__u64 rs = r << 32;
	return (q << 32) + rs / rate + (rs % rate != 0);
}

/* ledger_allow is the earliest time the ledger lets the port start going
 * down (S + c <= budget), U64_MAX for never. */
static __always_inline __u64 ledger_allow(__u64 spent, __u64 reserve, __u64 rate, __u64 start)
{
	__u64 need = spent + reserve;
	if (need < spent)
		return U64_MAX;
	__u64 span = ledger_span(need, rate);
	if (span == U64_MAX || start + span < start)
		return U64_MAX;
	return start + span;
}

/* One packet's inputs, read before any lock. */
struct pkt {
	__u64 now, fake, arrive, tx;
	__u64 pdt, s_fw, w_fw, s_ds, w_ds, hold, spin_max;
	__u64 lrate, lres, lstart;
	__u32 mode, lon, delay, len;
};

/* What the step under the lock decided: the packet's start and end of
 * transmission, and the idle period it ended (ev_gap > 0), for the event
 * written after the lock is released. */
struct verdict {
	__u64 start, end;
	__u64 ev_gap, ev_pdt, ev_seq;
	__u32 ev_flags, ev_mode;
};

/* lowpower is the low-power state a mode enters first, with its t_s and
 * t_w. */
static __always_inline __u32 lowpower(struct pkt *k, __u32 m, __u64 *ts, __u64 *tw)
{
	if (m == MODE_DEEP_SLEEP) {
		*ts = k->s_ds;
		*tw = k->w_ds;
		return ST_DEEP_SLEEP;
	}
	*ts = k->s_fw;
	*tw = k->w_fw;
	return ST_FAST_WAKE;
}

/* sleep_tail accounts into times a power-down that ends going down at
 * down_end and is woken by a packet at arrive, and returns when the
 * packet may start: going down (the rest of t_s, then t_w), or low
 * (hybrid: Fast Wake for hold, then Deep Sleep) and then t_w. *deepened
 * says whether a hybrid step to Deep Sleep happened. */
static __always_inline __u64 sleep_tail(__u64 *times, struct pkt *k, __u32 m, __u64 down_end, __u64 arrive,
					__u64 hold, __u32 *deepened)
{
	__u64 ts, tw, start;
	__u32 low = lowpower(k, m, &ts, &tw);
	times[ST_GOING_DOWN] += ts;
	if (arrive < down_end) {
		/* Going down: the rest of t_s, then t_w. */
		start = down_end + tw;
	} else if (m == MODE_HYBRID && arrive - down_end >= hold) {
		times[ST_FAST_WAKE] += hold;
		times[ST_DEEP_SLEEP] += arrive - down_end - hold;
		*deepened = 1;
		tw = k->w_ds;
		start = arrive + tw;
	} else {
		times[low] += arrive - down_end;
		start = arrive + tw;
	}
	times[ST_GOING_UP] += tw;
	return start;
}

/* dir_step is one packet of a port per direction (docs/model.md §1.1),
 * under the port's lock. */
static __always_inline void dir_step(struct emu_state *st, struct pkt *k, struct verdict *v)
{
	__u64 arrive = k->arrive, start;
	bpf_spin_lock(&st->lock);
	if (st->ledger_start_ns != k->lstart) {
		st->ledger_start_ns = k->lstart;
		st->ledger_spent_ns = 0;
		st->ledger_held = 0;
		st->ledger_overruns = 0;
	}
	__u64 free = st->free_at_ns;
	if (arrive <= free) {
		start = free; /* busy (transmitting, waking, queued) or back to back: no idle period */
	} else {
		__u64 gap = arrive - free;
		__u32 m = st->armed_mode;
		__u64 p = st->armed_pdt_ns;
		if (m != MODE_ALWAYS_ON && k->lon == LEDGER_ON && k->lrate && gap >= p) {
			/* The timer expired at free + p: the port starts going
			 * down then only if the ledger allows it, else when it
			 * does (never, if that is later than this packet). */
			__u64 allow = ledger_allow(st->ledger_spent_ns, k->lres, k->lrate, k->lstart);
			if (allow > free + p) {
				p = allow - free;
				st->ledger_held++;
				v->ev_flags |= EVENT_HELD;
			}
		}
		st->idle_periods++;
		v->ev_gap = gap;
		v->ev_pdt = p;
		v->ev_mode = m;
		v->ev_seq = st->idle_periods;
		if (m != MODE_ALWAYS_ON)
			v->ev_flags |= EVENT_SLEEPS;
		if (m == MODE_ALWAYS_ON || gap < p) {
			st->hits++;
			st->time_ns[ST_WAKE] += gap;
			start = arrive;
		} else {
			__u32 deepened = 0;
			v->ev_flags |= EVENT_MISSED;
			st->misses++;
			st->wakeups++;
			st->time_ns[ST_WAKE] += p;
			start = sleep_tail(st->time_ns, k, m, free + p + (m == MODE_DEEP_SLEEP ? k->s_ds : k->s_fw), arrive,
					   k->hold, &deepened);
			st->deepens += deepened;
		}
	}
	if (v->ev_gap && start > arrive) {
		/* The ledger's charge: what the packet ending the period
		 * waited for the port's power state. */
		__u64 d = start - arrive;
		st->ledger_spent_ns += d;
		if (k->lrate && arrive < ledger_allow(st->ledger_spent_ns, 0, k->lrate, k->lstart))
			st->ledger_overruns++;
	}
	__u64 end = start + k->tx;
	st->time_ns[ST_WAKE] += k->tx;
	st->free_at_ns = end;
	st->armed_mode = k->mode;
	st->armed_pdt_ns = k->pdt;
	st->packets++;
	st->bytes += k->len;
	if (arrive > k->now)
		st->tstamp_kept++;
	if (start > k->now) {
		__u64 d = start - k->now;
		st->delayed++;
		st->delay_ns += d;
		if (d > st->delay_max_ns)
			st->delay_max_ns = d;
	}
	if (k->delay == DELAY_SPIN && end > k->now && end - k->now > k->spin_max)
		st->spin_capped++;
	bpf_spin_unlock(&st->lock);
	v->start = start;
	v->end = end;
}

/* end_enter brings an end's slot up to its configuration: a new end (its
 * epoch differs) starts over, idle since its attach with its registers
 * armed; the ledger's configuration is the end's current one (a new start
 * restarts its account). Under the link's lock. */
static __always_inline void end_enter(struct emu_end *me, struct pkt *k, __u64 epoch)
{
	if (me->epoch_ns != epoch) {
		__builtin_memset(me, 0, sizeof(*me));
		me->epoch_ns = epoch;
		me->free_at_ns = epoch;
		me->armed_mode = k->mode;
		me->armed_pdt_ns = k->pdt;
		me->ledger_start_ns = k->lstart;
	}
	if (me->ledger_start_ns != k->lstart) {
		me->ledger_start_ns = k->lstart;
		me->ledger_spent_ns = 0;
		me->ledger_held = 0;
		me->ledger_overruns = 0;
	}
	me->hold_ns = k->hold;
	me->ledger = k->lon == LEDGER_ON && k->lrate;
	me->ledger_rate_q32 = k->lrate;
	me->ledger_reserve_ns = k->lres;
}

/* end_floor raises the expiry *t to when x's ledger allows going down, and
 * counts the hold in x. */
static __always_inline __u32 end_floor(struct emu_end *x, __u64 *t)
{
	if (!x->ledger)
		return 0;
	__u64 allow = ledger_allow(x->ledger_spent_ns, x->ledger_reserve_ns, x->ledger_rate_q32, x->ledger_start_ns);
	if (allow <= *t)
		return 0;
	*t = allow;
	x->ledger_held++;
	return EVENT_HELD;
}

/* link_idle ends the link's idle period (busy_until .. arrive) with a
 * packet of end me (is_owner: me owns the timer). It returns when the
 * packet may start and sets *missed when it waits for the power state;
 * the link's times are accounted up to that start. */
static __always_inline __u64 link_idle(struct emu_link *lk, struct emu_end *me, struct emu_end *peer, __u32 is_owner,
				       struct pkt *k, __u64 hs, struct verdict *v, __u32 *missed)
{
	struct emu_end *own = is_owner ? me : peer;
	__u64 busy = lk->busy_until_ns, arrive = k->arrive;
	__u32 m = own->armed_mode;
	if (me->armed_mode == MODE_ALWAYS_ON || peer->armed_mode == MODE_ALWAYS_ON)
		m = MODE_ALWAYS_ON;
	__u64 t = busy + own->armed_pdt_ns;
	if (m != MODE_ALWAYS_ON && arrive >= t) {
		/* The timer expired: the link goes down when both ends'
		 * ledgers allow it (the later of the two). */
		__u32 held = end_floor(me, &t) | end_floor(peer, &t);
		v->ev_flags |= held;
		if (is_owner && held)
			v->ev_pdt = t - busy;
	}
	if (m == MODE_ALWAYS_ON || arrive < t || (!is_owner && arrive < t + hs)) {
		/* A hit, or the peer refuses the request: awake. */
		lk->time_ns[ST_WAKE] += arrive - busy;
		return arrive;
	}
	__u64 ts, tw, down = t + 2 * hs;
	__u32 deepened = 0;
	lowpower(k, m, &ts, &tw);
	lk->time_ns[ST_WAKE] += down - busy;
	__u64 start = sleep_tail(lk->time_ns, k, m, down + ts, arrive, own->hold_ns, &deepened);
	lk->wakeups++;
	lk->deepens += deepened;
	me->wakeups++;
	me->deepens += deepened;
	lk->ready_at_ns = start;
	*missed = 1;
	return start;
}

/* link_step is one packet of end e of a link in link mode, under the
 * link's lock (see "Link mode" above). */
static __always_inline void link_step(struct emu_link *lk, __u32 e, __u64 epoch, __u64 hs, struct pkt *k,
				      struct verdict *v)
{
	__u64 arrive = k->arrive, start;
	__u32 missed = 0;
	bpf_spin_lock(&lk->lock);
	struct emu_end *me = &lk->end[0], *peer = &lk->end[1];
	if (e) {
		me = &lk->end[1];
		peer = &lk->end[0];
	}
	end_enter(me, k, epoch);
	__u64 free = me->free_at_ns, busy = lk->busy_until_ns;
	/* The t_PDT the end's own idle period ran (the link's, raised by a
	 * ledger, when the end owns the timer). */
	v->ev_pdt = me->armed_pdt_ns;
	if (arrive <= busy) {
		/* The link is awake or waking (an end transmits or waits for
		 * the wake-up): the packet waits for its own end's earlier
		 * packets and for the wake-up, nothing more. */
		start = arrive > free ? arrive : free;
		if (lk->ready_at_ns > start) {
			start = lk->ready_at_ns;
			missed = arrive > free;
		}
	} else {
		start = link_idle(lk, me, peer, lk->owner == e, k, hs, v, &missed);
		/* The link's times now run to the packet's start. */
		busy = start;
		lk->busy_until_ns = start;
	}
	if (arrive > free) {
		/* The end's own idle period ends. */
		me->idle_periods++;
		v->ev_gap = arrive - free;
		v->ev_mode = me->armed_mode;
		v->ev_seq = me->idle_periods;
		if (me->armed_mode != MODE_ALWAYS_ON)
			v->ev_flags |= EVENT_SLEEPS;
		if (missed) {
			v->ev_flags |= EVENT_MISSED;
			me->misses++;
			__u64 d = start - arrive;
			me->ledger_spent_ns += d;
			if (k->lrate && arrive < ledger_allow(me->ledger_spent_ns, 0, k->lrate, k->lstart))
				me->ledger_overruns++;
		} else {
			me->hits++;
		}
	} else {
		v->ev_flags = 0;
	}
	__u64 end = start + k->tx;
	if (end > busy) {
		lk->time_ns[ST_WAKE] += end - busy;
		lk->busy_until_ns = end;
	}
	lk->owner = end >= peer->free_at_ns ? e : e ^ 1;
	me->free_at_ns = end;
	me->armed_mode = k->mode;
	me->armed_pdt_ns = k->pdt;
	me->packets++;
	me->bytes += k->len;
	if (arrive > k->now)
		me->tstamp_kept++;
	if (start > k->now) {
		__u64 d = start - k->now;
		me->delayed++;
		me->delay_ns += d;
		if (d > me->delay_max_ns)
			me->delay_max_ns = d;
	}
	if (k->delay == DELAY_SPIN && end > k->now && end - k->now > k->spin_max)
		me->spin_capped++;
	bpf_spin_unlock(&lk->lock);
	v->start = start;
	v->end = end;
}

/* read_pkt reads the packet's inputs and the configuration in force. */
static __always_inline void read_pkt(struct __sk_buff *skb, struct emu_config *cfg, struct pkt *k)
{
	__u64 now = READ_ONCE(cfg->clock_override_ns);
	k->fake = now;
	if (likely(now == 0))
		now = bpf_ktime_get_ns();
	k->now = now;
	/* A packet that already carries a later CLOCK_MONOTONIC departure
	 * time (TCP pacing, SO_TXTIME) is ready only then. */
	k->arrive = now;
	if (skb->tstamp_type == BPF_SKB_CLOCK_MONOTONIC) {
		__u64 own = skb->tstamp;
		if (own > k->arrive)
			k->arrive = own;
	}
	k->len = skb->len;
	__u32 segs = skb->gso_segs;
	if (segs == 0)
		segs = 1;
	k->tx = (((__u64)k->len + (__u64)WIRE_OVERHEAD * segs) * READ_ONCE(cfg->ns_per_byte_q16)) >> 16;

	/* What the idle period after this packet will use. */
	k->mode = READ_ONCE(cfg->mode);
	__u32 flags = READ_ONCE(cfg->flags);
	if ((flags & (FLAG_EEE_ENABLED | FLAG_TX_LPI_ENABLED)) != (FLAG_EEE_ENABLED | FLAG_TX_LPI_ENABLED))
		k->mode = MODE_ALWAYS_ON;
	k->pdt = READ_ONCE(cfg->pdt_ns);
	k->s_fw = READ_ONCE(cfg->sleep_fw_ns);
	k->w_fw = READ_ONCE(cfg->wake_fw_ns);
	k->s_ds = READ_ONCE(cfg->sleep_ds_ns);
	k->w_ds = READ_ONCE(cfg->wake_ds_ns);
	k->hold = READ_ONCE(cfg->hold_ns);
	k->delay = READ_ONCE(cfg->delay);
	k->spin_max = READ_ONCE(cfg->spin_max_ns);
	k->lon = READ_ONCE(cfg->ledger);
	k->lrate = READ_ONCE(cfg->ledger_rate_q32);
	k->lres = READ_ONCE(cfg->ledger_reserve_ns);
	k->lstart = READ_ONCE(cfg->ledger_start_ns);
	if (k->lrate > (1ULL << 32))
		k->lrate = 1ULL << 32;
}

/* egress is the program of one packet, per direction or, with link set,
 * in link mode (two programs: each verifies only its own path). */
static __always_inline int egress(struct __sk_buff *skb, int link)
{
	__u32 key = 0;
	struct emu_config *cfg = bpf_map_lookup_elem(&config, &key);
	struct emu_state *st = bpf_map_lookup_elem(&state, &key);
	if (!cfg || !st)
		return LPI_ACT_CONTINUE;
	struct pkt k = {};
	struct verdict v = {};
	read_pkt(skb, cfg, &k);
	if (link) {
		struct emu_link *lk = bpf_map_lookup_elem(&lpi_link, &key);
		if (!lk)
			return LPI_ACT_CONTINUE;
		link_step(lk, cfg->link_end & 1, cfg->attached_ns, cfg->handshake_ns, &k, &v);
	} else {
		dir_step(st, &k, &v);
	}

	if (v.ev_gap) {
		struct emu_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (likely(e)) {
			e->end_ns = k.arrive;
			e->gap_ns = v.ev_gap;
			e->pdt_ns = v.ev_pdt;
			e->delay_ns = v.start - k.arrive;
			e->seq = v.ev_seq;
			e->flags = v.ev_flags;
			e->mode = v.ev_mode;
			bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		} else {
			__sync_fetch_and_add(&st->events_lost, 1);
		}
	}

	__u64 now = k.now, end = v.end;
	if (end > now) {
		if (k.delay == DELAY_EDT) {
			/* A CLOCK_MONOTONIC delivery time: fq holds the packet
			 * until then, and the kernel keeps it as a delivery time
			 * (not a receive timestamp) across namespaces. The helper
			 * takes IPv4 and IPv6 only; other packets get the time
			 * written directly. */
			if (bpf_skb_set_tstamp(skb, end, BPF_SKB_CLOCK_MONOTONIC) < 0)
				skb->tstamp = end;
		} else if (k.delay == DELAY_SPIN && k.fake == 0) {
			/* Wait here, on this CPU, until the departure time. */
			struct spin_ctx sc = {.until = end - now > k.spin_max ? now + k.spin_max : end};
			bpf_loop(SPIN_MAX_LOOPS, spin_step, &sc, 0);
		}
	}
	return LPI_ACT_CONTINUE;
}

/* A port per direction (emu_config.lpi = LPI_DIRECTION). */
SEC("tc")
int eee_egress(struct __sk_buff *skb)
{
	return egress(skb, 0);
}

/* An end of a link in link mode (emu_config.lpi = LPI_LINK). */
SEC("tc")
int eee_egress_link(struct __sk_buff *skb)
{
	return egress(skb, 1);
}

char __license[] SEC("license") = "Dual MIT/GPL";
