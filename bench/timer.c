/* timer.c - measure back-to-back serialized TSC reads: the overhead every timed region subtracts. */
#include "bench/timer.h"
#include "measure/stats.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/out.h"

#define TIMER_SAMPLES 1001

static ALWAYS_INLINE uint64_t rdtsc_cpuid(void)
{
    uint32_t r[4];
    cpuid_raw(0, 0, r); /* CPUID is fully serializing (SDM Vol. 3A 9.3) */
    return rdtsc_raw();
}

static double samples[TIMER_SAMPLES];

static void measure(const char *method)
{
    bool use_cpuid = method[0] == 'c';
    for (int w = 0; w < 100; w++) /* warm-up: caches, predictors */
        (void)rdtsc_ordered();
    for (size_t i = 0; i < TIMER_SAMPLES; i++) {
        uint64_t a, b;
        if (use_cpuid) {
            a = rdtsc_cpuid();
            b = rdtsc_cpuid();
        } else {
            a = rdtsc_ordered();
            b = rdtsc_ordered();
        }
        samples[i] = (double)(b - a);
    }
    struct stats s;
    stats_compute(samples, TIMER_SAMPLES, &s);
    struct json *j = rec_begin("timer");
    json_kv_str(j, "serialize", method);
    json_kv_str(j, "unit", "tsc");
    json_kv_str(j, "method", "back-to-back serialized rdtsc, median of samples");
    json_kv_double(j, "median_tsc", s.median);
    json_kv_double(j, "min_tsc", s.min);
    json_kv_double(j, "p10_tsc", s.p10);
    json_kv_double(j, "p90_tsc", s.p90);
    json_kv_double(j, "cv", s.cv);
    json_kv_uint(j, "samples", s.n);
    json_kv_double(j, "median_ns", tsc_to_ns(s.median));
    rec_end();
    kprintf("  rdtsc+%-6s median %8.1f ticks (%7.1f ns)  min %8.1f  p10 %8.1f  p90 %8.1f  cv %.3f  n=%lu\n", method,
            s.median, tsc_to_ns(s.median), s.min, s.p10, s.p90, s.cv, (unsigned long)s.n);
}

void bench_timer(void)
{
    measure("lfence");
    measure("cpuid");
}
