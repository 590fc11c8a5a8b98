/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Minimal, self-contained definitions for lpictl's eBPF programs, written for
 * this project so that `go generate` needs only clang (no kernel or libbpf
 * headers, no per-architecture include paths). Values are from the stable
 * Linux UAPI (include/uapi/linux/bpf.h, pkt_cls.h).
 */
#ifndef LPI_BPF_H
#define LPI_BPF_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef long long __s64;

#define __bpf_md_ptr(type, name) \
	union {                      \
		type name;           \
		__u64 : 64;          \
	} __attribute__((aligned(8)))

/* struct __sk_buff as in the UAPI (the verifier rewrites accesses by
 * offset, so the layout must match it exactly up to the last field read).
 * idlegap reads len; eeeemu also reads gso_segs, tstamp and tstamp_type. */
struct __sk_buff {
	__u32 len;
	__u32 pkt_type;
	__u32 mark;
	__u32 queue_mapping;
	__u32 protocol;
	__u32 vlan_present;
	__u32 vlan_tci;
	__u32 vlan_proto;
	__u32 priority;
	__u32 ingress_ifindex;
	__u32 ifindex;
	__u32 tc_index;
	__u32 cb[5];
	__u32 hash;
	__u32 tc_classid;
	__u32 data;
	__u32 data_end;
	__u32 napi_id;
	__u32 family;
	__u32 remote_ip4;
	__u32 local_ip4;
	__u32 remote_ip6[4];
	__u32 local_ip6[4];
	__u32 remote_port;
	__u32 local_port;
	__u32 data_meta;
	__bpf_md_ptr(void *, flow_keys);
	__u64 tstamp;
	__u32 wire_len;
	__u32 gso_segs;
	__bpf_md_ptr(void *, sk);
	__u32 gso_size;
	__u8 tstamp_type;
	__u32 : 24;
	__u64 hwtstamp;
};

_Static_assert(__builtin_offsetof(struct __sk_buff, tstamp) == 152, "__sk_buff layout");
_Static_assert(__builtin_offsetof(struct __sk_buff, gso_segs) == 164, "__sk_buff layout");
_Static_assert(__builtin_offsetof(struct __sk_buff, tstamp_type) == 180, "__sk_buff layout");
_Static_assert(sizeof(struct __sk_buff) == 192, "__sk_buff layout");

/* The verifier finds the lock in a map value by this BTF name. */
struct bpf_spin_lock {
	__u32 val;
};

/* map_flags */
#define BPF_F_MMAPABLE (1U << 10)

/* enum bpf_map_type */
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_RINGBUF 27

/* bpf_skb_set_tstamp tstamp_type (UAPI enum: BPF_SKB_TSTAMP_DELIVERY_MONO,
 * renamed BPF_SKB_CLOCK_MONOTONIC in Linux 6.11, same value) and the
 * __sk_buff->tstamp_type of a CLOCK_MONOTONIC delivery time. */
#define BPF_SKB_CLOCK_MONOTONIC 1

/* bpf_ringbuf_output / bpf_ringbuf_submit flags */
#define BPF_RB_NO_WAKEUP (1ULL << 0)

/* TC_ACT_UNSPEC (cls_bpf direct-action) and TCX_NEXT share the value -1:
 * "no verdict, continue with the next program / the default action". */
#define LPI_ACT_CONTINUE (-1)

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

/* Helper functions by their stable UAPI numbers. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, __u64 size, __u64 flags) = (void *)130;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size, __u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)132;
static long (*bpf_spin_lock)(struct bpf_spin_lock *lock) = (void *)93;
static long (*bpf_spin_unlock)(struct bpf_spin_lock *lock) = (void *)94;
static long (*bpf_loop)(__u32 nr_loops, void *callback_fn, void *callback_ctx, __u64 flags) = (void *)181;
static long (*bpf_skb_set_tstamp)(struct __sk_buff *skb, __u64 tstamp, __u32 tstamp_type) = (void *)192;

#endif
