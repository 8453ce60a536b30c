/* time.c - TSC calibration and the core/TSC clock ratio. */
#include "kernel/time.h"
#include "kernel/io.h"
#include "kernel/msr.h"

#define PM_TIMER_HZ 3579545ULL /* ACPI spec 4.8.2.1: the PM timer runs at 3.579545 MHz */
#define HPET_CAP 0x000
#define HPET_CONFIG 0x010
#define HPET_CONFIG_ENABLE 1ULL
#define HPET_COUNTER 0x0F0

static uint64_t g_tsc_hz;

uint64_t time_tsc_hz(void) { return g_tsc_hz; }

double tsc_to_ns(double ticks) { return g_tsc_hz ? ticks * 1e9 / (double)g_tsc_hz : 0.0; }

void tsc_delay_us(uint64_t us)
{
    uint64_t hz = g_tsc_hz ? g_tsc_hz : 1000000000ULL;
    uint64_t end = rdtsc_ordered() + us * hz / 1000000ULL;
    while (rdtsc_ordered() < end)
        cpu_pause();
}

static uint32_t pm_read(const struct time_ref *r)
{
    uint32_t v = r->pm_io ? inl((uint16_t)r->pm_addr) : mmio_read32(r->pm_addr);
    return r->pm_32bit ? v : (v & 0xFFFFFF);
}

/* One window against the PM timer: TSC ticks per PM tick interval, converted to Hz. Every wait is
 * bounded by a TSC budget so a dead timer cannot hang us (it just yields 0). */
static double measure_pm(const struct time_ref *r, uint32_t window_ms)
{
    uint32_t mask = r->pm_32bit ? 0xFFFFFFFFu : 0xFFFFFFu;
    uint64_t want = PM_TIMER_HZ * window_ms / 1000;
    uint64_t budget = 200000000000ULL; /* ~ a minute even at 4 GHz */
    uint32_t p0 = pm_read(r), p;
    uint64_t start = rdtsc_ordered(), t0, t1;
    /* Align to a tick edge so the window starts at a known phase. */
    while ((p = pm_read(r)) == p0)
        if (rdtsc_ordered() - start > budget / 64)
            return 0;
    t0 = rdtsc_ordered();
    p0 = p;
    uint64_t elapsed = 0;
    for (;;) {
        p = pm_read(r);
        elapsed = (p - p0) & mask;
        t1 = rdtsc_ordered();
        if (elapsed >= want)
            break;
        if (t1 - t0 > budget)
            return 0;
    }
    return (double)(t1 - t0) * (double)PM_TIMER_HZ / (double)elapsed;
}

static double measure_hpet(uint64_t base, uint32_t window_ms)
{
    uint64_t cap = mmio_read64(base + HPET_CAP);
    uint64_t fs = cap >> 32; /* counter period in femtoseconds */
    if (fs == 0 || fs > 100000000ULL)
        return 0;
    uint64_t cfg = mmio_read64(base + HPET_CONFIG);
    if (!(cfg & HPET_CONFIG_ENABLE))
        *(volatile uint64_t *)(uintptr_t)(base + HPET_CONFIG) = cfg | HPET_CONFIG_ENABLE;
    uint64_t want = (uint64_t)window_ms * 1000000000000ULL / fs;
    uint64_t budget = 200000000000ULL;
    uint64_t h0 = mmio_read64(base + HPET_COUNTER), t0 = rdtsc_ordered(), h, t1;
    do {
        h = mmio_read64(base + HPET_COUNTER);
        t1 = rdtsc_ordered();
        if (t1 - t0 > budget)
            return 0;
    } while (h - h0 < want);
    double secs = (double)(h - h0) * (double)fs * 1e-15;
    return (double)(t1 - t0) / secs;
}

static void sort_small(double *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
}

void time_calibrate(struct time_info *t, const struct time_ref *ref, uint64_t cpuid_hz, const char *cpuid_method,
                    uint32_t runs, uint32_t window_ms)
{
    double sorted[TIME_MAX_RUNS];
    if (runs > TIME_MAX_RUNS)
        runs = TIME_MAX_RUNS;
    t->cpuid_tsc_hz = cpuid_hz;
    t->cpuid_method = cpuid_hz ? cpuid_method : "none";
    t->measured_ref = "none";
    t->window_ms = window_ms;
    t->runs = 0;
    for (uint32_t i = 0; i < runs; i++) {
        double hz = 0;
        if (ref->pm_present) {
            hz = measure_pm(ref, window_ms);
            if (hz > 0)
                t->measured_ref = "acpi_pm_timer";
        }
        if (hz <= 0 && ref->hpet_base) {
            hz = measure_hpet(ref->hpet_base, window_ms);
            if (hz > 0)
                t->measured_ref = "hpet";
        }
        if (hz <= 0)
            break;
        t->run_hz[t->runs++] = hz;
    }
    if (t->runs) {
        memcpy(sorted, t->run_hz, t->runs * sizeof(double));
        sort_small(sorted, t->runs);
        double med = t->runs & 1 ? sorted[t->runs / 2] : (sorted[t->runs / 2 - 1] + sorted[t->runs / 2]) / 2;
        t->measured_tsc_hz = (uint64_t)med;
        t->spread = (sorted[t->runs - 1] - sorted[0]) / med;
    }
    if (cpuid_hz) {
        t->tsc_hz = cpuid_hz;
        t->tsc_method = cpuid_method;
    } else if (t->measured_tsc_hz) {
        t->tsc_hz = t->measured_tsc_hz;
        t->tsc_method = t->measured_ref;
    } else {
        t->tsc_hz = 0;
        t->tsc_method = "none";
    }
    g_tsc_hz = t->tsc_hz;
}

/* 256 dependent adds: each needs the previous result, and integer add has 1-cycle latency on every
 * x86-64 core, so the chain takes 256 core cycles per iteration whatever the issue width. */
static NOINLINE uint64_t add_chain(uint64_t iters)
{
    uint64_t x = 0;
    for (uint64_t i = 0; i < iters; i++) {
        __asm__ volatile(".rept 256\n\taddq $1, %0\n\t.endr" : "+r"(x));
    }
    return x;
}

void time_core_ratio(struct time_info *t, bool aperfmperf)
{
    double r[5];
    int n = 0;
    if (aperfmperf) {
        for (int i = 0; i < 5; i++) {
            uint64_t a0, m0, a1, m1;
            if (rdmsr_safe(MSR_IA32_APERF, &a0) || rdmsr_safe(MSR_IA32_MPERF, &m0))
                break;
            add_chain(20000);
            if (rdmsr_safe(MSR_IA32_APERF, &a1) || rdmsr_safe(MSR_IA32_MPERF, &m1))
                break;
            if (m1 <= m0 || a1 <= a0)
                break; /* counters that do not count (emulators) */
            r[n++] = (double)(a1 - a0) / (double)(m1 - m0);
        }
        if (n == 5) {
            t->core_tsc_method = "aperf_mperf";
            goto done;
        }
        n = 0;
    }
    add_chain(2000); /* warm-up */
    for (int i = 0; i < 5; i++) {
        uint64_t iters = 4000;
        uint64_t t0 = rdtsc_ordered();
        add_chain(iters);
        uint64_t t1 = rdtsc_ordered();
        r[n++] = (double)(iters * 256) / (double)(t1 - t0 ? t1 - t0 : 1);
    }
    t->core_tsc_method = "dependent_add_chain";
done:
    sort_small(r, n);
    t->core_tsc_ratio = r[n / 2];
    t->core_ratio_spread = (r[n - 1] - r[0]) / r[n / 2];
}
