/*
 * faultlat: the page-fault latency a guest sees under real swapping.
 *
 * Maps a region larger than the guest can keep resident, writes every
 * page once (the guest swaps part of it out), then for a fixed time
 * touches random pages of the region (read and write one word) and times
 * each touch with CLOCK_MONOTONIC.  A touch of a resident page costs well
 * under a microsecond; one of a swapped-out page is a major fault: the
 * guest kernel reads the page back from its swap disk (and evicts another
 * to make room), so its time is the fault latency the workload sees.
 *
 * Parameters from /proc/cmdline (or "key=value" arguments on the host):
 *   faultlat.mib=N       region size in MiB (default 384)
 *   faultlat.seconds=S   measuring time after the fill (default 20)
 *   faultlat.cluster=K   write K to /proc/sys/vm/page-cluster first (swap
 *                        readahead of 2^K pages; default 0: one page per
 *                        fault, so a fault is one swap read; -1: leave)
 *   faultlat.seed=N      seed of the page order (default 1)
 *
 * Latencies go to a log-linear histogram (16 sub-buckets per power of
 * two: under 6.25 % error), so memory use does not grow with the count.
 * The F touches that were major faults (getrusage's ru_majflt over the
 * measuring time) are taken to be the F slowest: the fault percentiles
 * are those of the histogram's top F entries.
 *
 * Output, one line each:
 *   FAULTLAT start mib=384 seconds=20 cluster=0 memtotal_kb=... 
 *   FAULTLAT fill ms=... majflt=... pswpout=...
 *   FAULTLAT result touches=N majflt=F seconds=S touch_p50_ns=...
 *            touch_p90_ns=... touch_p99_ns=... fault_p50_ns=...
 *            fault_p90_ns=... fault_p99_ns=... fault_p999_ns=...
 *            max_ns=... mean_ns=... pswpin=... pswpout=...
 *   FAULTLAT done
 * ("fault_*" are absent when there was no major fault.)
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define SUB 16                        /* sub-buckets per power of two */
#define NBUCKETS (64 * SUB)

static uint64_t hist[NBUCKETS];

static long opt_mib = 384, opt_cluster = 0;
static double opt_seconds = 20;
static uint64_t opt_seed = 1;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* bucket of a latency: exact below 16 ns, then 16 per power of two */
static int bucket(uint64_t v)
{
    if (v < SUB)
        return (int)v;
    int e = 63 - __builtin_clzll(v);            /* 2^e <= v < 2^(e+1) */
    int sub = (int)((v >> (e - 4)) & (SUB - 1));
    return (e - 3) * SUB + sub;
}

/* the lowest latency of a bucket (the inverse of bucket()) */
static uint64_t bucket_low(int b)
{
    if (b < SUB)
        return (uint64_t)b;
    int e = b / SUB + 3, sub = b % SUB;
    return ((uint64_t)(SUB + sub)) << (e - 4);
}

/* the latency below which lie `rank` (0-based, from the fastest) of the
 * recorded touches: the middle of the bucket that holds that rank */
static uint64_t at_rank(uint64_t rank)
{
    uint64_t seen = 0;
    for (int b = 0; b < NBUCKETS; b++) {
        seen += hist[b];
        if (seen > rank) {
            uint64_t lo = bucket_low(b), hi = bucket_low(b + 1);
            return lo + (hi - lo) / 2;
        }
    }
    return 0;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void set(const char *key, const char *val)
{
    if (!strcmp(key, "faultlat.mib"))
        opt_mib = atol(val);
    else if (!strcmp(key, "faultlat.seconds"))
        opt_seconds = atof(val);
    else if (!strcmp(key, "faultlat.cluster"))
        opt_cluster = atol(val);
    else if (!strcmp(key, "faultlat.seed"))
        opt_seed = strtoull(val, NULL, 10);
}

static void parse_word(char *w)
{
    char *eq = strchr(w, '=');
    if (!eq)
        return;
    *eq = 0;
    set(w, eq + 1);
}

static void parse_cmdline(void)
{
    char buf[4096];
    FILE *f = fopen("/proc/cmdline", "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    for (char *save, *w = strtok_r(buf, " \n", &save); w;
         w = strtok_r(NULL, " \n", &save))
        parse_word(w);
}

static long vmstat(const char *key)
{
    char name[64];
    long v, found = -1;
    FILE *f = fopen("/proc/vmstat", "r");
    if (!f)
        return -1;
    while (fscanf(f, "%63s %ld", name, &v) == 2)
        if (!strcmp(name, key))
            found = v;
    fclose(f);
    return found;
}

static long meminfo(const char *key)
{
    char name[64], unit[16];
    long v;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    while (fscanf(f, "%63s %ld %15s", name, &v, unit) >= 2)
        if (!strncmp(name, key, strlen(key)) && name[strlen(key)] == ':') {
            fclose(f);
            return v;
        }
    fclose(f);
    return -1;
}

static long majflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_majflt;
}

/* one line per write(2): the console is shared with /init's output */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    if (write(1, line, n) < 0)
        exit(3);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            parse_word(argv[i]);
    } else {
        parse_cmdline();
    }
    if (opt_mib <= 0 || opt_seconds <= 0) {
        say("FAULTLAT fatal bad parameters");
        return 2;
    }
    if (opt_cluster >= 0) {
        FILE *f = fopen("/proc/sys/vm/page-cluster", "w");
        if (f) {
            fprintf(f, "%ld\n", opt_cluster);
            fclose(f);
        }
    }
    say("FAULTLAT start mib=%ld seconds=%g cluster=%ld memtotal_kb=%ld "
        "swaptotal_kb=%ld", opt_mib, opt_seconds, opt_cluster,
        meminfo("MemTotal"), meminfo("SwapTotal"));

    size_t size = (size_t)opt_mib << 20, pages = size / PAGE;
    volatile uint64_t *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        say("FAULTLAT fatal mmap");
        return 2;
    }
    madvise((void *)mem, size, MADV_NOHUGEPAGE);

    /* fill: every page gets its index, so a page that comes back wrong
     * is caught below */
    double t0 = now();
    long mf0 = majflt(), out0 = vmstat("pswpout");
    for (size_t p = 0; p < pages; p++)
        mem[p * (PAGE / 8)] = p;
    say("FAULTLAT fill ms=%.0f majflt=%ld pswpout=%ld",
        (now() - t0) * 1e3, majflt() - mf0, vmstat("pswpout") - out0);

    uint64_t seed = opt_seed * 0x9E3779B97F4A7C15ULL + 1, touches = 0;
    uint64_t errors = 0, max_ns = 0;
    double sum_ns = 0;
    long in1 = vmstat("pswpin"), out1 = vmstat("pswpout");
    mf0 = majflt();
    t0 = now();
    double end = t0 + opt_seconds;
    while (now() < end) {
        /* 64 touches between checks of the end time */
        for (int i = 0; i < 64; i++) {
            size_t p = xorshift(&seed) % pages;
            volatile uint64_t *w = &mem[p * (PAGE / 8)];
            uint64_t a = now_ns();
            uint64_t v = *w;
            *w = v;
            uint64_t d = now_ns() - a;
            if (v != p)
                errors++;
            hist[bucket(d)]++;
            sum_ns += (double)d;
            if (d > max_ns)
                max_ns = d;
            touches++;
        }
    }
    double secs = now() - t0;
    long faults = majflt() - mf0;
    if (faults > (long)touches)
        faults = (long)touches;

    char fl[256] = "";
    if (faults > 0) {
        uint64_t f = (uint64_t)faults, base = touches - f;
        snprintf(fl, sizeof fl, " fault_p50_ns=%llu fault_p90_ns=%llu "
                 "fault_p99_ns=%llu fault_p999_ns=%llu",
                 (unsigned long long)at_rank(base + f * 50 / 100),
                 (unsigned long long)at_rank(base + f * 90 / 100),
                 (unsigned long long)at_rank(base + f * 99 / 100),
                 (unsigned long long)at_rank(base + f * 999 / 1000));
    }
    say("FAULTLAT result touches=%llu majflt=%ld seconds=%.3f "
        "touch_p50_ns=%llu touch_p90_ns=%llu touch_p99_ns=%llu%s "
        "max_ns=%llu mean_ns=%.0f errors=%llu pswpin=%ld pswpout=%ld",
        (unsigned long long)touches, faults, secs,
        (unsigned long long)at_rank(touches * 50 / 100),
        (unsigned long long)at_rank(touches * 90 / 100),
        (unsigned long long)at_rank(touches * 99 / 100), fl,
        (unsigned long long)max_ns, sum_ns / (double)touches,
        (unsigned long long)errors, vmstat("pswpin") - in1,
        vmstat("pswpout") - out1);
    say("FAULTLAT done");
    return errors ? 1 : 0;
}
