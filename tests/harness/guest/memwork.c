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
 *   memwork.pattern=P   the order and share of the step's pages a pass
 *                       touches (memmut.evaluation.workloads.Pattern):
 *     seq               (default) every page once, in address order
 *     random            every page once, in a new random order every pass
 *     zipf:S            as many touches as the step has pages, each page
 *                       drawn with probability ~ 1/rank^S (rank: a fixed
 *                       pseudo-random permutation of the pages, so the hot
 *                       pages are scattered over the mapping)
 *     hotset:MIB:MOVE_S the first pass of a step touches (loads) all of it,
 *                       then passes sweep a window of MIB MiB that moves on
 *                       by MIB every MOVE_S seconds (wrapping around)
 *     load_idle[:MIB]   the first pass of a step loads all of it, then
 *                       passes sweep only its first MIB MiB (default a
 *                       quarter of the step): the rest stays cold
 *     scan:MIB:EVERY_S  as load_idle:MIB, but every EVERY_S seconds of the
 *                       step one pass sweeps all of it in address order (a
 *                       small region touched often, a large one rarely: a
 *                       backup, a report, a full-heap collection)
 *   memwork.seed=N      seed of the random patterns (default 1)
 *
 * A pass of seq checks, for every page of the current working set, the
 * words the page got at its last write (page index + generation, so a page
 * lost or swapped back wrong is caught) and writes the new generation; the
 * other patterns do the same for each page they touch.
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
 * With a pattern other than seq, the start line ends with pattern=P, and
 * progress and end lines with ops=N ops_s=R: page touches in the step so
 * far and their rate over the step (the guest's throughput).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

enum { SEQ, RANDOM, ZIPF, HOTSET, LOAD_IDLE, SCAN };
static int pattern_kind = SEQ;
static char pattern_text[64] = "seq";
static double zipf_s, move_s, scan_s;
static long hot_mib = -1;       /* hotset / load_idle / scan; -1: default */
static long scans;              /* scan: full passes made in the step */
static uint64_t rng = 1;

/* touch order and Zipf tables, rebuilt for each step's size */
static uint32_t *order;                 /* random: a permutation of pages */
static double *zipf_cdf;                /* cumulative weight by rank */
static unsigned long table_pages;

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

static uint64_t rand64(void)          /* xorshift64* */
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dULL;
}

static unsigned long below(unsigned long n)     /* uniform in [0, n) */
{
    return (unsigned long)((rand64() >> 11) * (1.0 / 9007199254740992.0)
                           * n);
}

/* "MIB:SECONDS" (hotset, scan): both positive; 0 on success. */
static int parse_mib_secs(const char *v, long *mib, double *secs)
{
    char *end;
    *mib = strtol(v, &end, 10);
    if (end == v || *end != ':' || *mib <= 0)
        return -1;
    v = end + 1;
    *secs = strtod(v, &end);
    return (end == v || *end || *secs <= 0) ? -1 : 0;
}

static int parse_pattern(const char *v)
{
    char *end;
    snprintf(pattern_text, sizeof(pattern_text), "%s", v);
    if (!strcmp(v, "seq")) {
        pattern_kind = SEQ;
    } else if (!strcmp(v, "random")) {
        pattern_kind = RANDOM;
    } else if (!strncmp(v, "zipf:", 5)) {
        pattern_kind = ZIPF;
        zipf_s = strtod(v + 5, &end);
        if (end == v + 5 || *end || zipf_s <= 0)
            return -1;
    } else if (!strncmp(v, "hotset:", 7)) {
        pattern_kind = HOTSET;
        return parse_mib_secs(v + 7, &hot_mib, &move_s);
    } else if (!strncmp(v, "scan:", 5)) {
        pattern_kind = SCAN;
        return parse_mib_secs(v + 5, &hot_mib, &scan_s);
    } else if (!strncmp(v, "load_idle", 9)) {
        pattern_kind = LOAD_IDLE;
        if (v[9] == ':') {
            hot_mib = strtol(v + 10, &end, 10);
            if (end == v + 10 || *end || hot_mib <= 0)
                return -1;
        } else if (v[9]) {
            return -1;
        }
    } else {
        return -1;
    }
    return 0;
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
    } else if (!strncmp(w, "memwork.pattern=", 16)) {
        if (parse_pattern(v)) {
            printf("MEMWORK fatal bad-pattern %s\n", v);
            exit(2);
        }
    } else if (!strncmp(w, "memwork.seed=", 13)) {
        rng = strtoull(v, NULL, 10) * 2 + 1;    /* never 0 */
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

/* Check the words page p got at its last write, write generation gen. */
static void touch(int step, unsigned long p)
{
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
}

/* One pass over pages [0, pages); returns 0 if cut short at `deadline`. */
static int pass(int step, unsigned long pages, double deadline)
{
    gen++;
    for (unsigned long p = 0; p < pages; p++) {
        touch(step, p);
        if (p % CLOCK_EVERY == CLOCK_EVERY - 1 && now() >= deadline)
            return 0;
    }
    return 1;
}

/* The tables of the random patterns for a step of `pages` pages. */
static void build_tables(unsigned long pages)
{
    if (pages == table_pages || !pages)
        return;
    free(order);
    free(zipf_cdf);
    order = malloc(pages * sizeof(*order));
    if (!order)
        die("malloc-order");
    for (unsigned long i = 0; i < pages; i++)
        order[i] = i;
    zipf_cdf = NULL;
    if (pattern_kind == ZIPF) {
        double sum = 0;
        zipf_cdf = malloc(pages * sizeof(*zipf_cdf));
        if (!zipf_cdf)
            die("malloc-zipf");
        for (unsigned long r = 0; r < pages; r++) {
            sum += pow(r + 1, -zipf_s);
            zipf_cdf[r] = sum;
        }
        for (unsigned long r = 0; r < pages; r++)
            zipf_cdf[r] /= sum;
        /* rank -> page: a fixed shuffle, so hot pages are scattered */
        for (unsigned long i = pages - 1; i > 0; i--) {
            unsigned long j = below(i + 1);
            uint32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
    table_pages = pages;
}

static unsigned long zipf_page(unsigned long pages)
{
    double u = (rand64() >> 11) * (1.0 / 9007199254740992.0);
    unsigned long lo = 0, hi = pages - 1;
    while (lo < hi) {                   /* first rank with cdf > u */
        unsigned long mid = (lo + hi) / 2;
        if (zipf_cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return order[lo];
}

/* The hot window [*first, *first + *n) of a hotset / load_idle / scan pass
 * (indices wrap around `pages`), `since` seconds into the step. */
static void hot_window(unsigned long pages, double since,
                       unsigned long *first, unsigned long *n)
{
    unsigned long hot = hot_mib >= 0 ? hot_mib * MIB / PAGE : pages / 4;
    if (hot > pages)
        hot = pages;
    if (hot < 1)
        hot = 1;
    *n = hot;
    *first = 0;
    if (pattern_kind == HOTSET)
        *first = ((unsigned long)(since / move_s) * hot) % pages;
}

/* One pass of the non-seq patterns; returns the pages touched, and sets
 * *done to 0 if cut short at `deadline`. `first` is the step's first pass
 * (hotset, load_idle and scan load all pages in it). */
static unsigned long pattern_pass(int step, unsigned long pages,
                                  double deadline, double since, int first,
                                  int *done)
{
    unsigned long n = pages, start = 0, touched = 0;
    *done = 1;
    gen++;
    if (pattern_kind == RANDOM) {
        for (unsigned long i = pages - 1; i > 0; i--) {  /* reshuffle */
            unsigned long j = below(i + 1);
            uint32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    } else if (pattern_kind == SCAN && !first &&
               (long)(since / scan_s) > scans) {
        scans = (long)(since / scan_s);     /* this pass sweeps it all */
    } else if ((pattern_kind == HOTSET || pattern_kind == LOAD_IDLE ||
                pattern_kind == SCAN) && !first) {
        hot_window(pages, since, &start, &n);
    }
    if (first)
        scans = 0;
    for (unsigned long i = 0; i < n; i++) {
        unsigned long p;
        if (pattern_kind == RANDOM)
            p = order[i];
        else if (pattern_kind == ZIPF)
            p = zipf_page(pages);
        else
            p = (start + i) % pages;
        touch(step, p);
        touched++;
        if (i % CLOCK_EVERY == CLOCK_EVERY - 1 && now() >= deadline) {
            *done = 0;
            break;
        }
    }
    return touched;
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
    if (pattern_kind == SEQ)
        printf("MEMWORK start alloc=%c loops=%ld steps=%d peak_mib=%ld "
               "period_ms=%ld work=%ld%s\n", alloc, loops, nsteps, peak,
               period_ms, work, thp ? " thp=1" : "");
    else
        printf("MEMWORK start alloc=%c loops=%ld steps=%d peak_mib=%ld "
               "period_ms=%ld work=%ld%s pattern=%s\n", alloc, loops, nsteps,
               peak, period_ms, work, thp ? " thp=1" : "", pattern_text);

    for (long loop = 1; loops == 0 || loop <= loops; loop++) {
        for (int s = 0; s < nsteps; s++) {
            unsigned long pages = steps[s].mib * MIB / PAGE;
            double end = now() + steps[s].secs, last = 0;
            double step_t0 = now();
            long passes = 0;
            unsigned long ops = 0;
            char opstext[64] = "";
            /* work mode: a pass count instead of a deadline */
            long target = work ? (long)(steps[s].secs * 1000.0 / period_ms
                                        + 0.5) : 0;
            if (work) {
                if (target < 1)
                    target = 1;
                end = 1e300;
            }

            resize(alloc == 's' ? peak * MIB / PAGE : pages);
            if (pattern_kind != SEQ)
                build_tables(pages);
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
                if (pattern_kind == SEQ) {
                    if (!pass(s, pages, end))
                        break;          /* the step is over mid-pass */
                } else {
                    int done;
                    ops += pattern_pass(s, pages, end, start - step_t0,
                                        passes == 0, &done);
                    if (!done)
                        break;
                    snprintf(opstext, sizeof(opstext), " ops=%lu ops_s=%.0f",
                             ops, ops / (now() - step_t0));
                }
                passes++;
                total_passes++;
                if (corrupt && total_passes == 1)
                    *(uint64_t *)(base + PAGE) ^= 1;   /* page 1, word 0 */
                if (passes == 1 || now() - last >= 1.0) {
                    last = now();
                    printf("MEMWORK step=%d wss_mib=%ld loop=%ld pass=%ld "
                           "pass_ms=%ld errors=%ld t=%.1f%s\n", s,
                           steps[s].mib, loop, passes,
                           (long)((last - start) * 1000), errors, last - t0,
                           opstext);
                }
                if (period_ms)
                    sleep_until(start + period_ms / 1000.0 < end
                                ? start + period_ms / 1000.0 : end);
            }
            if (pattern_kind != SEQ)
                snprintf(opstext, sizeof(opstext), " ops=%lu ops_s=%.0f",
                         ops, ops / (now() - step_t0));
            printf("MEMWORK end step=%d wss_mib=%ld loop=%ld passes=%ld "
                   "errors=%ld verified=%ld t=%.1f%s\n", s, steps[s].mib,
                   loop, passes, errors, verified, now() - t0, opstext);
        }
    }
    printf("MEMWORK done errors=%ld passes=%ld verified=%ld t=%.1f\n",
           errors, total_passes, verified, now() - t0);
    return errors ? 1 : 0;
}
