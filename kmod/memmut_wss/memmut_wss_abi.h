/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * memmut-wss: the user-visible ABI of memmut's accessed-bit sampling helper.
 *
 * The module creates the misc character device /dev/memmut_wss. A client
 * opens it and issues two ioctls:
 *
 *   MEMMUT_WSS_IOC_INFO  fills struct memmut_wss_info: the ABI version, the
 *                        most pages one scan may test, feature bits.
 *   MEMMUT_WSS_IOC_SCAN  test-and-clears the accessed state of a set of
 *                        pages of one process (struct memmut_wss_scan).
 *
 * Versioning: a client first reads the info and refuses to go on unless
 * abi_version is the one it was written for. Within one abi_version the
 * structures only grow at their end, and SCAN's `size` tells the module
 * which layout the caller uses (a smaller or larger, unknown size: EINVAL).
 *
 * The layout is the same for 32- and 64-bit callers (user pointers are
 * carried in __u64 fields), so no compat translation is needed.
 *
 * doc/source/kmod.rst describes the protocol and its errors in prose.
 */
#ifndef MEMMUT_WSS_ABI_H
#define MEMMUT_WSS_ABI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MEMMUT_WSS_ABI_VERSION 1
#define MEMMUT_WSS_DEVICE "memmut_wss"     /* /dev/memmut_wss */
#define MEMMUT_WSS_MAX_PAGES 65536U        /* pages per SCAN call, at most */

/* memmut_wss_info.features */
#define MEMMUT_WSS_F_SECONDARY_MMU (1U << 0) /* notifier path resolved */
#define MEMMUT_WSS_F_TLB_FLUSH     (1U << 1) /* host TLB flushed after clear */
#define MEMMUT_WSS_F_THP           (1U << 2) /* huge PMDs are handled */

struct memmut_wss_info {
	__u32 abi_version;      /* MEMMUT_WSS_ABI_VERSION */
	__u32 max_pages;        /* MEMMUT_WSS_MAX_PAGES */
	__u32 features;         /* MEMMUT_WSS_F_* */
	__u32 reserved;         /* 0 */
};

/* memmut_wss_scan.flags (in) */
#define MEMMUT_WSS_SCAN_RANDOM   (1U << 0) /* module picks the pages */
#define MEMMUT_WSS_SCAN_NO_FLUSH (1U << 1) /* skip the host TLB flush */
#define MEMMUT_WSS_SCAN_FLAGS    (MEMMUT_WSS_SCAN_RANDOM | \
				  MEMMUT_WSS_SCAN_NO_FLUSH)

/* memmut_wss_scan.out_flags (out) */
#define MEMMUT_WSS_OUT_NOTIFIERS (1U << 0) /* the mm has MMU notifiers (e.g.
					    * KVM): the secondary MMU was
					    * asked too */
#define MEMMUT_WSS_OUT_FLUSHED   (1U << 1) /* host TLB flushed */

/* one byte per tested page in *results (out) */
#define MEMMUT_WSS_P_ACCESSED  (1U << 0) /* accessed since the last clear */
#define MEMMUT_WSS_P_PRESENT   (1U << 1) /* mapped (a present PTE/PMD) */
#define MEMMUT_WSS_P_HUGE      (1U << 2) /* mapped by a huge PMD */
#define MEMMUT_WSS_P_SECONDARY (1U << 3) /* the secondary MMU said young */
#define MEMMUT_WSS_P_UNMAPPED  (1U << 4) /* no usable mapping any more */

/*
 * One scan: for each of `count` page addresses of process `pid`, all in
 * [start, end) and strictly ascending, test and clear the accessed bit of
 * the host PTE (or huge PMD) and, when the process's mm has MMU notifiers,
 * of the secondary MMU (mmu_notifier_clear_young). A page is "accessed" if
 * either said young. With MEMMUT_WSS_SCAN_RANDOM the module picks the
 * pages (one uniformly random page in each of `count` equal slices of the
 * range, so ascending and distinct; count <= pages in the range) and
 * writes them to *addrs; pass them back, without the flag, at the end of
 * the interval to read which were accessed meanwhile.
 *
 * [start, end) must lie in one mapping of the process when the call
 * starts. The work is done in batches, dropping the process's mmap lock
 * between them: pages unmapped meanwhile are reported P_UNMAPPED, a
 * process that exits meanwhile ends the call with ESRCH.
 *
 * Errors (ioctl returns -1, errno): EINVAL bad size/flags/range/order/
 * alignment, count 0 or above the pages of the range (RANDOM); E2BIG count
 * above max_pages; ESRCH no such pid, a kernel thread, or the process
 * exited during the call; ENXIO the range is not inside one mapping, or
 * that mapping cannot be sampled (hugetlbfs, PFN/IO mappings); EFAULT bad
 * pointers; EINTR a fatal signal; ENOTTY unknown ioctl.
 */
struct memmut_wss_scan {
	__u32 size;             /* in: sizeof(struct memmut_wss_scan) */
	__u32 flags;            /* in: MEMMUT_WSS_SCAN_* */
	__s32 pid;              /* in: in the caller's pid namespace */
	__u32 count;            /* in: pages to test */
	__u64 start;            /* in: page-aligned */
	__u64 end;              /* in: page-aligned, > start */
	__u64 addrs;            /* in (out with RANDOM): __u64[count] */
	__u64 results;          /* out: __u8[count] MEMMUT_WSS_P_*, or 0 */
	__u32 done;             /* out: pages tested (count on success) */
	__u32 accessed;         /* out: pages with P_ACCESSED */
	__u32 present;          /* out: pages with P_PRESENT */
	__u32 huge;             /* out: pages with P_HUGE */
	__u32 secondary;        /* out: pages with P_SECONDARY */
	__u32 out_flags;        /* out: MEMMUT_WSS_OUT_* */
};

#define MEMMUT_WSS_IOC_MAGIC 0xE7
#define MEMMUT_WSS_IOC_INFO _IOR(MEMMUT_WSS_IOC_MAGIC, 1, struct memmut_wss_info)
#define MEMMUT_WSS_IOC_SCAN _IOWR(MEMMUT_WSS_IOC_MAGIC, 2, \
				  struct memmut_wss_scan)

#endif /* MEMMUT_WSS_ABI_H */
