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

/* Only the first field of struct __sk_buff is read; the UAPI guarantees it. */
struct __sk_buff {
	__u32 len;
};

/* enum bpf_map_type */
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_RINGBUF 27

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

#endif
