/* pebs.c - DS area setup, PEBS record decoding, load-latency data sources and histograms. */
#include "pmu/pebs.h"

static uint64_t rd64(const uint8_t *p, size_t off)
{
    uint64_t v;
    memcpy(&v, p + off, sizeof(v)); /* x86 is little-endian, like the record */
    return v;
}

static const uint16_t rec_size[PEBS_MAX_FORMAT + 1] = {0x90, 0xb0, 0xc0, 0xc8};

int pebs_decode(const void *buf, size_t len, unsigned format, struct pebs_record *out)
{
    const uint8_t *p = buf;

    if (!buf || !out || format > PEBS_MAX_FORMAT || len < rec_size[format])
        return -1;
    memset(out, 0, sizeof(*out));
    out->format = (uint8_t)format;
    out->flags = rd64(p, PEBS_OFF_FLAGS);
    out->ip = rd64(p, PEBS_OFF_IP);
    for (unsigned i = 0; i < 16; i++)
        out->gpr[i] = rd64(p, PEBS_OFF_GPR(i));
    if (format >= 1) {
        out->has_status = true;
        out->global_status = rd64(p, PEBS_OFF_GLOBAL_STATUS);
        out->dla = rd64(p, PEBS_OFF_DLA);
        out->dse = rd64(p, PEBS_OFF_DSE);
        out->latency = rd64(p, PEBS_OFF_LAT);
    }
    if (format >= 2) {
        out->has_eventing_ip = true;
        out->eventing_ip = rd64(p, PEBS_OFF_EVENTING_IP);
        out->tsx = rd64(p, PEBS_OFF_TSX);
    }
    if (format >= 3) {
        out->has_tsc = true;
        out->tsc = rd64(p, PEBS_OFF_TSC);
    }
    return 0;
}

/* ---- DS area -------------------------------------------------------------------------------- */

static int buf_setup(uint64_t base, uint64_t bytes, unsigned rec, unsigned thresh_records, uint64_t *max,
                     uint64_t *thresh)
{
    uint64_t nrec;

    if (rec == 0 || (rec & 7) || (base & 7))
        return -1;
    if (bytes > UINT64_MAX - base)
        return -1;
    nrec = bytes / rec;
    if (nrec == 0)
        return -1;
    *max = base + nrec * rec;
    /* The threshold must not lie past the absolute maximum or the interrupt can never fire. */
    *thresh = (thresh_records == 0 || thresh_records >= nrec) ? *max : base + (uint64_t)thresh_records * rec;
    return 0;
}

int ds_setup_pebs(struct ds_area *ds, uint64_t base, uint64_t bytes, unsigned rec_size_bytes, unsigned thresh_records)
{
    uint64_t max, thresh;

    if (!ds || buf_setup(base, bytes, rec_size_bytes, thresh_records, &max, &thresh))
        return -1;
    ds->pebs_buffer_base = base;
    ds->pebs_index = base;
    ds->pebs_absolute_maximum = max;
    ds->pebs_interrupt_threshold = thresh;
    memset(ds->pebs_counter_reset, 0, sizeof(ds->pebs_counter_reset));
    memset(ds->pebs_fixed_reset, 0, sizeof(ds->pebs_fixed_reset));
    return 0;
}

int ds_setup_bts(struct ds_area *ds, uint64_t base, uint64_t bytes, unsigned thresh_records)
{
    uint64_t max, thresh;

    if (!ds || buf_setup(base, bytes, BTS_RECORD_SIZE, thresh_records, &max, &thresh))
        return -1;
    ds->bts_buffer_base = base;
    ds->bts_index = base;
    ds->bts_absolute_maximum = max;
    ds->bts_interrupt_threshold = thresh;
    return 0;
}

int ds_set_pebs_reset(struct ds_area *ds, unsigned counter, unsigned width, uint64_t period)
{
    uint64_t mask;

    if (!ds || counter >= ARRAY_SIZE(ds->pebs_counter_reset) || width < 32 || width > 64 || period == 0)
        return -1;
    if (width < 64 && period >= (1ULL << (width - 1)))
        return -1;
    if (width == 64 && period >= (1ULL << 63))
        return -1;
    mask = width == 64 ? ~0ULL : ((1ULL << width) - 1);
    ds->pebs_counter_reset[counter] = (0 - period) & mask;
    return 0;
}

long ds_pebs_count(const struct ds_area *ds, unsigned rec)
{
    uint64_t used;

    if (!ds || rec == 0 || ds->pebs_index < ds->pebs_buffer_base || ds->pebs_index > ds->pebs_absolute_maximum)
        return -1;
    used = ds->pebs_index - ds->pebs_buffer_base;
    if (used % rec)
        return -1;
    return (long)(used / rec);
}

uint64_t pebs_period_clamp(uint64_t requested, uint64_t min, bool *clamped)
{
    bool up = requested < min;
    if (clamped)
        *clamped = up;
    return up ? min : requested;
}

/* ---- drain ---------------------------------------------------------------------------------- */

bool pebs_last_record_after_disable(uint64_t counter, uint64_t reset, unsigned width)
{
    uint64_t m = width >= 64 ? ~0ULL : (1ULL << width) - 1;
    return (counter & m) == (reset & m);
}

static uint64_t sign_extend48(uint64_t v) { return (uint64_t)((int64_t)(v << 16) >> 16); }

long pebs_drain_records(struct pebs_lat_hist *h, struct pebs_drain_acc *acc, const struct ds_area *snap,
                        const void *mem, unsigned format, uint64_t lo, uint64_t hi, bool last_is_stray)
{
    struct pebs_record r;
    long n, decoded = 0;

    if (!h || !acc || !snap || format > PEBS_MAX_FORMAT || (!mem && snap->pebs_index != snap->pebs_buffer_base)) {
        if (acc)
            acc->bad++;
        return -1;
    }
    n = ds_pebs_count(snap, rec_size[format]);
    if (n < 0) {
        acc->bad++;
        return -1;
    }
    if (n > 0 && last_is_stray) {
        acc->stray++;
        n--;
    }
    for (long i = 0; i < n; i++) {
        const uint8_t *p = (const uint8_t *)mem + (size_t)i * rec_size[format];
        if (pebs_decode(p, rec_size[format], format, &r) != 0) {
            acc->bad++;
            continue;
        }
        uint64_t a = sign_extend48(r.dla);
        if (a < lo || a >= hi) {
            acc->outside++;
        } else {
            acc->inside++;
            acc->inside_cycles += r.latency;
        }
        pebs_hist_add(h, r.dse, r.latency);
        acc->records++;
        decoded++;
    }
    return decoded;
}

long pebs_drain_late(struct pebs_drain_acc *acc, const struct ds_area *snap, uint64_t index_now, unsigned format)
{
    if (!acc || !snap || format > PEBS_MAX_FORMAT)
        return -1;
    if (index_now < snap->pebs_index || index_now > snap->pebs_absolute_maximum ||
        (index_now - snap->pebs_index) % rec_size[format]) {
        acc->bad++;
        return -1;
    }
    long late = (long)((index_now - snap->pebs_index) / rec_size[format]);
    acc->stray += (uint64_t)late;
    return late;
}

/* ---- data sources ([NHM] Table 16; short names from the analysis guide's Table 5) ---------- */

const struct pebs_t2_info pebs_t2_table[PEBS_T2_ROWS] = {
    [PEBS_T2_L3_UNSHARED] = {"L3_unshared", "L3 CACHE hit, line unshared"},
    [PEBS_T2_L3_SHARED] = {"L3_shared_other_core", "L3 CACHE hit, shared line in another core"},
    [PEBS_T2_L3_MODIFIED] = {"L3_modified_other_core", "L3 CACHE hit, modified in another core (HITM)"},
    [PEBS_T2_REMOTE_L3] = {"remote_L3", "remote L3 CACHE"},
    [PEBS_T2_LOCAL_DRAM] = {"local_DRAM", "Local Dram"},
    [PEBS_T2_REMOTE_DRAM] = {"remote_DRAM", "Remote Dram"},
};

const struct pebs_dse_info pebs_dse_table[16] = {
    {0x0, "unknown_l3_miss", "Unknown LLC cache miss", PEBS_T2_NONE, true, false},
    {0x1, "l1_hit", "Minimal latency core cache hit: satisfied by the data cache", PEBS_T2_NONE, false, false},
    {0x2, "fill_buffer_hit", "Pending core cache hit: a miss to the same line was already outstanding",
     PEBS_T2_NONE, false, false},
    {0x3, "l2_hit", "Satisfied by the MLC (L2)", PEBS_T2_NONE, false, false},
    {0x4, "l3_hit", "LLC hit, no snoop needed", PEBS_T2_L3_UNSHARED, false, false},
    {0x5, "l3_hit_other_core_hit_snp", "LLC hit, clean copy from another core's snoop", PEBS_T2_L3_SHARED, false,
     false},
    {0x6, "l3_hit_other_core_hitm", "LLC hit, modified copy from another core's snoop (HITM)",
     PEBS_T2_L3_MODIFIED, false, false},
    {0x7, "reserved_7", "Reserved (guide: L3_No_Details, encoding not supported; Linux: L3 hit HITM)",
     PEBS_T2_NONE, false, true},
    {0x8, "remote_cache_fwd", "LLC miss, local home, clean data forwarded by a cross-package snoop",
     PEBS_T2_REMOTE_L3, true, false},
    {0x9, "remote_cache_hitm", "LLC miss, modified data forwarded by a cross-package snoop (not before WSM-T0)",
     PEBS_T2_REMOTE_L3, true, true},
    {0xa, "local_dram_shared", "LLC miss, local home, local DRAM (line goes to S)", PEBS_T2_LOCAL_DRAM, true, false},
    {0xb, "remote_dram_shared", "LLC miss, remote home, remote DRAM (line goes to S)", PEBS_T2_REMOTE_DRAM, true,
     false},
    {0xc, "local_dram_exclusive", "LLC miss, local home, local DRAM (line goes to E)", PEBS_T2_LOCAL_DRAM, true,
     false},
    {0xd, "remote_dram_exclusive", "LLC miss, remote home, remote DRAM (line goes to E)", PEBS_T2_REMOTE_DRAM,
     true, false},
    {0xe, "reserved_e", "Reserved (guide Table 5 and Linux: I/O)", PEBS_T2_NONE, false, true},
    {0xf, "uncacheable", "The request was to uncacheable memory", PEBS_T2_NONE, false, false},
};

const struct pebs_dse_info *pebs_dse(uint64_t dse)
{
    return &pebs_dse_table[dse & 0xf];
}

/* Per-model rows that replace pebs_dse_table's (a new model is a new row). */
static const struct {
    uint8_t family, model;
    struct pebs_dse_info info;
} dse_patches[] = {
    {6, 0x2e,
     {0x7, "l3_hit_snoop_hitm",
      "LLC Snoop HitM: hit the LLC, serviced by another core's cross-core snoop that found a modified copy "
      "(SDM Table 18-24, 06_2E)",
      PEBS_T2_L3_MODIFIED, false, false}},
};

const struct pebs_dse_info *pebs_dse_model(unsigned family, unsigned model, uint64_t dse)
{
    unsigned code = (unsigned)(dse & 0xf);
    for (size_t i = 0; i < ARRAY_SIZE(dse_patches); i++)
        if (dse_patches[i].family == family && dse_patches[i].model == model && dse_patches[i].info.code == code)
            return &dse_patches[i].info;
    return &pebs_dse_table[code];
}

/* ---- histograms ----------------------------------------------------------------------------- */

void pebs_hist_init(struct pebs_lat_hist *h)
{
    memset(h, 0, sizeof(*h));
    for (unsigned i = 0; i < 16; i++)
        h->min[i] = UINT64_MAX;
}

unsigned pebs_hist_bucket(uint64_t latency)
{
    unsigned b = 0;
    while (latency && b < PEBS_HIST_BUCKETS - 1) {
        latency >>= 1;
        b++;
    }
    return b;
}

void pebs_hist_add(struct pebs_lat_hist *h, uint64_t dse, uint64_t latency)
{
    unsigned s = (unsigned)(dse & 0xf);

    h->count[s]++;
    h->sum[s] += latency;
    if (latency < h->min[s])
        h->min[s] = latency;
    if (latency > h->max[s])
        h->max[s] = latency;
    h->bucket[s][pebs_hist_bucket(latency)]++;
    h->total++;
}

long pebs_hist_add_buffer(struct pebs_lat_hist *h, const struct ds_area *ds, const void *mem, unsigned format)
{
    struct pebs_record r;
    long n;

    if (!h || !ds || !mem || format < 1 || format > PEBS_MAX_FORMAT)
        return -1;
    n = ds_pebs_count(ds, rec_size[format]);
    if (n < 0)
        return -1;
    for (long i = 0; i < n; i++) {
        if (pebs_decode((const uint8_t *)mem + (size_t)i * rec_size[format], rec_size[format], format, &r))
            return -1;
        pebs_hist_add(h, r.dse, r.latency);
    }
    return n;
}

double pebs_hist_mean(const struct pebs_lat_hist *h, unsigned src)
{
    if (!h || src >= 16 || h->count[src] == 0)
        return 0.0;
    return (double)h->sum[src] / (double)h->count[src];
}
