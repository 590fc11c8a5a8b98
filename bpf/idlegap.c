//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * idlegap: per-interface idle-gap observation for lpictl (see docs/hwlink.md).
 *
 * Attached at TCX (or clsact/cls_bpf) egress and optionally ingress of one
 * interface. For every packet it advances a model of the transmitter:
 *
 *   start = max(now, last_end); last_end = start + wire_len * ns_per_byte
 *
 * A packet that finds now > last_end ends an idle gap of now - last_end: the
 * gap is counted, added to a log-linear histogram and, when it is at least
 * sample_floor_ns long, written to the ring buffer as an exact sample.
 *
 * The program never drops or alters traffic: it always returns -1
 * (TCX_NEXT / TC_ACT_UNSPEC).
 */
#include "headers/lpi_bpf.h"

#define DIR_EGRESS 0
#define DIR_INGRESS 1

/* Log-linear histogram: values 0..7 ns have their own bucket; above, every
 * power of two [2^e, 2^(e+1)) is split into 8 equal sub-buckets (12.5 %
 * relative width). Bucket of v (e = floor(log2 v) >= 3):
 *   (e - 2) * 8 + ((v >> (e - 3)) & 7).
 * e = 63 gives the last bucket, 495. Mirrored by hwlink.HistBucketBounds. */
#define HIST_SUB_BITS 3
#define HIST_BUCKETS 496

/* Ethernet preamble+SFD (8), FCS (4) and minimum inter-frame gap (12): bytes
 * on the wire that skb->len (which includes the MAC header) leaves out. */
#define WIRE_OVERHEAD 24

/* Per direction, in two maps (same value type, so that the layout is
 * defined once):
 *  - state (ARRAY, shared by all CPUs): only last_end_ns is used. It models
 *    the one transmitter of the port, so every CPU must see every update: it
 *    is advanced by compare-and-swap. The rest of the value stays zero (it
 *    also keeps the two directions' clocks on different cache lines).
 *  - stats (PERCPU_ARRAY): the counters and the histogram. Each CPU owns its
 *    copy and increments it without atomics: the TC hooks run with bottom
 *    halves disabled, so the program is not re-entered for the same
 *    direction on one CPU. last_end_ns is unused there. User space sums the
 *    copies.
 * User space reads without a lock: each counter is consistent (8-byte
 * copies), the set is not a snapshot. */
struct dir_state {
	__u64 last_end_ns;  /* estimated end of the last transmission (state only) */
	__u64 packets;      /* packets seen */
	__u64 bytes;        /* skb->len summed */
	__u64 gaps;         /* packets that found the link idle (one idle gap each) */
	__u64 busy;         /* packets that found the link still transmitting */
	__u64 idle_ns;      /* sum of all idle gaps */
	__u64 samples;      /* gaps written to the ring buffer */
	__u64 samples_lost; /* gaps >= floor that did not fit into the ring buffer */
	__u64 races;        /* packets whose clock update lost CAS_TRIES races (not measured) */
	__u64 hist[HIST_BUCKETS];
};

struct gap_sample {
	__u64 end_ns; /* CLOCK_MONOTONIC time the gap ended (the packet arrived) */
	__u64 gap_ns; /* length of the idle gap */
	__u32 dir;    /* DIR_EGRESS or DIR_INGRESS */
	__u32 len;    /* skb->len of the packet that ended the gap */
};

/* Keeps struct gap_sample in BTF so bpf2go generates its Go type. */
const struct gap_sample *unused_gap_sample __attribute__((unused));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct dir_state);
} state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct dir_state);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18); /* user space may resize before loading */
} samples SEC(".maps");

/* Configuration written by user space (memory-mapped .bss). */
/* Nanoseconds per wire byte in Q16 fixed point: 8e9 * 65536 / speed_bps.
 * 0 = speed unknown: transmissions are taken to take no time, so gaps are
 * measured between packet arrivals at the hook. */
volatile __u64 ns_per_byte_q16;
/* Gaps of at least this many ns go to the ring buffer. 0 = every gap. */
volatile __u64 sample_floor_ns;

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

static __always_inline __u32 hist_bucket(__u64 v)
{
	if (v < (1 << HIST_SUB_BITS))
		return (__u32)v;
	__u32 e = log2_u64(v);
	__u32 sub = (__u32)(v >> (e - HIST_SUB_BITS)) & ((1 << HIST_SUB_BITS) - 1);
	return (e - (HIST_SUB_BITS - 1)) * (1 << HIST_SUB_BITS) + sub;
}

#define CAS_TRIES 4

/* Cost per packet (docs/hwlink.md): bpf_ktime_get_ns, a real helper call,
 * is most of it. Both map lookups are inlined by the verifier, the counters
 * are plain per-CPU increments, the only atomic is the CAS on the shared
 * clock, and each volatile setting is read once. Samples are written in
 * place (bpf_ringbuf_reserve/submit, no copy through the stack). */
static __always_inline int observe(struct __sk_buff *skb, __u32 dir)
{
	__u32 key = dir;
	struct dir_state *sh = bpf_map_lookup_elem(&state, &key);
	struct dir_state *st = bpf_map_lookup_elem(&stats, &key);
	if (!sh || !st)
		return LPI_ACT_CONTINUE;

	__u32 len = skb->len;
	__u64 tx_ns = ((__u64)(len + WIRE_OVERHEAD) * ns_per_byte_q16) >> 16;
	__u64 now = bpf_ktime_get_ns();
	__u64 last = *(volatile __u64 *)&sh->last_end_ns;

	st->packets++;
	st->bytes += len;
#pragma unroll
	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 start = now > last ? now : last;
		__u64 seen = __sync_val_compare_and_swap(&sh->last_end_ns, last, start + tx_ns);
		if (seen == last)
			goto won;
		last = seen;
	}
	st->races++;
	return LPI_ACT_CONTINUE;

won:
	if (now <= last) {
		st->busy++;
		return LPI_ACT_CONTINUE;
	}
	if (unlikely(last == 0))
		return LPI_ACT_CONTINUE; /* first packet: no gap to measure yet */

	__u64 gap = now - last;
	__u32 b = hist_bucket(gap);
	if (b >= HIST_BUCKETS) /* cannot happen (max 495); bounds for the verifier */
		b = HIST_BUCKETS - 1;
	st->gaps++;
	st->idle_ns += gap;
	st->hist[b]++;

	if (gap >= sample_floor_ns) {
		/* No wake-up: user space drains by polling. */
		struct gap_sample *s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
		if (likely(s)) {
			s->end_ns = now;
			s->gap_ns = gap;
			s->dir = dir;
			s->len = len;
			bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
			st->samples++;
		} else {
			st->samples_lost++;
		}
	}
	return LPI_ACT_CONTINUE;
}

SEC("tc")
int lpi_egress(struct __sk_buff *skb)
{
	return observe(skb, DIR_EGRESS);
}

SEC("tc")
int lpi_ingress(struct __sk_buff *skb)
{
	return observe(skb, DIR_INGRESS);
}

char __license[] SEC("license") = "Dual MIT/GPL";
