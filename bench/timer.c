/* timer.c - measure back-to-back serialized TSC reads: the overhead every timed region subtracts. */
#include "bench/timer.h"
#include "measure/engine.h"
#include "measure/stats_json.h"
#include "measure/verdict.h"
#include "kernel/fmt.h"
#include "measure/timing.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/out.h"

#define TIMER_SAMPLES 1001

static double samples[TIMER_SAMPLES];

/* Nothing: what is timed is the engine's region itself, two serialized reads and this call. */
static NOINLINE void empty_body(void *ctx, uint64_t iters)
{
    (void)ctx;
    (void)iters;
    timing_barrier();
}

static void measure(enum timing_serialize ser)
{
    const char *method = ser == TIMING_CPUID ? "cpuid" : "lfence";
    struct meas_spec spec = {
        .body = empty_body,
        .serialize = ser,
        .warmup_samples = 100, /* caches, predictors */
        .iters = 1,
        .min_samples = TIMER_SAMPLES,
        .max_samples = TIMER_SAMPLES,
    };
    struct meas_result m;
    if (meas_run(&spec, samples, TIMER_SAMPLES, &m) != MEAS_OK) {
        kprintf("  rdtsc+%-6s the clock went backwards\n", method);
        return;
    }
    const struct stats *s = &m.st;
    struct json *j = rec_begin("timer");
    json_kv_str(j, "serialize", method);
    json_kv_str(j, "method", "an empty timed region of the measurement engine: two back-to-back serialized "
                             "rdtsc around a call, no overhead subtracted");
    char name[LEDGER_NAME_MAX];
    fmt_snprintf(name, sizeof(name), "timer/%s", method);
    struct verdict v;
    verdict_from_stats(&v, s, true, 0, 6); /* a fixed count of samples: no stop rule, no CI target */
    figure_json(j, name, s, UNIT_TSC, &v);
    stats_json_also(j, UNIT_NS, tsc_to_ns(s->median));
    rec_end();
    kprintf("  rdtsc+%-6s median %8.1f ticks (%7.1f ns)  min %8.1f  p10 %8.1f  p90 %8.1f  spread %.3f  n=%lu\n",
            method, s->median, tsc_to_ns(s->median), s->min, s->p10, s->p90, s->spread, (unsigned long)s->n);
}

void bench_timer(void)
{
    measure(TIMING_LFENCE);
    measure(TIMING_CPUID);
}
