/* time.c - TSC calibration against every reference timer present, the start-up core/TSC ratio, and their JSON. */
#include "kernel/time.h"
#include "kernel/io.h"

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

static void ref_summarize(struct time_ref_result *r)
{
    double sorted[TIME_MAX_RUNS];
    if (!r->runs)
        return;
    memcpy(sorted, r->run_hz, r->runs * sizeof(double));
    sort_small(sorted, r->runs);
    double med = r->runs & 1 ? sorted[r->runs / 2] : (sorted[r->runs / 2 - 1] + sorted[r->runs / 2]) / 2;
    r->hz = (uint64_t)med;
    r->spread = (sorted[r->runs - 1] - sorted[0]) / med;
}

void time_calibrate(struct time_info *t, const struct time_ref *ref, uint64_t cpuid_hz, const char *cpuid_method,
                    uint32_t runs, uint32_t window_ms)
{
    if (runs > TIME_MAX_RUNS)
        runs = TIME_MAX_RUNS;
    t->cpuid_tsc_hz = cpuid_hz;
    t->cpuid_method = cpuid_hz ? cpuid_method : "none";
    t->window_ms = window_ms;
    memset(&t->pm_timer, 0, sizeof(t->pm_timer));
    memset(&t->hpet, 0, sizeof(t->hpet));
    /* Both references, windows interleaved so that both see the same TSC; a timer that stops answering
     * (a window returns 0) is not asked again. */
    bool pm = ref->pm_present, hpet = ref->hpet_base != 0;
    for (uint32_t i = 0; i < runs && (pm || hpet); i++) {
        double hz;
        if (pm) {
            hz = measure_pm(ref, window_ms);
            if (hz > 0)
                t->pm_timer.run_hz[t->pm_timer.runs++] = hz;
            else
                pm = false;
        }
        if (hpet) {
            hz = measure_hpet(ref->hpet_base, window_ms);
            if (hz > 0)
                t->hpet.run_hz[t->hpet.runs++] = hz;
            else
                hpet = false;
        }
    }
    ref_summarize(&t->pm_timer);
    ref_summarize(&t->hpet);

    const struct time_ref_result *primary = t->pm_timer.hz ? &t->pm_timer : t->hpet.hz ? &t->hpet : NULL;
    t->measured_ref = primary == &t->pm_timer ? "acpi_pm_timer" : primary ? "hpet" : "none";
    t->measured_tsc_hz = primary ? primary->hz : 0;
    t->runs = primary ? primary->runs : 0;
    t->spread = primary ? primary->spread : 0;
    if (primary)
        memcpy(t->run_hz, primary->run_hz, primary->runs * sizeof(double));
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

void time_core_ratio(struct time_info *t, bool aperfmperf)
{
    core_clock_measure(&t->core, aperfmperf);
    t->core_tsc_ratio = t->core.ratio;
    t->core_tsc_method = t->core.method;
    t->core_ratio_spread = t->core.spread;
}

static void kv_hz(struct json *j, const char *k, uint64_t hz)
{
    if (hz)
        json_kv_uint(j, k, hz);
    else
        json_kv_null(j, k);
}

void time_json(struct json *j, const struct time_info *t)
{
    const struct core_clock *c = &t->core;
    kv_hz(j, "tsc_hz_pm_timer", t->pm_timer.hz);
    kv_hz(j, "tsc_hz_hpet", t->hpet.hz);
    kv_hz(j, "tsc_hz_cpuid", t->cpuid_tsc_hz);
    json_kv_str(j, "tsc_hz_cpuid_source", t->cpuid_method);
    if (t->pm_timer.hz)
        json_kv_double(j, "tsc_spread_pm_timer", t->pm_timer.spread);
    else
        json_kv_null(j, "tsc_spread_pm_timer");
    if (t->hpet.hz)
        json_kv_double(j, "tsc_spread_hpet", t->hpet.spread);
    else
        json_kv_null(j, "tsc_spread_hpet");
    json_kv_double_or_null(j, "core_tsc_ratio_add", c->chain[CORE_CHAIN_ADD].valid, c->chain[CORE_CHAIN_ADD].ratio);
    json_kv_double_or_null(j, "core_tsc_ratio_imul", c->chain[CORE_CHAIN_IMUL].valid, c->chain[CORE_CHAIN_IMUL].ratio);
    json_kv_double_or_null(j, "core_tsc_ratio_aperf", c->aperf_valid, c->aperf_ratio);
    json_kv_uint(j, "core_tsc_imul_latency", c->chain[CORE_CHAIN_IMUL].latency);
    if (c->agree < 0)
        json_kv_null(j, "core_tsc_agree");
    else
        json_kv_bool(j, "core_tsc_agree", c->agree == 1);
    json_kv_str(j, "core_tsc_suspect", c->suspect);
    json_kv_str(j, "core_tsc_note", c->note);
}
