/* pebs_capture.c - DS save area and PEBS load latency: program, poll-drain into per-source histograms, report. */
#include "pmu/pebs_capture.h"
#include "kernel/msr.h"
#include "pmu/msr_pmu.h"
#include "measure/chase.h"
#include "kernel/fmt.h"
#include "kernel/kernel.h"
#include "kernel/out.h"
#include "kernel/pmm.h"
#include "pmu/ds.h"
#include "pmu/encode.h"
#include "pmu/pmu.h"

/* The DS area and the PEBS buffer live for the whole run once allocated (one BSP user at a time). */
static struct ds_area *ds;
static uint64_t ds_phys, buf_phys, buf_bytes;
static unsigned rec_size, rec_format;

static void alloc_record(const char *what, uint64_t base, uint64_t bytes)
{
    struct json *j = pmu_rec_begin("pmu_alloc");
    json_kv_str(j, "what", what);
    json_kv_hex(j, "base", base);
    json_kv_uint(j, "bytes", bytes);
    pmu_rec_end();
}

static int ds_alloc(void)
{
    if (ds)
        return 0;
    rec_format = PMU.caps.pebs_format;
    rec_size = PMU.caps.pebs_record_size;
    if (!rec_size || !K.pmm)
        return -1;
    /* Write-back RAM from the allocator, identity mapped: linear address == physical address, as
     * the DS area and the PEBS buffer need ([NHM] 3.5.3: "non-paged" memory). */
    if (pmm_alloc_tagged(K.pmm, 4096, 4096, -1, "pmu_ds_area", &ds_phys) != PMM_OK)
        return -1;
    buf_bytes = ALIGN_UP((uint64_t)PMU_PEBS_RECORDS * rec_size, 4096);
    if (pmm_alloc_tagged(K.pmm, buf_bytes, 4096, -1, "pmu_pebs_buffer", &buf_phys) != PMM_OK) {
        pmm_free(K.pmm, ds_phys, 4096);
        return -1;
    }
    ds = (struct ds_area *)(uintptr_t)ds_phys;
    memset(ds, 0, 4096);
    memset((void *)(uintptr_t)buf_phys, 0, buf_bytes);
    alloc_record("ds_area", ds_phys, 4096);
    alloc_record("pebs_buffer", buf_phys, buf_bytes);
    return 0;
}

/* The `ds_area` record: every field by name, with the address of the area, and the stray records
 * ([NHM] 3.1.3, pebs.h) the capture has counted so far. */
static void ds_record(const char *why, uint64_t stray)
{
    const volatile struct ds_area *d = ds;
    struct json *j = pmu_rec_begin("ds_area");
    json_kv_str(j, "why", why);
    json_kv_hex(j, "address", ds_phys);
    json_kv_uint(j, "size", DS_AREA_SIZE);
    json_kv_hex(j, "bts_buffer_base", d->bts_buffer_base);
    json_kv_hex(j, "bts_index", d->bts_index);
    json_kv_hex(j, "bts_absolute_maximum", d->bts_absolute_maximum);
    json_kv_hex(j, "bts_interrupt_threshold", d->bts_interrupt_threshold);
    json_kv_hex(j, "pebs_buffer_base", d->pebs_buffer_base);
    json_kv_hex(j, "pebs_index", d->pebs_index);
    json_kv_hex(j, "pebs_absolute_maximum", d->pebs_absolute_maximum);
    json_kv_hex(j, "pebs_interrupt_threshold", d->pebs_interrupt_threshold);
    json_key(j, "pebs_counter_reset");
    json_arr_begin(j);
    for (unsigned i = 0; i < 8; i++)
        json_hex(j, d->pebs_counter_reset[i]);
    json_arr_end(j);
    json_key(j, "pebs_fixed_reset");
    json_arr_begin(j);
    for (unsigned i = 0; i < 4; i++)
        json_hex(j, d->pebs_fixed_reset[i]);
    json_arr_end(j);
    json_kv_uint(j, "pebs_format", rec_format);
    json_kv_uint(j, "record_size", rec_size);
    json_kv_uint(j, "buffer_bytes", buf_bytes);
    json_kv_uint(j, "stray", stray);
    pmu_rec_end();
}

/* The PEBS counter right after the global disable (the stray-record test needs it). */
static uint64_t pebs_counter_now(struct pmu_pebs_capture *c)
{
    uint64_t v = 0;
    if (rdmsr_safe(c->g.s[0].ctr_msr, &v) != MSR_OK)
        c->g.faults++;
    return v;
}

/* Decode the buffer into the histogram. Call with counting globally disabled and IA32_PEBS_ENABLE
 * clear (pebs.h "draining the PEBS buffer"); counter = the PEBS counter read after the disable. */
static void drain(struct pmu_pebs_capture *c, uint64_t counter)
{
    volatile struct ds_area *d = ds;
    const struct pmu_slot *s = &c->g.s[0];
    struct pebs_drain_acc acc = {0};
    struct ds_area snap;

    __asm__ volatile("mfence" ::: "memory");
    memcpy(&snap, (const void *)ds, sizeof(snap));
    c->drains++;
    bool last_stray = pebs_last_record_after_disable(counter, snap.pebs_counter_reset[s->index], s->width);
    pebs_drain_records(&c->hist, &acc, &snap, (const void *)(uintptr_t)buf_phys, rec_format, c->lo, c->hi,
                       last_stray);
    /* Anything written while we decoded came after the disable: stray, counted before the reset. */
    __asm__ volatile("mfence" ::: "memory");
    pebs_drain_late(&acc, &snap, d->pebs_index, rec_format);
    c->records += acc.records;
    c->outside += acc.outside;
    c->inside += acc.inside;
    c->inside_cycles += acc.inside_cycles;
    c->stray += acc.stray;
    c->bad += acc.bad;
    if (d->pebs_index == d->pebs_buffer_base)
        return; /* nothing written: no record, no reprogramming */
    /* [NHM] 3.5.3: the buffer is not circular; reset the index to re-arm it. */
    d->pebs_index = d->pebs_buffer_base;
    ds_record("drain", c->stray);
}

int pmu_pebs_begin(struct pmu_pebs_capture *c, const void *buf, size_t bytes, uint32_t ldlat, uint64_t period)
{
    struct pmu_event_enc e;
    char spec[96], err[200];
    const char *why = NULL;
    unsigned nt;
    const struct pmu_event_table *const *t;

    memset(c, 0, sizeof(*c));
    pebs_hist_init(&c->hist);
    c->status = -1;
    c->lo = (uint64_t)(uintptr_t)buf;
    c->hi = c->lo + bytes;
    c->ldlat = ldlat ? ldlat : PMU_PEBS_DEFAULT_LDLAT;
    c->period_requested = period ? period : PMU_PEBS_DEFAULT_PERIOD;
    c->period = pebs_period_clamp(c->period_requested, PEBS_MIN_PERIOD, &c->period_clamped);
    if (!pmu_may_program(PMU_FEAT_PEBS, &why)) {
        c->why = why;
        return -1;
    }
    c->valid = pmu_figures_valid(PMU_FEAT_PEBS, &c->why);
    if (c->period >= (1ULL << 31)) {
        c->why = "PEBS period must be below 2^31 (counter writes sign-extend bit 31)";
        return -1;
    }
    t = pmu_tables(&nt);
    /* [NHM] 3.7 / SDM 18.8.1.2: MEM_INST_RETIRED with LATENCY_ABOVE_THRESHOLD (PerfEvtSelX[15:0] = 100BH),
     * CMASK and INV zero; a general counter (PEBS needs one). */
    fmt_snprintf(spec, sizeof(spec), "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=%u", c->ldlat);
    if (!nt || pmu_event_parse(t, nt, spec, &e, err, sizeof(err)) != PMU_EV_OK) {
        c->why = "no load-latency event in this model's table";
        return -1;
    }
    if (ds_alloc() != 0) {
        c->why = "cannot allocate the DS save area / PEBS buffer";
        return -1;
    }
    pmu_group_init(&c->g, "pebs", NULL);
    if (pmu_group_add_all(&c->g, &e, 1, true, err, sizeof(err)) != 0) {
        /* The scheduler's line: e.g. every PEBS counter disabled by the self-test, named with its check. */
        static char why_buf[sizeof(err)];
        fmt_snprintf(why_buf, sizeof(why_buf), "no general counter for the load-latency event: %s", err);
        c->why = why_buf;
        return -1;
    }
    struct pmu_slot *s = &c->g.s[0];
    unsigned ctr = s->index;
    s->preload = (1ULL << s->width) - c->period; /* first sample after `period` events, like the reset */
    c->g.pebs = true;
    c->g.pebs_counter = (uint8_t)ctr;
    c->g.pebs_enable = pmu_enc_pebs_enable(1u << ctr, 1u << ctr);
    c->g.pebs_ldlat = c->ldlat;
    c->g.pebs_period = c->period;

    /* DS area: PEBS base/index/maximum/threshold and the counter reset, then IA32_DS_AREA. No PMI is
     * armed (INT clear, LVT masked): the threshold is the absolute maximum and we poll. */
    memset(ds, 0, sizeof(*ds));
    if (ds_setup_pebs(ds, buf_phys, buf_bytes, rec_size, 0) != 0 ||
        ds_set_pebs_reset(ds, ctr, s->width, c->period) != 0) {
        c->why = "DS area setup refused the buffer";
        return -1;
    }
    ds_record("program", 0);
    if (wrmsr_safe(MSR_IA32_DS_AREA, ds_phys) != MSR_OK) {
        c->why = "IA32_DS_AREA write faulted";
        return -1;
    }
    if (pmu_group_program(&c->g) != 0) {
        c->why = "programming failed";
        return -1;
    }
    pmu_group_start(&c->g);
    c->active = true;
    c->status = 0;
    return 0;
}

void pmu_pebs_poll(struct pmu_pebs_capture *c, bool force)
{
    if (!c->active)
        return;
    uint64_t used = ((volatile struct ds_area *)ds)->pebs_index - ((volatile struct ds_area *)ds)->pebs_buffer_base;
    if (!force && used < (uint64_t)(PMU_PEBS_RECORDS / 2) * rec_size)
        return;
    /* The stop clears IA32_PEBS_ENABLE right after the global disable ([NHM] 3.1.3: an armed assist would
     * still fire) and the counter's EN bit (an SMI's RSM sets IA32_PERF_GLOBAL_CTRL: without it the
     * counter would run, overflow with PEBS off, get no reload and end the sampling); the start restores
     * both, IA32_PEBS_ENABLE last before the global enable. */
    pmu_group_stop(&c->g);
    drain(c, pebs_counter_now(c));
    pmu_group_start(&c->g);
}

void pmu_pebs_end(struct pmu_pebs_capture *c)
{
    if (!c->active)
        return;
    pmu_group_stop(&c->g); /* IA32_PEBS_ENABLE cleared too, as in pmu_pebs_poll */
    pmu_group_read(&c->g);
    c->counter = c->g.s[0].raw;
    drain(c, c->g.s[0].raw);
    if (c->g.faults && c->valid) {
        c->valid = false;
        c->why = "an MSR access faulted";
    }
    pmu_group_release(&c->g);
    c->active = false;
}

double pmu_pebs_mean(const struct pmu_pebs_capture *c, int dse, uint64_t *samples)
{
    uint64_t n = 0, sum = 0;
    for (int s = 0; s < 16; s++) {
        if (dse >= 0 && s != dse)
            continue;
        n += c->hist.count[s];
        sum += c->hist.sum[s];
    }
    if (samples)
        *samples = n;
    return n ? (double)sum / (double)n : 0.0;
}

static void common_keys(struct json *j, const struct pmu_pebs_capture *c, const char *row)
{
    json_kv_str(j, "row", row);
    json_kv_uint(j, "ldlat", c->ldlat);
    json_kv_uint(j, "period", c->period);
    json_kv_uint(j, "period_requested", c->period_requested);
    if (c->period_clamped)
        json_kv_str(j, "period_note", "raised to the minimum PEBS period 32 (Linux nhm_limit_period: smaller "
                                      "periods locked Nehalem up)");
    json_kv_uint(j, "records_total", c->records);
    json_kv_uint(j, "addresses_outside", c->outside);
    json_kv_uint(j, "stray_records", c->stray);
    json_kv_uint(j, "drains", c->drains);
    json_kv_str(j, "unit", "core_cycles");
    if (c->timing_cycles > 0) {
        /* The cross-check: the benchmark's own latency for this row beside the PEBS mean. */
        uint64_t n;
        double all = pmu_pebs_mean(c, -1, &n);
        json_kv_double(j, "timing_cycles", c->timing_cycles);
        if (n && c->valid)
            json_kv_double(j, "pebs_mean_cycles_all", all);
        else
            json_kv_null(j, "pebs_mean_cycles_all");
    }
    json_kv_str(j, "method", "PEBS load latency (MEM_INST_RETIRED.LATENCY_ABOVE_THRESHOLD), polled DS buffer");
}

void pmu_pebs_emit(const struct pmu_pebs_capture *c, const char *row)
{
    const char *why = c->status != 0 ? c->why : !c->valid ? c->why : c->records == 0 ? "no PEBS records" : NULL;
    if (why) {
        struct json *j = pmu_rec_begin("pebs_latency");
        common_keys(j, c, row);
        json_kv_null(j, "source");
        json_kv_uint(j, "samples", 0);
        json_kv_null(j, "mean_cycles");
        json_key(j, "histogram");
        json_arr_begin(j);
        json_arr_end(j);
        json_kv_str(j, "status", "unavailable");
        json_kv_str(j, "reason", why ? why : "unavailable");
        pmu_rec_end();
        return;
    }
    for (unsigned s = 0; s < 16; s++) {
        if (!c->hist.count[s])
            continue;
        const struct pebs_dse_info *d = pebs_dse_model(PMU.caps.cpu_family, PMU.caps.cpu_model, s);
        struct json *j = pmu_rec_begin("pebs_latency");
        common_keys(j, c, row);
        json_kv_str(j, "source", d->name);
        json_kv_uint(j, "dse", s);
        json_kv_uint(j, "samples", c->hist.count[s]);
        json_kv_double(j, "mean_cycles", pebs_hist_mean(&c->hist, s));
        json_kv_uint(j, "min_cycles", c->hist.min[s]);
        json_kv_uint(j, "max_cycles", c->hist.max[s]);
        json_key(j, "histogram");
        json_arr_begin(j);
        for (unsigned b = 0; b < PEBS_HIST_BUCKETS; b++) {
            if (!c->hist.bucket[s][b])
                continue;
            json_arr_begin(j);
            json_uint(j, b == 0 ? 0 : 1ULL << (b - 1)); /* bucket b holds [2^(b-1), 2^b) */
            json_uint(j, c->hist.bucket[s][b]);
            json_arr_end(j);
        }
        json_arr_end(j);
        json_kv_str(j, "table2_row", d->table2_row >= 0 ? pebs_t2_table[d->table2_row].row : NULL);
        json_kv_bool(j, "doc_reserved", d->doc_reserved);
        json_kv_str(j, "status", "ok");
        pmu_rec_end();
    }
}

void *pmu_pebs_chase(struct pmu_pebs_capture *c, const char *row, void *start, uint64_t loads, const void *buf,
                     size_t bytes, uint32_t ldlat, uint64_t period)
{
    void *p = start;
    if (pmu_pebs_begin(c, buf, bytes, ldlat, period) == 0) {
        /* Chunks of about half a buffer of samples between polls, so no sample is lost to a full buffer. */
        uint64_t chunk = c->period * (PMU_PEBS_RECORDS / 4);
        uint64_t iters_total = (loads + CHASE_UNROLL - 1) / CHASE_UNROLL;
        uint64_t iters_chunk = MAX(chunk / CHASE_UNROLL, 1ULL);
        bool forced = false;
        for (uint64_t done = 0; done < iters_total;) {
            uint64_t n = MIN(iters_chunk, iters_total - done);
            p = chase_run(p, n);
            done += n;
            /* One forced drain halfway, so the disable/drain/re-enable path runs on every capture. */
            bool force = !forced && 2 * done >= iters_total;
            forced |= force;
            pmu_pebs_poll(c, force);
        }
        pmu_pebs_end(c);
    }
    pmu_pebs_emit(c, row);
    return p;
}
