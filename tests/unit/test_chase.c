/* test_chase.c - the chase loop and measurement protocol: load counts, calibration, stop rules, clocks.
 * Structure only: no assertion depends on how fast this machine is. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "measure/chain.h"
#include "measure/chase.h"
#include "measure/timing.h"

struct chain {
    char *buf;
    uint32_t *scratch;
    void *start;
    size_t n;
};

static struct chain chain_new(size_t lines, uint64_t seed)
{
    struct chain c;
    struct chain_params p = {.bytes = lines * 64, .line = 64, .mode = CHAIN_RANDOM, .seed = seed};
    c.buf = aligned_alloc(4096, ALIGN_UP(p.bytes, 4096));
    c.scratch = malloc(chain_scratch_bytes(&p));
    c.start = chain_build(c.buf, &p, c.scratch, chain_scratch_bytes(&p), &c.n);
    assert_non_null(c.start);
    return c;
}

static void chain_free(struct chain *c)
{
    free(c->buf);
    free(c->scratch);
}

static void *walk(void *p, uint64_t steps)
{
    while (steps--)
        p = *(void **)p;
    return p;
}

static void test_chase_run_counts_loads(void **state)
{
    (void)state;
    struct chain c = chain_new(101, 1); /* prime length: any miscount lands elsewhere */
    for (uint64_t k = 0; k < 6; k++)
        assert_ptr_equal(chase_run(c.start, k), walk(c.start, k * CHASE_UNROLL));
    assert_ptr_equal(chase_run(c.start, 1000), walk(c.start, 1000 * CHASE_UNROLL));
    chain_free(&c);
}

/* ---- scripted clock ---------------------------------------------------------------------------- */

/* Plays the role of the TSC for chase_measure's documented call sequence: one read at the start, then
 * pairs around each timed region: CHASE_OVERHEAD_REPS empty ones, the calibration (1, 2, 4... iterations
 * until loads x tpl >= min_sample), then samples at the calibrated length. A region's end read advances
 * time by ov + loads x tpl (+ 0, 1 or 2 x jitter, cycling over the samples); each start read by gap. */
struct script {
    uint64_t t, calls;
    uint64_t ov, tpl, min_sample, gap, jitter;
    uint64_t cal_iters; /* derived: calibrated iterations */
    int mode;           /* 0 normal, 1 runs backwards, 2 stands still */
};

static void script_init(struct script *s, uint64_t ov, uint64_t tpl, uint64_t min_sample)
{
    memset(s, 0, sizeof(*s));
    s->t = 1000000;
    s->ov = ov;
    s->tpl = tpl;
    s->min_sample = min_sample;
    s->cal_iters = 1;
    while (s->cal_iters * CHASE_UNROLL * tpl < min_sample)
        s->cal_iters *= 2;
}

static uint64_t script_clock(void *ctx)
{
    struct script *s = ctx;
    uint64_t call = s->calls++;
    if (s->mode == 1)
        return s->t -= 7;
    if (s->mode == 2)
        return 0;
    if (call == 0)
        return s->t;
    uint64_t pair = (call - 1) / 2;
    if ((call - 1) % 2 == 0)
        return s->t += s->gap;
    uint64_t iters;
    if (pair < CHASE_OVERHEAD_REPS) {
        iters = 0;
    } else {
        uint64_t c = pair - CHASE_OVERHEAD_REPS; /* calibration step, then samples */
        iters = c < 63 && (1ull << c) < s->cal_iters ? 1ull << c : s->cal_iters;
    }
    uint64_t sample = pair - CHASE_OVERHEAD_REPS;
    uint64_t extra = (iters == s->cal_iters && pair >= CHASE_OVERHEAD_REPS) ? sample % 3 * s->jitter : 0;
    return s->t += s->ov + iters * CHASE_UNROLL * s->tpl + extra;
}

static struct chase_opts script_opts(struct script *s)
{
    struct chase_opts o;
    chase_opts_default(&o);
    o.min_sample_tsc = s->min_sample;
    o.clock = script_clock;
    o.clock_ctx = s;
    return o;
}

/* Loads done before sampling: warm-up (one pass, rounded up to whole iterations) + calibration. */
static uint64_t pre_sample_loads(size_t n_elems, uint64_t cal_iters)
{
    uint64_t warm = (n_elems + CHASE_UNROLL - 1) / CHASE_UNROLL * CHASE_UNROLL;
    return warm + (2 * cal_iters - 1) * CHASE_UNROLL;
}

static void test_measure_scripted(void **state)
{
    (void)state;
    struct chain c = chain_new(1000, 2);
    struct script s;
    /* 3 ticks/load: 32 iterations take 6144 + 40 ticks, enough only if the overhead were counted as
     * sample time; 64 iterations (12288) are the first to pass. */
    script_init(&s, 40, 3, 6150);
    assert_int_equal(s.cal_iters, 64);
    struct chase_opts o = script_opts(&s);
    double buf[100];
    struct chase_result r;
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 100, &r), CHASE_OK);

    assert_true(r.overhead_tsc == 40);
    assert_true(r.loads_per_sample == 64 * CHASE_UNROLL);
    /* Identical samples: robust CV 0, so it stops at min_samples. */
    assert_true(r.converged);
    assert_false(r.budget_hit);
    assert_int_equal(r.samples, o.min_samples);
    assert_int_equal(r.tsc_per_load.n, r.samples);
    assert_true(r.tsc_per_load.median == 3.0 && r.tsc_per_load.min == 3.0 && r.tsc_per_load.max == 3.0);
    assert_true(r.loads_total == pre_sample_loads(c.n, 64) + r.samples * r.loads_per_sample);
    assert_ptr_equal(r.end, walk(c.start, r.loads_total));
    /* Every read accounted for: 1 + 2 x (overhead + calibration + samples). */
    assert_int_equal(s.calls, 1 + 2 * (CHASE_OVERHEAD_REPS + 7 + r.samples));
    assert_true(r.elapsed_tsc == s.t - 1000000);
    chain_free(&c);
}

/* Alternating samples never reach the target spread: sampling runs to max_samples. */
static void test_measure_max_samples(void **state)
{
    (void)state;
    struct chain c = chain_new(64, 3);
    struct script s;
    script_init(&s, 10, 2, 100);
    s.jitter = 32; /* +0/32/64 ticks over 64 loads: 2.0, 2.5, 3.0 per load, robust CV 0.3 */
    struct chase_opts o = script_opts(&s);
    o.max_samples = 30;
    double buf[100];
    struct chase_result r;
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 100, &r), CHASE_OK);
    assert_true(r.loads_per_sample == CHASE_UNROLL); /* 64 loads x 2 ticks >= 100 */
    assert_int_equal(r.samples, 30);
    assert_false(r.converged);
    assert_false(r.budget_hit);
    assert_true(r.tsc_per_load.min == 2.0);
    assert_true(r.tsc_per_load.max == 3.0);
    assert_true(r.tsc_per_load.median == 2.5);
    for (size_t i = 1; i < r.samples; i++) /* returned sorted */
        assert_true(buf[i - 1] <= buf[i]);
    assert_ptr_equal(r.end, walk(c.start, r.loads_total));

    /* sample_cap below max_samples wins. */
    script_init(&s, 10, 2, 100);
    s.jitter = 32;
    o = script_opts(&s);
    o.max_samples = 30;
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 12, &r), CHASE_OK);
    assert_int_equal(r.samples, 12);
    chain_free(&c);
}

static void test_measure_budget(void **state)
{
    (void)state;
    struct chain c = chain_new(64, 4);
    struct script s;
    double buf[1000];
    struct chase_result r;

    /* 1e6 ticks between regions, budget 5e7 of sampling: ends on the budget after ~50 samples. */
    script_init(&s, 10, 2, 100);
    s.gap = 1000000;
    s.jitter = 32;
    struct chase_opts o = script_opts(&s);
    o.budget_tsc = 50000000;
    o.target_ci = 0;
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 1000, &r), CHASE_OK);
    assert_true(r.budget_hit);
    assert_false(r.converged);
    assert_true(r.elapsed_tsc >= o.budget_tsc);
    assert_true(r.samples >= 45 && r.samples <= 51);
    assert_ptr_equal(r.end, walk(c.start, r.loads_total));

    /* A budget too small for one sample still yields min_samples, and does not cut the calibration
     * short (samples keep their minimum length). */
    script_init(&s, 10, 2, 100000);
    s.gap = 1000;
    o = script_opts(&s);
    o.budget_tsc = 1;
    o.min_samples = 5;
    o.target_ci = 0;
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 1000, &r), CHASE_OK);
    assert_int_equal(r.samples, 5);
    assert_true(r.budget_hit);
    assert_true(r.loads_per_sample == s.cal_iters * CHASE_UNROLL);
    assert_true(s.cal_iters == 1024);
    chain_free(&c);
}

static void test_measure_bad_clock(void **state)
{
    (void)state;
    struct chain c = chain_new(64, 5);
    struct script s;
    double buf[16];
    struct chase_result r;
    script_init(&s, 10, 2, 100);
    s.mode = 1;
    struct chase_opts o = script_opts(&s);
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 16, &r), CHASE_ECLOCK);
    script_init(&s, 10, 2, 100);
    s.mode = 2;
    o = script_opts(&s);
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 16, &r), CHASE_ECLOCK);
    chain_free(&c);
}

static void test_measure_einval(void **state)
{
    (void)state;
    struct chain c = chain_new(64, 6);
    struct chase_opts o;
    chase_opts_default(&o);
    double buf[16];
    struct chase_result r;
    assert_int_equal(chase_measure(NULL, c.n, &o, buf, 16, &r), CHASE_EINVAL);
    assert_int_equal(chase_measure(c.start, 0, &o, buf, 16, &r), CHASE_EINVAL);
    assert_int_equal(chase_measure(c.start, c.n, NULL, buf, 16, &r), CHASE_EINVAL);
    assert_int_equal(chase_measure(c.start, c.n, &o, NULL, 16, &r), CHASE_EINVAL);
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 0, &r), CHASE_EINVAL);
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 16, NULL), CHASE_EINVAL);
    o.min_samples = 17; /* more than the buffer holds */
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 16, &r), CHASE_EINVAL);
    o.min_samples = 10;
    o.max_samples = 5;
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 16, &r), CHASE_EINVAL);
    chase_opts_default(&o);
    o.warmup_passes = SIZE_MAX; /* warm-up load count would overflow */
    assert_int_equal(chase_measure(c.start, c.n, &o, buf, 16, &r), CHASE_EINVAL);
    chain_free(&c);
}

/* The real serialized RDTSC on a real 16 KiB chain (both fences). Values are not judged, only shape. */
static void test_measure_real_tsc(void **state)
{
    (void)state;
    struct chain c = chain_new(256, 7);
    static const enum timing_serialize ser[] = {TIMING_LFENCE, TIMING_CPUID};
    for (int k = 0; k < 2; k++) {
        struct chase_opts o;
        chase_opts_default(&o);
        o.serialize = ser[k];
        o.min_sample_tsc = 20000;
        o.max_samples = 40;
        o.warmup_passes = 2;
        double buf[64];
        struct chase_result r;
        assert_int_equal(chase_measure(c.start, c.n, &o, buf, 64, &r), CHASE_OK);
        assert_true(r.samples >= o.min_samples && r.samples <= 40);
        assert_int_equal(r.tsc_per_load.n, r.samples);
        assert_true(r.loads_per_sample >= CHASE_UNROLL && r.loads_per_sample % CHASE_UNROLL == 0);
        /* What holds whatever the machine's load does to the durations (an interrupted overhead repetition or
         * calibration region moves values, never these relations): the overhead is a median of tick
         * differences of a clock that never runs backwards; every sample is (ticks - overhead) / loads of a
         * region that lasted >= 0 ticks, so sample x loads + overhead >= 0; the samples come back sorted and
         * the statistics are theirs. The exact arithmetic is test_measure_protocol's, on a scripted clock. */
        assert_true(r.overhead_tsc >= 0 && isfinite(r.overhead_tsc));
        double lps = (double)r.loads_per_sample;
        for (size_t i = 0; i < r.samples; i++) {
            assert_true(isfinite(buf[i]));
            assert_true(buf[i] * lps + r.overhead_tsc >= -1e-6 * (r.overhead_tsc + 1));
            if (i)
                assert_true(buf[i - 1] <= buf[i]);
        }
        assert_true(r.tsc_per_load.min == buf[0] && r.tsc_per_load.max == buf[r.samples - 1]);
        assert_true(r.tsc_per_load.min <= r.tsc_per_load.median && r.tsc_per_load.median <= r.tsc_per_load.max);
        /* warm-up is two full passes (rounded up to whole iterations) */
        assert_true(r.loads_total >= 2 * c.n + r.samples * r.loads_per_sample);
        assert_ptr_equal(r.end, walk(c.start, r.loads_total));
        assert_true(r.elapsed_tsc > 0);
    }
    chain_free(&c);
}

static void test_timing_helpers(void **state)
{
    (void)state;
    uint64_t a = timing_rdtsc(), b = timing_rdtsc();
    assert_true(b >= a); /* one thread, invariant TSC: never backwards */
    a = timing_rdtsc_cpuid();
    b = timing_read(TIMING_CPUID);
    assert_true(b >= a);
    timing_pause();
    timing_lfence();
    timing_barrier();
    assert_true(TIMING_RDPMC_FIXED(1) == 0x40000001u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chase_run_counts_loads), cmocka_unit_test(test_measure_scripted),
        cmocka_unit_test(test_measure_max_samples),    cmocka_unit_test(test_measure_budget),
        cmocka_unit_test(test_measure_bad_clock),      cmocka_unit_test(test_measure_einval),
        cmocka_unit_test(test_measure_real_tsc),       cmocka_unit_test(test_timing_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
