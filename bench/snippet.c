/* snippet.c - the snippet benchmark: generate the n and 2n variants, run them under a guard (fault and watchdog), time them
 * through the engine's paired n-vs-2n regions, count instructions and the snippet's events, one `snippet` record each. */
#include "bench/snippet.h"
#include "bench/clock.h"
#include "bench/cycle_accounting.h"
#include "bench/timed_loop.h"
#include "bench/platform.h"
#include "bench/snippet_gen.h"
#include "kernel/fmt.h"
#include "measure/engine.h"
#include "measure/stats_json.h"
#include "measure/timing.h"
#include "measure/verdict.h"
#include "pmu/pmu_bench_api.h"

#define SCRATCH_BYTES MiB(1) /* R14 points to its middle: [r14 - 512 KiB, r14 + 512 KiB) is the snippet's */
#define COUNT_REPS 3         /* event counts: median of this many counted runs per variant */

static struct snippet_set SET;

int snippet_configure(const char *text, size_t len, unsigned line, const char *origin, char *err, size_t errlen)
{
    return snippet_cfg_parse(&SET, text, len, line, origin, err, errlen);
}

const struct snippet_set *snippet_set(void) { return &SET; }

/* ---- timing ---------------------------------------------------------------------------------------------- */

struct sn_ctx {
    void (*big)(void *);
    void (*small)(void *);
    void *r14;
    uint64_t calls; /* event counting: calls per counted run */
};

static NOINLINE void body_big(void *ctx, uint64_t iters)
{
    struct sn_ctx *c = ctx;
    for (uint64_t i = 0; i < iters; i++)
        c->big(c->r14);
}

static NOINLINE void body_small(void *ctx, uint64_t iters)
{
    struct sn_ctx *c = ctx;
    for (uint64_t i = 0; i < iters; i++)
        c->small(c->r14);
}

static void count_big(void *ctx) { body_big(ctx, ((struct sn_ctx *)ctx)->calls); }
static void count_small(void *ctx) { body_small(ctx, ((struct sn_ctx *)ctx)->calls); }

static double samples[PM_MAX_SAMPLES];

static double nan_(void) { return __builtin_nan(""); }

static double median3(double *v, size_t n)
{
    stats_sort(v, n);
    return n ? stats_quantile_sorted(v, n, 0.5) : nan_();
}

/* Counts ev (resolved per candidate list) around `calls` calls of each variant; per copy = (big - small) /
 * (calls x copies). Returns the number counted, or -1 with why. */
static int count_events(struct sn_ctx *c, struct ca_event *ev, size_t n, bool differencing, double copies,
                        double *per_copy, char *why, size_t whylen)
{
    double vb[CA_MAX_EVENTS][COUNT_REPS], vs[CA_MAX_EVENTS][COUNT_REPS];
    int got = -1;
    for (int rep = 0; rep < COUNT_REPS; rep++) {
        got = ca_count(ev, n, count_big, c, why, whylen);
        if (got <= 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            vb[i][rep] = ev[i].used ? (double)ev[i].count : nan_();
        if (differencing) {
            if (ca_count(ev, n, count_small, c, why, whylen) <= 0)
                return -1;
            for (size_t i = 0; i < n; i++)
                vs[i][rep] = ev[i].used ? (double)ev[i].count : nan_();
        }
    }
    for (size_t i = 0; i < n; i++) {
        double b = median3(vb[i], COUNT_REPS), s = differencing ? median3(vs[i], COUNT_REPS) : 0;
        per_copy[i] = ev[i].used ? (b - s) / ((double)c->calls * copies) : nan_();
    }
    return got;
}

int snippet_measure(const struct snippet *s, void (*big)(void *), void (*small)(void *), void *r14,
                    uint64_t (*clock)(void *), void *clock_ctx, struct meas_result *mr, struct snippet_result *r)
{
    struct pm_opts o;
    pm_opts_profile(&o);
    struct sn_ctx c = {big, small, r14, 0};
    /* Copies per timed call that the value is divided by: the 2n variant's extra copies, or all of them. */
    double copies = (double)snippet_iters_per_call(s);
    memset(r, 0, sizeof(*r));
    r->instructions = nan_();
    for (size_t i = 0; i < SNIPPET_EVENTS_MAX; i++)
        r->counters[i] = nan_();
    for (uint32_t i = 0; i < s->warmup; i++) {
        big(r14);
        if (s->differencing)
            small(r14);
    }
    bool counter = !clock && pmu_core_cycles_method();
    uint64_t c0 = 0, c1 = 0, t0 = 0, t1 = 0;
    bool ok0 = counter && pmu_core_cycles_read(&c0);
    t0 = timing_rdtsc();
    struct meas_spec spec = {
        .body = body_big,
        .base = s->differencing ? body_small : NULL,
        .ctx = &c,
        .clock = clock,
        .clock_ctx = clock_ctx,
        .serialize = o.serialize,
        /* With n vs 2n the harness cancels in every region; without, only the clock reads are subtracted. */
        .overhead_reps = s->differencing ? 0 : PM_OVERHEAD_REPS,
        .iters = 1,
        .min_sample_ticks = o.min_sample_tsc,
        .max_iters = PM_MAX_ITERS,
        .work_per_iter = copies,
        .min_samples = o.min_samples,
        .max_samples = o.max_samples,
        .target_ci = o.target_ci,
        .budget_ticks = o.budget_tsc,
    };
    int rc = meas_run(&spec, samples, PM_MAX_SAMPLES, mr);
    if (rc != MEAS_OK) {
        r->why = rc == MEAS_ECLOCK ? "the clock went backwards or stood still" : "the engine refused the measurement";
        return -1;
    }
    /* Core cycles per TSC tick over this measurement's window from the cycle counter, else the ratio measured
     * before this benchmark (clock.h). A scripted clock (tests) counts cycles already: ratio 1. */
    /* Into r itself, not a static buffer: the hosted runner hands back only the job's memory (plat_guard_run). */
    char *m = r->cycles_method_buf;
    if (clock) {
        r->ratio = 1;
        fmt_snprintf(m, sizeof(r->cycles_method_buf), "scripted clock");
    } else if (ok0 && pmu_core_cycles_read(&c1) && (t1 = timing_rdtsc()) > t0 && c1 > c0) {
        r->ratio = (double)(c1 - c0) / (double)(t1 - t0);
        fmt_snprintf(m, sizeof(r->cycles_method_buf), "fixed_counter:%s", pmu_core_cycles_method());
    } else {
        const char *how = NULL;
        r->ratio = clock_core_ratio(&how);
        fmt_snprintf(m, sizeof(r->cycles_method_buf), "%s", how ? how : "core_tsc_ratio");
    }
    r->cycles_method = m;
    double agg = s->aggregate == SNIPPET_AGG_MIN ? mr->st.min : mr->st.median;
    r->tsc_per_iter = agg;
    r->cycles = agg * r->ratio;
    r->measured = true;

    /* Instructions and the snippet's events, counted over the calibrated number of calls. */
    c.calls = mr->iters ? mr->iters : 1;
    struct ca_event ev[1 + SNIPPET_EVENTS_MAX];
    const char *user[SNIPPET_EVENTS_MAX][2];
    size_t n = 0;
    ev[n++] = (struct ca_event){.candidates = ca_ev_instructions};
    for (size_t i = 0; i < s->n_events; i++) {
        user[i][0] = s->events[i];
        user[i][1] = NULL;
        ev[n++] = (struct ca_event){.candidates = user[i]};
    }
    double per[1 + SNIPPET_EVENTS_MAX];
    const char *no;
    if (!ca_can_count(&no)) {
        fmt_snprintf(r->counters_why, sizeof(r->counters_why), "%s", no ? no : "no PMU counting in this run");
    } else if (count_events(&c, ev, n, s->differencing, copies, per, r->counters_why, sizeof(r->counters_why)) >= 0) {
        r->instructions = per[0];
        r->instructions_method = ev[0].used;
        for (size_t i = 0; i < s->n_events; i++) {
            r->counters[i] = per[1 + i];
            r->counter_used[i] = ev[1 + i].used;
        }
        r->n_counters = s->n_events;
        /* What could not be counted, and why (each list's note: the PMU's refusal). */
        size_t at = 0;
        r->counters_why[0] = 0;
        for (size_t i = 0; i < n && at < sizeof(r->counters_why); i++)
            if (!ev[i].used)
                at += (size_t)fmt_snprintf(r->counters_why + at, sizeof(r->counters_why) - at, "%s%s: %s",
                                           at ? "; " : "", i ? s->events[i - 1] : "instructions",
                                           ev[i].note[0] ? ev[i].note : "not counted");
    }
    return 0;
}

/* ---- the benchmark ---------------------------------------------------------------------------------------- */

/* bytes as lowercase hex into out (2n + 1 bytes). */
static const char *hex_of(const uint8_t *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = 0;
    return out;
}

/* The snippet's identity in every record: its name, its bytes (hex, so the record alone reproduces it) and shape. */
static void snippet_head(struct json *j, const struct snippet *s)
{
    static char hex[2 * MAX(SNIPPET_CODE_MAX, SNIPPET_INIT_MAX) + 1];
    json_kv_str(j, "name", s->name);
    json_kv_uint(j, "code_bytes", s->code_len);
    json_kv_str(j, "code", hex_of(s->code, s->code_len, hex));
    json_kv_uint(j, "init_bytes", s->init_len);
    json_kv_str(j, "init", hex_of(s->init, s->init_len, hex));
    json_kv_uint(j, "unroll", s->unroll);
    json_kv_uint(j, "loop", s->loop);
}

static void record_unavailable(const struct snippet *s, const char *why)
{
    struct verdict v;
    verdict_unavailable(&v, why);
    struct json *j = plat_rec_begin("snippet");
    char fig[LEDGER_NAME_MAX];
    fmt_snprintf(fig, sizeof(fig), "snippet/%s", s->name);
    snippet_head(j, s);
    figure_json(j, fig, NULL, UNIT_CYCLES, &v);
    json_kv_null(j, "cycles");
    plat_rec_end();
    plat_printf("snippet %-20s unavailable: %s\n", s->name, why);
}

static void record_result(const struct snippet *s, const struct meas_result *mr, const struct snippet_result *r,
                          const char *method)
{
    const struct plat_config *cfg = plat_config();
    struct stats st = mr->st;
    stats_scale(&st, r->ratio); /* TSC ticks (or scripted cycles) per copy -> core cycles per copy */
    struct verdict v;
    verdict_from_stats(&v, &st, mr->converged, meas_ci_target(cfg->quick), meas_min_samples(cfg->quick));
    if (v.q != QUALITY_UNAVAILABLE && !(r->cycles > 0))
        verdict_worsen(&v, QUALITY_SUSPECT, "%.3g cycles per copy: not positive (the code takes no measurable time, "
                                            "or the n vs 2n difference drowned in noise)", r->cycles);
    char fig[LEDGER_NAME_MAX];
    fmt_snprintf(fig, sizeof(fig), "snippet/%s", s->name);
    struct json *j = plat_rec_begin("snippet");
    snippet_head(j, s);
    json_kv_uint(j, "warmup", s->warmup);
    json_kv_bool(j, "differencing", s->differencing);
    json_kv_str(j, "aggregate", s->aggregate == SNIPPET_AGG_MIN ? "min" : "median");
    json_kv_uint(j, "cpu", 0);
    figure_json(j, fig, &st, UNIT_CYCLES, &v);
    json_kv_double(j, "cycles", r->cycles);
    json_kv_str(j, "cycles_method", r->cycles_method);
    json_kv_double(j, "core_tsc_ratio", r->ratio);
    json_kv_double(j, "tsc_per_iter", r->tsc_per_iter);
    json_kv_uint(j, "calls_per_sample", mr->iters);
    json_kv_double_or_null(j, "instructions", r->instructions == r->instructions, r->instructions);
    if (r->instructions_method)
        json_kv_str(j, "instructions_method", r->instructions_method);
    else
        json_kv_null(j, "instructions_method");
    json_key(j, "counters");
    json_obj_begin(j);
    for (size_t i = 0; i < s->n_events; i++)
        json_kv_double_or_null(j, s->events[i], r->counters[i] == r->counters[i], r->counters[i]);
    json_obj_end(j);
    if (r->counters_why[0])
        json_kv_str(j, "counters_why", r->counters_why);
    json_kv_str(j, "method", method);
    plat_rec_end();

    char ins[48] = "";
    if (r->instructions == r->instructions)
        fmt_snprintf(ins, sizeof(ins), ", %.3f instructions", r->instructions);
    plat_printf("snippet %-20s %9.3f cycles per copy [%.3f, %.3f] n=%zu %s%s (%s)%s%s\n", s->name, r->cycles, st.ci_lo,
                st.ci_hi, st.n, quality_name(v.q), ins, r->cycles_method, v.reason[0] ? ": " : "", v.reason);
    for (size_t i = 0; i < s->n_events; i++)
        plat_printf("snippet %-20s   %-40s %12.3f per copy\n", s->name, s->events[i], r->counters[i]);
}

static struct plat_buf scratch;

/* One guarded call: the inputs, and everything the measurement writes (plat_guard_run: the hosted runner runs it
 * in a child process and copies this struct back, nothing else). */
struct sn_job {
    const struct snippet *s;
    void (*big)(void *);
    void (*small)(void *);
    void *r14;
    int rc;
    struct meas_result mr;
    struct snippet_result r;
    char why[96], instructions_method[64]; /* r's strings, as text: the caller follows no pointer the code wrote */
};

static void run_job(void *arg)
{
    struct sn_job *j = arg;
    j->rc = snippet_measure(j->s, j->big, j->small, j->r14, NULL, NULL, &j->mr, &j->r);
    fmt_snprintf(j->why, sizeof(j->why), "%s", j->r.why ? j->r.why : "");
    fmt_snprintf(j->instructions_method, sizeof(j->instructions_method), "%s",
                 j->r.instructions_method ? j->r.instructions_method : "");
}

/* What the guarded call handed back, as the caller may use it: its text NUL-terminated and r's pointers to it
 * (in the hosted runner the job came from a process the snippet could write anywhere in). */
static void job_result(struct sn_job *j)
{
    j->why[sizeof(j->why) - 1] = 0;
    j->instructions_method[sizeof(j->instructions_method) - 1] = 0;
    j->r.cycles_method_buf[sizeof(j->r.cycles_method_buf) - 1] = 0;
    j->r.counters_why[sizeof(j->r.counters_why) - 1] = 0;
    j->r.why = j->why[0] ? j->why : "the measurement failed";
    j->r.cycles_method = j->r.cycles_method_buf;
    j->r.instructions_method = j->instructions_method[0] ? j->instructions_method : NULL;
    for (size_t i = 0; i < SNIPPET_EVENTS_MAX; i++)
        j->r.counter_used[i] = NULL; /* not written to the record */
}

static void run_one(const struct snippet *s)
{
    uint32_t small_copies = s->unroll, big_copies = s->differencing ? 2 * s->unroll : s->unroll;
    size_t big_len = snippet_gen_size(s, big_copies), small_len = snippet_gen_size(s, small_copies);
    size_t small_at = ALIGN_UP(big_len, 4096);
    struct plat_buf code;
    if (plat_alloc_code(&code, small_at + small_len, "snippet code") != 0) {
        record_unavailable(s, "no executable memory for the generated code");
        return;
    }
    uint8_t *buf = code.ptr;
    struct snippet_layout lb, ls;
    if (!snippet_gen(s, big_copies, buf, small_at, &lb) ||
        !snippet_gen(s, small_copies, buf + small_at, code.bytes - small_at, &ls)) {
        plat_free(&code);
        record_unavailable(s, "the generated code does not fit its buffer");
        return;
    }
    /* The guard: both variants' init, copies and harness, for the crash record's part and offset. */
    struct guard g = {.what = "snippet", .name = s->name, .timeout_ms = s->timeout_ms};
    const struct snippet_layout *lay[2] = {&lb, &ls};
    uintptr_t base[2] = {(uintptr_t)buf, (uintptr_t)buf + small_at};
    for (int k = 0; k < (s->differencing ? 2 : 1); k++) {
        g.r[g.n++] = (struct guard_region){"init", base[k] + lay[k]->init_off, s->init_len, 0};
        g.r[g.n++] = (struct guard_region){"code", base[k] + lay[k]->code_off, lay[k]->copies_len, s->code_len};
        g.r[g.n++] = (struct guard_region){"harness", base[k], lay[k]->len, 0};
    }
    struct sn_job job = {
        .s = s,
        .big = (void (*)(void *))(uintptr_t)buf,
        .small = s->differencing ? (void (*)(void *))(uintptr_t)(buf + small_at) : NULL,
        .r14 = (uint8_t *)scratch.ptr + SCRATCH_BYTES / 2,
    };
    char why[160];
    /* Our records only after it returns (the image's PMU may emit pmu_measure inside: a crash or timeout report
     * drops a record left open, kernel/out.h rec_abort). */
    int g_rc = plat_guard_run(&g, run_job, &job, sizeof(job), why, sizeof(why));
    plat_free(&code);
    if (g_rc == PLAT_GUARD_NOT_RUN) {
        record_unavailable(s, why);
        return;
    }
    if (g_rc != PLAT_GUARD_RAN) {
        /* Hosted runner: the crash or timeout record names it; the next snippet runs in a fresh process. */
        plat_printf("snippet %-20s failed: see the crash/error record above; going on with the next snippet\n",
                    s->name);
        return;
    }
    job_result(&job);
    const struct meas_result mr = job.mr;
    const struct snippet_result r = job.r;
    if (job.rc != 0) {
        record_unavailable(s, r.why);
        return;
    }
    char method[200];
    if (s->differencing)
        fmt_snprintf(method, sizeof(method),
                     "n_vs_2n: each sample times %u and %u copies back to back, (t(2n) - t(n)) / (%u x %u) per copy",
                     big_copies, small_copies, s->unroll, s->loop ? s->loop : 1);
    else
        fmt_snprintf(method, sizeof(method),
                     "single: t(n) / (%u x %u) per copy, the harness (call, saved registers, init) included", s->unroll,
                     s->loop ? s->loop : 1);
    record_result(s, &mr, &r, method);
}

void bench_snippet(void)
{
    if (!SET.n) {
        plat_printf("snippet: no [snippet NAME] section in the config file; nothing to run\n");
        return;
    }
    if (plat_alloc(&scratch, SCRATCH_BYTES, PLAT_PAGE_DEFAULT, -1, "snippet scratch (R14)") != 0) {
        for (size_t i = 0; i < SET.n; i++)
            record_unavailable(&SET.s[i], "no memory for the 1 MiB scratch buffer R14 points into");
        return;
    }
    plat_printf("snippet: %zu snippet(s); R14 = scratch %p (+-512 KiB), R15 = loop counter; cycles per copy\n", SET.n,
                (void *)((uint8_t *)scratch.ptr + SCRATCH_BYTES / 2));
    for (size_t i = 0; i < SET.n; i++)
        run_one(&SET.s[i]);
    plat_free(&scratch);
}
