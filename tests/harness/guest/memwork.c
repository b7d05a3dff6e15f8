/*
 * memwork: the working-set generator of memmut's test guests.
 *
 * Parameters come from /proc/cmdline (or, for a run on the host, from
 * "key=value" arguments):
 *   memwork.sched=MIBxSECONDS,...  steps, format of memmut.evaluation.workloads.encode
 *   memwork.alloc=s|d   s: map the peak once, touch only the current step;
 *                       d: grow/shrink the mapping with each step
 *                       (seed 004 section 2.5.1, W_i,s and W_i,d)
 *   memwork.loops=N     repeat the schedule N times, 0 = forever (default 1)
 *   memwork.period_ms=N start a pass at most every N ms (default 0: back to
 *                       back), to bound the CPU a guest burns under TCG
 *   memwork.corrupt=1   flip one word after the first pass (tests the check)
 *   memwork.thp=1       madvise(MADV_HUGEPAGE) the mapping instead of the
 *                       default MADV_NOHUGEPAGE (memmut-wss's THP tests)
 *   memwork.work=1      fixed work instead of fixed time: step i makes
 *                       round(secs_i * 1000 / period_ms) passes, one at most
 *                       every period_ms, however long they take; the done
 *                       line's t= is then the completion time (benchmarks:
 *                       a starved guest finishes late). Needs period_ms.
 *
 * Every pass touches every page of the current working set: it checks the
 * words the page got at its last write (page index + generation, so a page
 * lost or swapped back wrong is caught) and writes the new generation.
 *
 * Output, one line per write(2) so that it does not interleave on the
 * console (steps are numbered from 0):
 *   MEMWORK start alloc=d loops=1 steps=6 peak_mib=200 period_ms=0
 *   MEMWORK step=2 wss_mib=128 loop=1 pass=17 pass_ms=35 errors=0 t=12.3
 *   MEMWORK end step=2 wss_mib=128 loop=1 passes=40 errors=0 verified=N t=14.0
 *   MEMWORK error step=2 page=123 word=3 gen=16 want=0x... got=0x...
 *   MEMWORK done errors=0 passes=240 verified=N t=30.1
 * A progress line follows the first pass of each step, then at most one a
 * second (so every pass when a pass takes longer than a second).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define MIB (1024UL * 1024UL)
#define WORDS 8                 /* checked words per page: one per 512 B */
#define STRIDE (PAGE / 8 / WORDS)
#define MAX_STEPS 256
#define MAX_SHOWN_ERRORS 10
#define CLOCK_EVERY 256         /* pages between clock reads in a pass */

struct step { long mib; double secs; };

static struct step steps[MAX_STEPS];
static int nsteps;
static char alloc = 'd';
static long loops = 1, period_ms, corrupt, work, thp;

static unsigned char *base;     /* the working-set mapping */
static unsigned long mapped;    /* its size in pages */
static uint32_t *page_gen;      /* generation each page last got, 0 = none */
static uint32_t gen;
static long errors, verified;
static double t0;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    printf("MEMWORK fatal %s errno=%d\n", what, errno);
    exit(2);
}

/* splitmix64 of (page, generation, word): distinct for every input, so a
 * stale generation or another page's contents never verifies. */
static uint64_t pattern(uint64_t page, uint32_t g, unsigned w)
{
    uint64_t z = (page << 35) ^ ((uint64_t)g << 3) ^ w;
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int parse_sched(const char *s)
{
    while (*s) {
        char *end;
        if (nsteps == MAX_STEPS)
            return -1;
        steps[nsteps].mib = strtol(s, &end, 10);
        if (end == s || *end != 'x' || steps[nsteps].mib < 0)
            return -1;
        s = end + 1;
        steps[nsteps].secs = strtod(s, &end);
        if (end == s || steps[nsteps].secs <= 0)
            return -1;
        nsteps++;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return nsteps ? 0 : -1;
}

static void parse_word(const char *w)
{
    const char *v = strchr(w, '=');
    if (!v)
        return;
    v++;
    if (!strncmp(w, "memwork.sched=", 14)) {
        if (parse_sched(v)) {
            printf("MEMWORK fatal bad-schedule %s\n", v);
            exit(2);
        }
    } else if (!strncmp(w, "memwork.alloc=", 14)) {
        alloc = v[0];
    } else if (!strncmp(w, "memwork.loops=", 14)) {
        loops = atol(v);
    } else if (!strncmp(w, "memwork.period_ms=", 18)) {
        period_ms = atol(v);
    } else if (!strncmp(w, "memwork.corrupt=", 16)) {
        corrupt = atol(v);
    } else if (!strncmp(w, "memwork.work=", 13)) {
        work = atol(v);
    } else if (!strncmp(w, "memwork.thp=", 12)) {
        thp = atol(v);
    }
}

static void parse_cmdline(void)
{
    static char buf[8192];
    int fd = open("/proc/cmdline", O_RDONLY);
    ssize_t n;
    if (fd < 0)
        die("open-cmdline");
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0)
        die("read-cmdline");
    buf[n] = 0;
    for (char *w = strtok(buf, " \t\n"); w; w = strtok(NULL, " \t\n"))
        parse_word(w);
}

/* Make the mapping cover `pages` pages (d) or the peak once (s). */
static void resize(unsigned long pages)
{
    if (alloc == 's' && base)
        return;
    if (pages == mapped)
        return;
    if (pages < mapped)         /* freed pages come back zeroed: forget them */
        memset(page_gen + pages, 0, (mapped - pages) * sizeof(*page_gen));
    if (pages == 0) {
        munmap(base, mapped * PAGE);
        base = NULL;
    } else if (!base) {
        base = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
            die("mmap");
    } else {
        /* mremap keeps the surviving pages' contents, so they stay checked */
        base = mremap(base, mapped * PAGE, pages * PAGE, MREMAP_MAYMOVE);
        if (base == MAP_FAILED)
            die("mremap");
    }
    /* 4 KiB pages: the working set is exact and swaps page by page
     * (unless memwork.thp=1 asks for transparent huge pages) */
    if (base)
        madvise(base, pages * PAGE, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    mapped = pages;
}

/* One pass over pages [0, pages); returns 0 if cut short at `deadline`. */
static int pass(int step, unsigned long pages, double deadline)
{
    gen++;
    for (unsigned long p = 0; p < pages; p++) {
        uint64_t *w = (uint64_t *)(base + p * PAGE);
        uint32_t old = page_gen[p];
        if (old) {
            int bad = 0;
            for (unsigned i = 0; i < WORDS; i++) {
                uint64_t want = pattern(p, old, i), got = w[i * STRIDE];
                if (got != want && !bad++ && errors < MAX_SHOWN_ERRORS)
                    printf("MEMWORK error step=%d page=%lu word=%u gen=%u "
                           "want=0x%016llx got=0x%016llx\n", step, p, i, old,
                           (unsigned long long)want, (unsigned long long)got);
            }
            errors += bad != 0;
            verified++;
        }
        for (unsigned i = 0; i < WORDS; i++)
            w[i * STRIDE] = pattern(p, gen, i);
        page_gen[p] = gen;
        if (p % CLOCK_EVERY == CLOCK_EVERY - 1 && now() >= deadline)
            return 0;
    }
    return 1;
}

static void sleep_until(double t)
{
    double d = t - now();
    if (d > 0) {
        struct timespec ts = { (time_t)d, (long)((d - (time_t)d) * 1e9) };
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    long peak = 0, total_passes = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1)
        for (int i = 1; i < argc; i++)
            parse_word(argv[i]);
    else
        parse_cmdline();
    if (!nsteps) {
        printf("MEMWORK fatal no-schedule (memwork.sched=MIBxSECONDS,...)\n");
        return 2;
    }
    if (work && period_ms <= 0) {
        printf("MEMWORK fatal work-needs-period_ms\n");
        return 2;
    }
    if (alloc != 's' && alloc != 'd') {
        printf("MEMWORK fatal bad-alloc %c (want s or d)\n", alloc);
        return 2;
    }
    for (int i = 0; i < nsteps; i++)
        if (steps[i].mib > peak)
            peak = steps[i].mib;
    page_gen = calloc(peak * MIB / PAGE + 1, sizeof(*page_gen));
    if (!page_gen)
        die("calloc");
    t0 = now();
    printf("MEMWORK start alloc=%c loops=%ld steps=%d peak_mib=%ld "
           "period_ms=%ld work=%ld%s\n", alloc, loops, nsteps, peak,
           period_ms, work, thp ? " thp=1" : "");

    for (long loop = 1; loops == 0 || loop <= loops; loop++) {
        for (int s = 0; s < nsteps; s++) {
            unsigned long pages = steps[s].mib * MIB / PAGE;
            double end = now() + steps[s].secs, last = 0;
            long passes = 0;
            /* work mode: a pass count instead of a deadline */
            long target = work ? (long)(steps[s].secs * 1000.0 / period_ms
                                        + 0.5) : 0;
            if (work) {
                if (target < 1)
                    target = 1;
                end = 1e300;
            }

            resize(alloc == 's' ? peak * MIB / PAGE : pages);
            while (work ? passes < target : now() < end) {
                double start = now();
                if (!pages) {
                    if (work) {     /* nothing to touch: just the time */
                        sleep_until(start + steps[s].secs);
                        break;
                    }
                    sleep_until(end);
                    break;
                }
                if (!pass(s, pages, end))
                    break;              /* the step is over mid-pass */
                passes++;
                total_passes++;
                if (corrupt && total_passes == 1)
                    *(uint64_t *)(base + PAGE) ^= 1;   /* page 1, word 0 */
                if (passes == 1 || now() - last >= 1.0) {
                    last = now();
                    printf("MEMWORK step=%d wss_mib=%ld loop=%ld pass=%ld "
                           "pass_ms=%ld errors=%ld t=%.1f\n", s, steps[s].mib,
                           loop, passes, (long)((last - start) * 1000),
                           errors, last - t0);
                }
                if (period_ms)
                    sleep_until(start + period_ms / 1000.0 < end
                                ? start + period_ms / 1000.0 : end);
            }
            printf("MEMWORK end step=%d wss_mib=%ld loop=%ld passes=%ld "
                   "errors=%ld verified=%ld t=%.1f\n", s, steps[s].mib, loop,
                   passes, errors, verified, now() - t0);
        }
    }
    printf("MEMWORK done errors=%ld passes=%ld verified=%ld t=%.1f\n",
           errors, total_passes, verified, now() - t0);
    return errors ? 1 : 0;
}
