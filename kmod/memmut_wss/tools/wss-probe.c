// SPDX-License-Identifier: GPL-2.0
/*
 * wss-probe: a small client of /dev/memmut_wss (memmut's kernel helper),
 * used inside the test guests and by hand.
 *
 *   wss-probe info
 *       KMOD-INFO abi=1 max_pages=65536 features=0x7
 *   wss-probe watch PID INTERVAL_MS PAGES [ROUNDS]
 *       every interval: a random scan of PAGES pages of PID's largest
 *       anonymous read-write mapping (it clears them), clear_refs of that
 *       process too, wait, read smaps' Referenced of the mapping, scan the
 *       same pages again (which were accessed?). One line per interval:
 *       KMOD-WSS t0=<uptime> t1=<uptime> map_kb=.. sampled=.. accessed=..
 *           present=.. huge=.. secondary=.. notifiers=0|1 est_kb=..
 *           smaps_kb=.. clear_ns=.. test_ns=..
 *       until PID exits (or ROUNDS rounds, 0 = no limit).
 *   wss-probe twosets PID LONG_MS SHORT_MS PAGES SHORT_PAGES [ROUNDS]
 *       two disjoint sets, as the agent's working-set curve keeps them
 *       (memmut.agent.wss.short_set): every LONG_MS a random scan of
 *       PAGES pages (the main set, cleared once per long interval), and
 *       SHORT_PAGES other random pages, none in the 2 MiB region of a
 *       main page mapped huge (the short set); every SHORT_MS the short set is scanned (its
 *       window ends and the next begins: a scan clears) and then the main
 *       set (the union of what its scans found is cumulative since its
 *       clear). One line per short window and one per main read:
 *       KMOD-SHORT t0=.. t1=.. map_kb=.. sampled=.. accessed=.. est_kb=..
 *       KMOD-LONG t0=.. t1=.. map_kb=.. sampled=.. accessed=.. est_kb=..
 *           huge=..
 *   wss-probe record PID INTERVAL_MS PAGES
 *       one interval of `watch`, printed in full for unit-test fixtures:
 *       KMOD-RECORD start=0x.. end=0x.. accessed=.. present=.. huge=..
 *           out_flags=.. addrs=0x..,0x..,... results=<hex byte per page>
 *   wss-probe cost PAGES ROUNDS MIB
 *       ns per sampled page on a MIB-MiB mapping of its own, touched
 *       between rounds: KMOD-COST pages=.. ns_per_page=.. (median)
 *   wss-probe bad
 *       bad input to the interface, one line per case:
 *       KMOD-BAD case=NAME ret=.. errno=.. want=.. ok=0|1
 *       KMOD-BAD done failures=N
 *
 * Built static (the guests have no libc): gcc -static -O2 -Wall -Werror.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../memmut_wss_abi.h"

#define PAGE 4096UL

static int dev = -1;

static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this thread: what a scan costs, whatever else runs (a
 * wall clock would count the other tasks cond_resched() lets run) */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void open_dev(void)
{
	dev = open("/dev/" MEMMUT_WSS_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		printf("KMOD-FATAL open /dev/%s errno=%d\n", MEMMUT_WSS_DEVICE,
		       errno);
		exit(2);
	}
}

static int scan(struct memmut_wss_scan *s, int pid, uint32_t flags,
		uint64_t start, uint64_t end, uint64_t *addrs, uint8_t *res,
		uint32_t count)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->flags = flags;
	s->pid = pid;
	s->count = count;
	s->start = start;
	s->end = end;
	s->addrs = (uintptr_t)addrs;
	s->results = (uintptr_t)res;
	return ioctl(dev, MEMMUT_WSS_IOC_SCAN, s) ? errno : 0;
}

/* the largest anonymous rw mapping of pid: [*start, *end) */
static int find_mapping(int pid, uint64_t *start, uint64_t *end)
{
	char path[64], line[512];
	FILE *f;
	uint64_t best = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off, ino;
		char perms[8], devs[16], name[256] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %15s %llu %255s", &a, &b,
			   perms, &off, devs, &ino, name) < 6)
			continue;
		if (strncmp(perms, "rw", 2) || name[0] || b - a <= best)
			continue;
		best = b - a;
		*start = a;
		*end = b;
	}
	fclose(f);
	return best ? 0 : -1;
}

/* Referenced: of the mapping starting at start, in KiB */
static long smaps_referenced(int pid, uint64_t start)
{
	char path[64], line[512];
	FILE *f;
	int in = 0;
	long kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx ", &a, &b) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a == start;
			continue;
		}
		if (in && sscanf(line, "Referenced: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static void clear_refs(int pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", pid);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			printf("KMOD-WARN clear_refs errno=%d\n", errno);
		close(fd);
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int cmd_info(void)
{
	struct memmut_wss_info info;

	if (ioctl(dev, MEMMUT_WSS_IOC_INFO, &info)) {
		printf("KMOD-INFO error errno=%d\n", errno);
		return 1;
	}
	printf("KMOD-INFO abi=%u max_pages=%u features=%#x\n",
	       info.abi_version, info.max_pages, info.features);
	return info.abi_version == MEMMUT_WSS_ABI_VERSION ? 0 : 1;
}

static int cmd_watch(int pid, long interval_ms, uint32_t pages, long rounds)
{
	uint64_t *addrs = calloc(pages, sizeof(*addrs));
	uint8_t *res = calloc(pages, 1);
	struct memmut_wss_scan s;

	if (!addrs || !res)
		return 2;
	for (long r = 0; rounds == 0 || r < rounds; r++) {
		uint64_t start, end, t;
		uint64_t clear_ns, test_ns;
		uint32_t n = pages;
		double t0, t1;
		long ref;
		int err;

		if (find_mapping(pid, &start, &end)) {
			printf("KMOD-WSS gone pid=%d\n", pid);
			return 0;
		}
		if (n > (end - start) / PAGE)
			n = (end - start) / PAGE;
		t0 = uptime();
		t = cpu_ns();
		err = scan(&s, pid, MEMMUT_WSS_SCAN_RANDOM, start, end, addrs,
			   res, n);
		clear_ns = cpu_ns() - t;
		if (err) {
			printf("KMOD-WSS error phase=clear errno=%d\n", err);
			if (err == ESRCH)
				return 0;
			sleep_ms(interval_ms);
			continue;
		}
		clear_refs(pid);
		sleep_ms(interval_ms);
		ref = smaps_referenced(pid, start);
		t = cpu_ns();
		err = scan(&s, pid, 0, start, end, addrs, res, n);
		test_ns = cpu_ns() - t;
		t1 = uptime();
		if (err) {
			printf("KMOD-WSS error phase=test errno=%d\n", err);
			if (err == ESRCH)
				return 0;
			continue;
		}
		printf("KMOD-WSS t0=%.2f t1=%.2f map_kb=%llu sampled=%u "
		       "accessed=%u present=%u huge=%u secondary=%u "
		       "notifiers=%d est_kb=%llu smaps_kb=%ld clear_ns=%llu "
		       "test_ns=%llu\n", t0, t1,
		       (unsigned long long)(end - start) / 1024, s.done,
		       s.accessed, s.present, s.huge, s.secondary,
		       !!(s.out_flags & MEMMUT_WSS_OUT_NOTIFIERS),
		       (unsigned long long)((end - start) / 1024 * s.accessed /
					    s.done), ref,
		       (unsigned long long)clear_ns,
		       (unsigned long long)test_ns);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b);

/* want random pages of [start, end), none of main[0..nmain) nor in the
 * 2 MiB region of one mapped huge (mres), sorted, in out[]; returns how
 * many were found */
static uint32_t pick_short(const uint64_t *main, const uint8_t *mres,
			   uint32_t nmain, uint64_t start, uint64_t end,
			   uint64_t *out, uint32_t want)
{
	uint64_t npages = (end - start) / PAGE;
	uint32_t got = 0;
	long tries = 0;

	while (got < want && tries++ < 100L * want) {
		uint64_t a = start + ((uint64_t)random() % npages) * PAGE;
		int bad = 0;

		for (uint32_t i = 0; i < nmain && !bad; i++)
			bad = main[i] == a ||
			      ((mres[i] & MEMMUT_WSS_P_HUGE) &&
			       (main[i] >> 21) == (a >> 21));
		for (uint32_t i = 0; i < got && !bad; i++)
			bad = out[i] == a;
		if (!bad)
			out[got++] = a;
	}
	qsort(out, got, sizeof(*out), cmp_u64);
	return got;
}

static int cmd_twosets(int pid, long long_ms, long short_ms, uint32_t pages,
		       uint32_t short_pages, long rounds)
{
	uint64_t *addrs = calloc(pages, sizeof(*addrs));
	uint64_t *saddrs = calloc(short_pages, sizeof(*saddrs));
	uint8_t *res = calloc(pages, 1);
	uint8_t *sres = calloc(short_pages, 1);
	uint8_t *seen = calloc(pages, 1);
	struct memmut_wss_scan s, ss;
	long windows = long_ms / short_ms;

	if (!addrs || !saddrs || !res || !sres || !seen || windows < 1)
		return 2;
	srandom(getpid() ^ (unsigned int)cpu_ns());
	for (long r = 0; rounds == 0 || r < rounds; r++) {
		uint64_t start, end, map_kb;
		uint32_t n = pages, ns;
		double t0, ts;
		int err;

		if (find_mapping(pid, &start, &end)) {
			printf("KMOD-WSS gone pid=%d\n", pid);
			return 0;
		}
		map_kb = (end - start) / 1024;
		if (n > (end - start) / PAGE)
			n = (end - start) / PAGE;
		t0 = uptime();
		err = scan(&s, pid, MEMMUT_WSS_SCAN_RANDOM, start, end, addrs,
			   res, n);
		if (err)
			goto failed;
		n = s.done;
		ns = pick_short(addrs, res, n, start, end, saddrs,
				short_pages);
		if (!ns) {
			printf("KMOD-SHORT error no-pages-left\n");
			return 2;
		}
		err = scan(&ss, pid, 0, start, end, saddrs, sres, ns);
		if (err)
			goto failed;
		memset(seen, 0, n);
		ts = uptime();
		for (long k = 0; k < windows; k++) {
			uint32_t count = 0;
			double t1;

			sleep_ms(short_ms);
			err = scan(&ss, pid, 0, start, end, saddrs, sres, ns);
			if (err)
				goto failed;
			t1 = uptime();
			printf("KMOD-SHORT t0=%.2f t1=%.2f map_kb=%llu sampled=%u "
			       "accessed=%u est_kb=%llu\n", ts, t1,
			       (unsigned long long)map_kb, ss.done, ss.accessed,
			       (unsigned long long)(map_kb * ss.accessed /
						    ss.done));
			ts = t1;
			err = scan(&s, pid, 0, start, end, addrs, res, n);
			if (err)
				goto failed;
			for (uint32_t i = 0; i < n; i++) {
				if (res[i] & MEMMUT_WSS_P_ACCESSED)
					seen[i] = 1;
				count += seen[i];
			}
			printf("KMOD-LONG t0=%.2f t1=%.2f map_kb=%llu sampled=%u "
			       "accessed=%u est_kb=%llu huge=%u\n", t0, uptime(),
			       (unsigned long long)map_kb, n, count,
			       (unsigned long long)(map_kb * count / n), s.huge);
		}
		fflush(stdout);
		continue;
failed:
		printf("KMOD-WSS error phase=twosets errno=%d\n", err);
		if (err == ESRCH)
			return 0;
		sleep_ms(short_ms);
	}
	return 0;
}

static int cmd_record(int pid, long interval_ms, uint32_t pages)
{
	uint64_t *addrs = calloc(pages, sizeof(*addrs));
	uint8_t *res = calloc(pages, 1);
	struct memmut_wss_scan s;
	uint64_t start, end;
	int err;

	if (!addrs || !res || find_mapping(pid, &start, &end))
		return 2;
	if (pages > (end - start) / PAGE)
		pages = (end - start) / PAGE;
	err = scan(&s, pid, MEMMUT_WSS_SCAN_RANDOM, start, end, addrs, res,
		   pages);
	if (!err) {
		sleep_ms(interval_ms);
		err = scan(&s, pid, 0, start, end, addrs, res, pages);
	}
	if (err) {
		printf("KMOD-RECORD error errno=%d\n", err);
		return 1;
	}
	printf("KMOD-RECORD start=%#llx end=%#llx accessed=%u present=%u "
	       "huge=%u out_flags=%u addrs=", (unsigned long long)start,
	       (unsigned long long)end, s.accessed, s.present, s.huge,
	       s.out_flags);
	for (uint32_t i = 0; i < pages; i++)
		printf("%s%#llx", i ? "," : "", (unsigned long long)addrs[i]);
	printf(" results=");
	for (uint32_t i = 0; i < pages; i++)
		printf("%02x", res[i]);
	printf("\n");
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmd_cost(uint32_t pages, int rounds, long mib)
{
	size_t len = mib << 20;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *addrs = calloc(pages, sizeof(*addrs));
	uint64_t *ns = calloc(rounds, sizeof(*ns));
	uint64_t *cns = calloc(rounds, sizeof(*cns));
	struct memmut_wss_scan s;
	int err;

	if (m == MAP_FAILED || !addrs || !ns || !cns)
		return 2;
	madvise(m, len, MADV_NOHUGEPAGE);
	for (int r = 0; r < rounds; r++) {
		uint64_t t;

		for (size_t i = 0; i < len; i += PAGE)
			m[i]++;
		t = cpu_ns();
		err = scan(&s, getpid(), MEMMUT_WSS_SCAN_RANDOM,
			   (uintptr_t)m, (uintptr_t)m + len, addrs, NULL,
			   pages);
		cns[r] = cpu_ns() - t;
		if (err) {
			printf("KMOD-COST error errno=%d\n", err);
			return 1;
		}
		for (size_t i = 0; i < len; i += PAGE)
			m[i]++;
		t = cpu_ns();
		err = scan(&s, getpid(), 0, (uintptr_t)m, (uintptr_t)m + len,
			   addrs, NULL, pages);
		ns[r] = cpu_ns() - t;
		if (err) {
			printf("KMOD-COST error errno=%d\n", err);
			return 1;
		}
	}
	qsort(ns, rounds, sizeof(*ns), cmp_u64);
	qsort(cns, rounds, sizeof(*cns), cmp_u64);
	/* medians; a round = one random (clearing) call + one test call */
	printf("KMOD-COST pages=%u rounds=%d mib=%ld call_ns=%llu "
	       "ns_per_page=%.1f random_call_ns=%llu random_ns_per_page=%.1f "
	       "accessed=%u\n", pages, rounds, mib,
	       (unsigned long long)ns[rounds / 2],
	       (double)ns[rounds / 2] / pages,
	       (unsigned long long)cns[rounds / 2],
	       (double)cns[rounds / 2] / pages, s.accessed);
	return 0;
}

/* -- bad input ------------------------------------------------------------ */

static int failures;

static void expect(const char *name, int err, int want)
{
	printf("KMOD-BAD case=%s errno=%d want=%d ok=%d\n", name, err, want,
	       err == want);
	failures += err != want;
}

static int raw_scan(struct memmut_wss_scan *s)
{
	return ioctl(dev, MEMMUT_WSS_IOC_SCAN, s) ? errno : 0;
}

/* a child with a mapping of `len` bytes touched, stopped in pause() */
static pid_t spawn_target(size_t len, uint64_t *start)
{
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t pid;

	/* the child inherits the mapping at the same address */
	*start = (uintptr_t)m;
	pid = fork();
	if (pid == 0) {
		for (size_t i = 0; i < len; i += PAGE)
			m[i] = 1;
		for (;;)
			pause();
	}
	munmap(m, len);
	return pid;
}

/* scans of a target racing with `racer` (kills or unmaps); returns the
 * number of calls by errno class, all must be 0 or `want_err` */
static void race(const char *name, int unmap, int want_err)
{
	const size_t len = 64UL << 20;
	uint32_t count = len / PAGE;
	uint64_t *addrs = calloc(count, sizeof(*addrs));
	int bad = 0, ok = 0, errs = 0, esrch = 0, unmapped = 0;
	struct memmut_wss_scan s;

	for (int round = 0; round < 12; round++) {
		uint64_t start;
		pid_t target, killer;
		int st;

		if (!unmap) {
			target = spawn_target(len, &start);
		} else {
			/* the child maps and unmaps the range in a loop */
			unsigned char *m = mmap(NULL, len, PROT_READ |
						PROT_WRITE, MAP_PRIVATE |
						MAP_ANONYMOUS, -1, 0);
			start = (uintptr_t)m;
			target = fork();
			if (target == 0) {
				for (;;) {
					for (size_t i = 0; i < len; i += PAGE)
						m[i] = 1;
					munmap(m, len);
					usleep(200);
					m = mmap(m, len, PROT_READ |
						 PROT_WRITE, MAP_PRIVATE |
						 MAP_ANONYMOUS | MAP_FIXED,
						 -1, 0);
				}
			}
			munmap(m, len);
		}
		usleep(100000);         /* let it touch its pages */
		killer = fork();
		if (killer == 0) {
			usleep(2000 + round * 60000);
			kill(target, SIGKILL);
			_exit(0);
		}
		for (double t_end = uptime() + 10; uptime() < t_end;) {
			int err = scan(&s, target, MEMMUT_WSS_SCAN_RANDOM,
				       start, start + len, addrs, NULL, count);

			if (err == 0) {
				ok++;
				unmapped += s.done - s.present;
			} else if (err == ESRCH || err == want_err) {
				errs++;
				esrch += err == ESRCH;
			} else {
				printf("KMOD-BAD case=%s unexpected errno=%d\n",
				       name, err);
				bad++;
			}
			if (err == ESRCH)
				break;
		}
		waitpid(killer, &st, 0);
		kill(target, SIGKILL);
		waitpid(target, &st, 0);
	}
	/* every call ends in success or the expected error, and every
	 * round ends in ESRCH once the target is killed */
	printf("KMOD-BAD case=%s calls_ok=%d calls_err=%d esrch=%d "
	       "unexpected=%d not_present=%d ok=%d\n", name, ok, errs, esrch,
	       bad, unmapped, bad == 0 && esrch == 12);
	failures += !(bad == 0 && esrch == 12);
	free(addrs);
}

static int cmd_bad(void)
{
	const size_t len = 4UL << 20;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t a = (uintptr_t)m, e = a + len, addrs[4];
	uint8_t *res;
	struct memmut_wss_scan s;
	int me = getpid(), err;

	memset(m, 1, len);
	madvise(m, len, MADV_NOHUGEPAGE);
	/* the results array inside the scanned range: copy_to_user of the
	 * caller's own pages must not deadlock with the mmap lock */
	res = m + len - PAGE;

	addrs[0] = a;
	addrs[1] = a + PAGE;
	err = scan(&s, me, 0, a, e, addrs, res, 2);
	expect("self_scan", err, 0);
	printf("KMOD-CAP notifiers=%d present=%u (a process without an MMU "
	       "notifier: host page tables only)\n",
	       !!(s.out_flags & MEMMUT_WSS_OUT_NOTIFIERS), s.present);
	expect("unknown_pid", scan(&s, 4000000, 0, a, e, addrs, res, 1),
	       ESRCH);
	expect("pid_zero", scan(&s, 0, 0, a, e, addrs, res, 1), ESRCH);
	expect("pid_negative", scan(&s, -5, 0, a, e, addrs, res, 1), ESRCH);
	expect("kernel_thread", scan(&s, 2, 0, a, e, addrs, res, 1), ESRCH);
	expect("count_zero", scan(&s, me, 0, a, e, addrs, res, 0), EINVAL);
	expect("count_max_plus_1", scan(&s, me, 0, a, e, addrs, res,
					MEMMUT_WSS_MAX_PAGES + 1), E2BIG);
	expect("count_absurd", scan(&s, me, 0, a, e, addrs, res, 0xffffffff),
	       E2BIG);
	{
		/* the most pages a call takes, on a 256 MiB mapping that is
		 * half populated: bounded work, one call */
		size_t big = (size_t)MEMMUT_WSS_MAX_PAGES * PAGE;
		unsigned char *b = mmap(NULL, big, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS |
					MAP_NORESERVE, -1, 0);
		uint64_t *ba = calloc(MEMMUT_WSS_MAX_PAGES, sizeof(*ba));

		for (size_t i = 0; i < big / 2; i += PAGE)
			b[i] = 1;
		err = scan(&s, me, MEMMUT_WSS_SCAN_RANDOM, (uintptr_t)b,
			   (uintptr_t)b + big, ba, NULL,
			   MEMMUT_WSS_MAX_PAGES);
		expect("count_max", err, 0);
		printf("KMOD-BAD case=count_max_done done=%u present=%u "
		       "ok=%d\n", s.done, s.present,
		       s.done == MEMMUT_WSS_MAX_PAGES &&
		       s.present == MEMMUT_WSS_MAX_PAGES / 2);
		failures += !(s.done == MEMMUT_WSS_MAX_PAGES &&
			      s.present == MEMMUT_WSS_MAX_PAGES / 2);
		munmap(b, big);
		free(ba);
	}
	expect("random_count_above_range",
	       scan(&s, me, MEMMUT_WSS_SCAN_RANDOM, a, a + 4 * PAGE, addrs,
		    res, 5), EINVAL);
	expect("unknown_flags", scan(&s, me, 0x80, a, e, addrs, res, 1),
	       EINVAL);
	expect("start_unaligned", scan(&s, me, 0, a + 1, e, addrs, res, 1),
	       EINVAL);
	expect("empty_range", scan(&s, me, 0, a, a, addrs, res, 1), EINVAL);
	expect("reversed_range", scan(&s, me, 0, e, a, addrs, res, 1), EINVAL);
	expect("range_above_user", scan(&s, me, 0, a, ~0xfffULL, addrs, res,
					1), EINVAL);
	expect("range_unmapped", scan(&s, me, 0, 0x10000, 0x20000, addrs, res,
				      1), ENXIO);
	addrs[0] = a;
	expect("range_past_mapping", scan(&s, me, 0, a, e + (64 << 20),
					  addrs, res, 1), ENXIO);
	addrs[0] = a + PAGE;
	addrs[1] = a;
	expect("addrs_descending", scan(&s, me, 0, a, e, addrs, res, 2),
	       EINVAL);
	addrs[0] = a;
	addrs[1] = a;
	expect("addrs_duplicate", scan(&s, me, 0, a, e, addrs, res, 2),
	       EINVAL);
	addrs[0] = e;
	expect("addr_outside_range", scan(&s, me, 0, a, e, addrs, res, 1),
	       EINVAL);
	addrs[0] = a + 8;
	expect("addr_unaligned", scan(&s, me, 0, a, e, addrs, res, 1),
	       EINVAL);
	expect("addrs_null", scan(&s, me, 0, a, e, NULL, res, 1), EINVAL);
	expect("addrs_bad_pointer", scan(&s, me, 0, a, e, (uint64_t *)8, res,
					 1), EFAULT);
	addrs[0] = a;
	expect("results_bad_pointer", scan(&s, me, 0, a, e, addrs,
					   (uint8_t *)8, 1), EFAULT);
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s) - 8;
	expect("bad_struct_size", raw_scan(&s), EINVAL);
	expect("struct_bad_pointer",
	       ioctl(dev, MEMMUT_WSS_IOC_SCAN, (void *)8) ? errno : 0, EFAULT);
	expect("unknown_ioctl", ioctl(dev, _IO(MEMMUT_WSS_IOC_MAGIC, 99)) ?
	       errno : 0, ENOTTY);
	race("exit_mid_scan", 0, ESRCH);
	race("unmap_mid_scan", 1, ENXIO);
	printf("KMOD-BAD done failures=%d\n", failures);
	return failures != 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: wss-probe info|watch|twosets|record|cost|bad "
			"...\n");
		return 2;
	}
	open_dev();
	if (!strcmp(argv[1], "info"))
		return cmd_info();
	if (!strcmp(argv[1], "watch") && argc >= 5)
		return cmd_watch(atoi(argv[2]), atol(argv[3]),
				 strtoul(argv[4], NULL, 0),
				 argc > 5 ? atol(argv[5]) : 0);
	if (!strcmp(argv[1], "twosets") && argc >= 7)
		return cmd_twosets(atoi(argv[2]), atol(argv[3]), atol(argv[4]),
				   strtoul(argv[5], NULL, 0),
				   strtoul(argv[6], NULL, 0),
				   argc > 7 ? atol(argv[7]) : 0);
	if (!strcmp(argv[1], "record") && argc >= 5)
		return cmd_record(atoi(argv[2]), atol(argv[3]),
				  strtoul(argv[4], NULL, 0));
	if (!strcmp(argv[1], "cost") && argc >= 5)
		return cmd_cost(strtoul(argv[2], NULL, 0), atoi(argv[3]),
				atol(argv[4]));
	if (!strcmp(argv[1], "bad"))
		return cmd_bad();
	fprintf(stderr, "wss-probe: bad arguments\n");
	return 2;
}
