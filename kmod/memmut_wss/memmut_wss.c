// SPDX-License-Identifier: GPL-2.0
/*
 * memmut-wss: sampled accessed-bit scans of a process's address range,
 * host page tables and secondary MMU (KVM) alike, for memmut's agent.
 *
 * The protocol is in memmut_wss_abi.h; the design, the permissions and the
 * limits are in doc/source/kmod.rst.
 *
 * How one page is tested (with the process's mmap lock held for reading):
 * walk pgd/p4d/pud/pmd; a huge PMD is tested and cleared under its PMD
 * lock (once per call: every sampled sub-page of it gets that result), a
 * PTE under its PTE lock. When the mm has MMU notifiers (KVM registers
 * one per VM), mmu_notifier_clear_young() is called for the same range
 * under the same lock, as the kernel's idle page tracking does, and its
 * answer is ORed in: under EPT/NPT the guest's accesses set the accessed
 * bits of KVM's secondary page tables only.
 *
 * Two functions used here are not exported to modules on 6.1:
 * __mmu_notifier_clear_young() (mmu_notifier_clear_young() is an inline
 * wrapper around it) and flush_tlb_mm_range(). Their addresses are looked
 * up once at load time by registering (and at once unregistering) a kprobe
 * on each name, then checked with sprint_symbol(); the module refuses to
 * load when either cannot be found. Their prototypes are the ones of the
 * 6.1 headers the module is built against.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/kallsyms.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/pgtable.h>
#include <linux/pid.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/huge_mm.h>
#include <linux/hugetlb.h>
#include <linux/fs.h>
#include <asm/tlbflush.h>

#include "memmut_wss_abi.h"

#define WSS_BATCH 256           /* pages per mmap-lock hold */

static ushort mode = 0600;
module_param(mode, ushort, 0444);
MODULE_PARM_DESC(mode, "permissions of /dev/memmut_wss (default 0600; "
		 "the shipped udev rule gives it to the agent's group)");

static char *require_symbol;
module_param(require_symbol, charp, 0444);
MODULE_PARM_DESC(require_symbol, "for tests: one more kernel function to "
		 "resolve at load time (a missing one makes the load fail, "
		 "as a missing needed function does)");

/* resolved at load time: see the header comment */
typedef int (*clear_young_fn)(struct mm_struct *mm, unsigned long start,
			      unsigned long end);
typedef void (*flush_range_fn)(struct mm_struct *mm, unsigned long start,
			       unsigned long end, unsigned int stride_shift,
			       bool freed_tables);
static clear_young_fn wss_notifier_clear_young;
static flush_range_fn wss_flush_tlb_range;

static atomic_t wss_last_logged_pid = ATOMIC_INIT(0);

struct wss_call {
	struct mm_struct *mm;
	struct pid *pid;
	bool notifiers;
	bool flush;
	unsigned long huge_addr;        /* PMD-aligned; ULONG_MAX: none */
	u8 huge_result;
	unsigned long flush_lo, flush_hi;
	struct memmut_wss_scan out;
};

static unsigned long wss_resolve(const char *name)
{
	struct kprobe kp = { .symbol_name = name };
	char buf[KSYM_SYMBOL_LEN];
	unsigned long addr, off, len;
	size_t n = strlen(name);
	int ret;

	ret = register_kprobe(&kp);
	if (ret < 0) {
		pr_err("cannot resolve %s: register_kprobe: %d\n", name, ret);
		return 0;
	}
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	/*
	 * kprobes may place the probe past the function's first instruction
	 * (an ENDBR64 with IBT): step back to the symbol's start, and check
	 * that the address really is the function asked for.
	 */
	sprint_symbol(buf, addr);
	if (strncmp(buf, name, n) || buf[n] != '+' ||
	    sscanf(buf + n, "+%lx/%lx", &off, &len) != 2 || off >= len) {
		pr_err("cannot resolve %s: its kprobe address is %s\n", name,
		       buf);
		return 0;
	}
	return addr - off;
}

/* -- one page ------------------------------------------------------------ */

static bool wss_vma_ok(struct vm_area_struct *vma)
{
	return !(vma->vm_flags & (VM_PFNMAP | VM_IO)) &&
	       !is_vm_hugetlb_page(vma);
}

static void wss_flush_note(struct wss_call *c, unsigned long lo,
			   unsigned long hi)
{
	if (lo < c->flush_lo)
		c->flush_lo = lo;
	if (hi > c->flush_hi)
		c->flush_hi = hi;
}

static u8 wss_notify(struct wss_call *c, unsigned long lo, unsigned long hi)
{
	if (!c->notifiers)
		return 0;
	return wss_notifier_clear_young(c->mm, lo, hi) ?
		MEMMUT_WSS_P_ACCESSED | MEMMUT_WSS_P_SECONDARY : 0;
}

static u8 wss_test_huge(struct wss_call *c, pmd_t *pmd, unsigned long addr,
			bool *done)
{
	unsigned long haddr = addr & HPAGE_PMD_MASK;
	spinlock_t *ptl;
	u8 r = 0;

	*done = true;
	if (c->huge_addr == haddr)
		return c->huge_result;
	ptl = pmd_lock(c->mm, pmd);
	if (!pmd_trans_huge(*pmd) || !pmd_present(*pmd)) {
		spin_unlock(ptl);       /* split or zapped meanwhile */
		*done = false;
		return 0;
	}
	r = MEMMUT_WSS_P_PRESENT | MEMMUT_WSS_P_HUGE;
	if (pmd_young(*pmd) &&
	    test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)pmd)) {
		r |= MEMMUT_WSS_P_ACCESSED;
		wss_flush_note(c, haddr, haddr + HPAGE_PMD_SIZE);
	}
	r |= wss_notify(c, haddr, haddr + HPAGE_PMD_SIZE);
	spin_unlock(ptl);
	c->huge_addr = haddr;
	c->huge_result = r;
	return r;
}

static u8 wss_test_page(struct wss_call *c, unsigned long addr)
{
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud, pudval;
	pmd_t *pmd, pmdval;
	pte_t *pte;
	spinlock_t *ptl;
	u8 r = 0;

	pgd = pgd_offset(c->mm, addr);
	/* never "clear bad" entries as the core walkers do: only look */
	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return 0;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return 0;
	pud = pud_offset(p4d, addr);
	pudval = READ_ONCE(*pud);
	if (pud_none(pudval) || !pud_present(pudval) || pud_leaf(pudval))
		return 0;               /* 1 GiB leaves: DAX/hugetlb only */
	pmd = pmd_offset(pud, addr);
	pmdval = pmd_read_atomic(pmd);
	barrier();
	if (pmd_trans_huge(pmdval) || pmd_devmap(pmdval)) {
		bool done;

		r = wss_test_huge(c, pmd, addr, &done);
		if (done)
			return r;
	}
	/*
	 * A PTE table. The caller found addr inside a VMA under the mmap
	 * read lock, so the table cannot be freed under us: 6.1 frees page
	 * tables only for ranges whose VMAs were detached (with the lock
	 * held for writing; munmap may free them after downgrading to read,
	 * but never tables a still-attached VMA uses), as page faults rely
	 * on too. Its contents can change: hence the PTE lock.
	 */
	pmdval = pmd_read_atomic(pmd);
	barrier();
	if (pmd_none(pmdval) || !pmd_present(pmdval) ||
	    pmd_trans_huge(pmdval) || pmd_devmap(pmdval) || pmd_bad(pmdval))
		return 0;       /* none, migrating, bad, or huge again: racing */
	pte = pte_offset_map_lock(c->mm, pmd, addr, &ptl);
	if (pte_present(*pte)) {
		r = MEMMUT_WSS_P_PRESENT;
		if (pte_young(*pte) &&
		    test_and_clear_bit(_PAGE_BIT_ACCESSED,
				       (unsigned long *)&pte->pte)) {
			r |= MEMMUT_WSS_P_ACCESSED;
			wss_flush_note(c, addr, addr + PAGE_SIZE);
		}
		r |= wss_notify(c, addr, addr + PAGE_SIZE);
	}
	pte_unmap_unlock(pte, ptl);
	return r;
}

/* -- one call ------------------------------------------------------------- */

static bool wss_alive(struct wss_call *c)
{
	struct task_struct *task;
	bool alive;

	rcu_read_lock();
	task = pid_task(c->pid, PIDTYPE_PID);
	alive = task && !(READ_ONCE(task->flags) & PF_EXITING) &&
		READ_ONCE(task->mm) == c->mm &&
		!test_bit(MMF_UNSTABLE, &c->mm->flags);
	rcu_read_unlock();
	return alive;
}

/* pages of the batch, from the caller or picked at random */
static int wss_batch_addrs(struct memmut_wss_scan *s, u32 i, u32 n,
			   u64 *addrs, u64 *prev, struct rnd_state *rnd)
{
	u32 j;

	if (s->flags & MEMMUT_WSS_SCAN_RANDOM) {
		u64 first = s->start >> PAGE_SHIFT;
		u64 npages = (s->end - s->start) >> PAGE_SHIFT;

		for (j = 0; j < n; j++) {
			u64 lo = npages * (i + j) / s->count;
			u64 hi = npages * (i + j + 1) / s->count;
			u64 r = ((u64)prandom_u32_state(rnd) << 32) |
				prandom_u32_state(rnd);
			u64 pick = r % (hi - lo);   /* bias < 2^-28 */

			addrs[j] = (first + lo + pick) << PAGE_SHIFT;
		}
		return 0;
	}
	if (copy_from_user(addrs, u64_to_user_ptr(s->addrs + 8ULL * i),
			   sizeof(u64) * n))
		return -EFAULT;
	for (j = 0; j < n; j++) {
		if (addrs[j] & ~PAGE_MASK || addrs[j] < s->start ||
		    addrs[j] >= s->end || (*prev != ~0ULL &&
					   addrs[j] <= *prev))
			return -EINVAL;
		*prev = addrs[j];
	}
	return 0;
}

static int wss_run(struct wss_call *c, struct memmut_wss_scan *s)
{
	u64 *addrs;
	u8 *res;
	u64 prev = ~0ULL;
	u32 i, j, n;
	int ret = 0;
	struct rnd_state rnd;

	/*
	 * The random picks come from a per-call PRNG seeded from the CRNG:
	 * plenty for sampling, and far cheaper than get_random_*() per page.
	 */
	prandom_seed_state(&rnd, get_random_u64());

	addrs = kmalloc_array(WSS_BATCH, sizeof(*addrs), GFP_KERNEL);
	res = kmalloc(WSS_BATCH, GFP_KERNEL);
	if (!addrs || !res) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < s->count; i += n) {
		struct vm_area_struct *vma = NULL;

		n = min_t(u32, s->count - i, WSS_BATCH);
		ret = wss_batch_addrs(s, i, n, addrs, &prev, &rnd);
		if (ret)
			break;
		if (!wss_alive(c)) {
			ret = -ESRCH;
			break;
		}
		if (mmap_read_lock_killable(c->mm)) {
			ret = -EINTR;
			break;
		}
		c->flush_lo = ULONG_MAX;
		c->flush_hi = 0;
		for (j = 0; j < n; j++) {
			unsigned long addr = addrs[j];

			if (!vma || addr < vma->vm_start ||
			    addr >= vma->vm_end) {
				vma = find_vma(c->mm, addr);
				if (vma && (addr < vma->vm_start ||
					    !wss_vma_ok(vma)))
					vma = NULL;
			}
			res[j] = vma ? wss_test_page(c, addr) :
				MEMMUT_WSS_P_UNMAPPED;
			c->out.accessed += !!(res[j] & MEMMUT_WSS_P_ACCESSED);
			c->out.present += !!(res[j] & MEMMUT_WSS_P_PRESENT);
			c->out.huge += !!(res[j] & MEMMUT_WSS_P_HUGE);
			c->out.secondary += !!(res[j] &
					       MEMMUT_WSS_P_SECONDARY);
		}
		if (c->flush && c->flush_lo < c->flush_hi) {
			wss_flush_tlb_range(c->mm, c->flush_lo, c->flush_hi,
					    PAGE_SHIFT, false);
			c->out.out_flags |= MEMMUT_WSS_OUT_FLUSHED;
		}
		mmap_read_unlock(c->mm);
		c->out.done += n;
		if ((s->flags & MEMMUT_WSS_SCAN_RANDOM) &&
		    copy_to_user(u64_to_user_ptr(s->addrs + 8ULL * i), addrs,
				 sizeof(u64) * n)) {
			ret = -EFAULT;
			break;
		}
		if (s->results &&
		    copy_to_user(u64_to_user_ptr(s->results + i), res, n)) {
			ret = -EFAULT;
			break;
		}
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
out:
	kfree(res);
	kfree(addrs);
	return ret;
}

static int wss_check_range(struct wss_call *c, struct memmut_wss_scan *s)
{
	struct vm_area_struct *vma;
	int ret = 0;

	if (mmap_read_lock_killable(c->mm))
		return -EINTR;
	vma = find_vma(c->mm, s->start);
	if (!vma || vma->vm_start > s->start || vma->vm_end < s->end ||
	    !wss_vma_ok(vma))
		ret = -ENXIO;
	/* KVM registers its notifier on the QEMU mm: read under the lock */
	c->notifiers = mm_has_notifiers(c->mm);
	mmap_read_unlock(c->mm);
	return ret;
}

static long wss_scan(struct memmut_wss_scan __user *uarg)
{
	struct memmut_wss_scan s;
	struct wss_call c = { .huge_addr = ULONG_MAX };
	struct task_struct *task;
	u64 npages;
	int ret;

	if (copy_from_user(&s, uarg, sizeof(s)))
		return -EFAULT;
	if (s.size != sizeof(s) || s.flags & ~MEMMUT_WSS_SCAN_FLAGS)
		return -EINVAL;
	if (s.count > MEMMUT_WSS_MAX_PAGES)
		return -E2BIG;
	if (!s.count || s.start & ~PAGE_MASK || s.end & ~PAGE_MASK ||
	    s.start >= s.end || s.end > TASK_SIZE_MAX || !s.addrs)
		return -EINVAL;
	npages = (s.end - s.start) >> PAGE_SHIFT;
	if ((s.flags & MEMMUT_WSS_SCAN_RANDOM) && s.count > npages)
		return -EINVAL;
	if (s.pid <= 0)
		return -ESRCH;

	c.pid = find_get_pid(s.pid);
	if (!c.pid)
		return -ESRCH;
	task = get_pid_task(c.pid, PIDTYPE_PID);
	if (!task) {
		ret = -ESRCH;
		goto put_pid;
	}
	c.mm = get_task_mm(task);       /* NULL for kernel threads */
	put_task_struct(task);
	if (!c.mm) {
		ret = -ESRCH;
		goto put_pid;
	}
	c.flush = !(s.flags & MEMMUT_WSS_SCAN_NO_FLUSH);
	ret = wss_check_range(&c, &s);
	if (ret)
		goto put_mm;
	if (c.notifiers) {
		c.out.out_flags |= MEMMUT_WSS_OUT_NOTIFIERS;
	} else if (atomic_xchg(&wss_last_logged_pid, s.pid) != s.pid) {
		pr_info_ratelimited("pid %d has no MMU notifier: host page "
				    "tables only (no secondary MMU, e.g. no "
				    "KVM guest, to ask)\n", s.pid);
	}
	ret = wss_run(&c, &s);
put_mm:
	mmput(c.mm);
put_pid:
	put_pid(c.pid);
	/* the counters, also after a failure part-way (done says how far) */
	s.done = c.out.done;
	s.accessed = c.out.accessed;
	s.present = c.out.present;
	s.huge = c.out.huge;
	s.secondary = c.out.secondary;
	s.out_flags = c.out.out_flags;
	if (copy_to_user(uarg, &s, sizeof(s)) && !ret)
		ret = -EFAULT;
	return ret;
}

static long wss_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct memmut_wss_info info = {
		.abi_version = MEMMUT_WSS_ABI_VERSION,
		.max_pages = MEMMUT_WSS_MAX_PAGES,
		.features = MEMMUT_WSS_F_SECONDARY_MMU | MEMMUT_WSS_F_TLB_FLUSH |
			    (IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) ?
			     MEMMUT_WSS_F_THP : 0),
	};

	switch (cmd) {
	case MEMMUT_WSS_IOC_INFO:
		if (copy_to_user((void __user *)arg, &info, sizeof(info)))
			return -EFAULT;
		return 0;
	case MEMMUT_WSS_IOC_SCAN:
		return wss_scan((struct memmut_wss_scan __user *)arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations wss_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = wss_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice wss_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = MEMMUT_WSS_DEVICE,
	.fops = &wss_fops,
};

static int __init wss_init(void)
{
	int ret;

	wss_notifier_clear_young =
		(clear_young_fn)wss_resolve("__mmu_notifier_clear_young");
	wss_flush_tlb_range = (flush_range_fn)wss_resolve("flush_tlb_mm_range");
	if (!wss_notifier_clear_young || !wss_flush_tlb_range ||
	    (require_symbol && !wss_resolve(require_symbol))) {
		pr_err("refusing to load: a kernel function it needs could not "
		       "be found (kernel built without CONFIG_KPROBES, or the "
		       "function was renamed/inlined); see memmut's "
		       "doc/source/kmod.rst\n");
		return -ENOENT;
	}
	wss_dev.mode = mode & 0777;
	ret = misc_register(&wss_dev);
	if (ret) {
		pr_err("misc_register: %d\n", ret);
		return ret;
	}
	pr_info("ABI %d, /dev/%s mode %04o, max %u pages a call; secondary "
		"MMU via __mmu_notifier_clear_young at %pS, TLB flush via %pS\n",
		MEMMUT_WSS_ABI_VERSION, MEMMUT_WSS_DEVICE, wss_dev.mode,
		MEMMUT_WSS_MAX_PAGES, wss_notifier_clear_young,
		wss_flush_tlb_range);
	return 0;
}

static void __exit wss_exit(void)
{
	misc_deregister(&wss_dev);
}

module_init(wss_init);
module_exit(wss_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("memmut developers");
MODULE_DESCRIPTION("memmut-wss: sampled accessed-bit scans including the "
		   "secondary MMU, for working-set estimation");
MODULE_VERSION("1.0.0");
