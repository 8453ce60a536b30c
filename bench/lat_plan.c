/* lat_plan.c - size grids, per-row working sets, CPU sampling and delays for the latency benchmarks. */
#include "bench/lat_plan.h"
#include "kernel/fmt.h"

/* Intel Core i7 / Xeon 5500 performance analysis guide: L1D 4 and L2 10 cycles ("Core Memory
 * Subsystem"), the rest Table 2 ("Measuring Penalties": data sources that respond to an L2 miss). */
const struct lat_row_ref lat_rows[LAT_ROW_COUNT] = {
    [LAT_ROW_L1] = {"L1", "L1D hit", 4, 4, "cycles"},
    [LAT_ROW_L2] = {"L2", "L2 (MLC) hit", 10, 10, "cycles"},
    [LAT_ROW_L3_UNSHARED] = {"L3_unshared", "L3 CACHE hit, line unshared", 40, 40, "cycles"},
    [LAT_ROW_L3_SHARED] = {"L3_shared_other_core", "L3 CACHE hit, shared line in another core", 65, 65, "cycles"},
    /* The HITM row: a load that hits a line another core holds Modified (PEBS data source 0x6 HITM, c2c's hitm). */
    [LAT_ROW_L3_MODIFIED] = {"L3_modified_other_core", "L3 CACHE hit, modified in another core", 75, 75,
                             "cycles"},
    [LAT_ROW_REMOTE_L3] = {"remote_L3", "remote L3 CACHE", 100, 300, "cycles"},
    [LAT_ROW_LOCAL_DRAM] = {"local_DRAM", "Local Dram", 60, 60, "ns"},
    [LAT_ROW_REMOTE_DRAM] = {"remote_DRAM", "Remote Dram", 100, 100, "ns"},
};

int lat_ref_text(const struct lat_row_ref *r, char *buf, size_t len)
{
    if (r->lo == r->hi)
        return fmt_snprintf(buf, len, "~%.0f %s", r->lo, r->unit);
    return fmt_snprintf(buf, len, "~%.0f-%.0f %s", r->lo, r->hi, r->unit);
}

/* 2^(s/p) for 0 <= s < p without libm: Newton's method for the p-th root of 2, then its s-th power. */
bool lat_shares_cache(uint32_t apic_a, uint32_t apic_b, uint32_t shared_by)
{
    unsigned shift = 0;
    while (shift < 32 && (1u << shift) < shared_by)
        shift++;
    return shift >= 32 || (apic_a >> shift) == (apic_b >> shift);
}

double lat_pow2_frac(unsigned s, unsigned p)
{
    if (s == 0 || p <= 1)
        return 1.0;
    double x = 1.0 + 1.0 / p; /* close to 2^(1/p) for every p >= 2 */
    for (int it = 0; it < 60; it++) {
        double xp1 = 1.0; /* x^(p-1) */
        for (unsigned k = 1; k < p; k++)
            xp1 *= x;
        double next = x - (xp1 * x - 2.0) / (p * xp1);
        if (next == x)
            break;
        x = next;
    }
    double r = 1.0;
    for (unsigned k = 0; k < s; k++)
        r *= x;
    return r;
}

size_t lat_size_grid(uint64_t lo, uint64_t hi, unsigned per_octave, uint64_t align, uint64_t *out, size_t max)
{
    if (!out || max == 0 || per_octave == 0 || !IS_POW2(align))
        return 0;
    lo = ALIGN_UP(lo, align);
    hi = ALIGN_DOWN(hi, align);
    if (lo == 0 || lo > hi)
        return 0;
    size_t n = 0;
    uint64_t last = 0;
    for (unsigned oct = 0; oct < 64 && n < max; oct++) {
        if (lo > (UINT64_MAX >> oct))
            break;
        uint64_t base = lo << oct;
        if (base >= hi)
            break;
        for (unsigned s = 0; s < per_octave && n < max; s++) {
            double v = (double)base * lat_pow2_frac(s, per_octave);
            if (v >= (double)hi)
                break;
            uint64_t sz = ALIGN_DOWN((uint64_t)v, align);
            if (sz <= last || sz < lo)
                continue;
            out[n++] = last = sz;
        }
    }
    if (n < max && last != hi)
        out[n++] = hi;
    else if (n == max && out[n - 1] != hi)
        out[n - 1] = hi; /* the top of the range matters more than one point below it */
    return n;
}

static uint64_t pow2_at_or_above(uint64_t v)
{
    uint64_t p = 1;
    while (p < v && p < (1ull << 62))
        p <<= 1;
    return p;
}

static uint64_t pow2_at_or_below(uint64_t v)
{
    uint64_t p = 1;
    while (p <= v / 2)
        p <<= 1;
    return p;
}

static uint64_t sweep_top_factor(uint64_t llc, uint64_t cap, uint64_t factor)
{
    const uint64_t most = 1ull << 62;
    uint64_t want = llc > most / factor ? most : llc * factor;
    uint64_t top = llc ? pow2_at_or_above(want) : LAT_SWEEP_NO_LLC;
    if (cap && top > cap)
        top = pow2_at_or_below(cap);
    return MAX(top, LAT_SWEEP_LO);
}

uint64_t lat_sweep_top(uint64_t llc, uint64_t cap) { return sweep_top_factor(llc, cap, LAT_SWEEP_LLC_FACTOR); }

uint64_t lat_sweep_top_minimal(uint64_t llc, uint64_t cap)
{
    return sweep_top_factor(llc, cap, LAT_SWEEP_LLC_FACTOR_MINIMAL);
}

uint64_t lat_sweep_top_want(uint64_t llc, uint64_t cap, uint64_t want)
{
    if (!want)
        return lat_sweep_top(llc, cap);
    uint64_t top = ALIGN_DOWN(want, KiB(4));
    if (cap && top > cap)
        top = pow2_at_or_below(cap);
    return MAX(top, LAT_SWEEP_LO);
}

void lat_sweep_order(const uint64_t *page_bytes, size_t n, size_t *order)
{
    for (size_t k = 0; k < n; k++) { /* insertion: a series goes after every one with pages at least its own */
        size_t at = k;
        while (at > 0 && page_bytes[order[at - 1]] < page_bytes[k]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = k;
    }
}

size_t lat_sweep_grid(uint64_t lo, uint64_t hi, unsigned per_octave, uint64_t llc, uint64_t align, uint64_t *out,
                      size_t max)
{
    size_t n = lat_size_grid(lo, hi, per_octave, align, out, max);
    if (!llc || n == 0 || llc > UINT64_MAX / LAT_SWEEP_DENSE_LLC)
        return n;
    uint64_t dense = llc * LAT_SWEEP_DENSE_LLC, base = ALIGN_UP(lo, align);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = out[i];
        bool octave = v % base == 0 && IS_POW2(v / base);
        if (v <= dense || octave || i == n - 1)
            out[k++] = v;
    }
    return k;
}

/* Points i and i - 1 agree: within LAT_PAGE_FLAT or their CIs (relative half-widths) added. */
static bool flat_step(const double *ns, const double *ci, size_t i)
{
    double a = ns[i], b = ns[i - 1];
    if (!(a > 0) || !(b > 0))
        return false;
    double d = (a > b ? a - b : b - a) / b;
    double tol = LAT_PAGE_FLAT;
    if (ci && ci[i] + ci[i - 1] > tol)
        tol = ci[i] + ci[i - 1];
    return d <= tol;
}

bool lat_page_plateau(const uint64_t *bytes, const double *ns, const double *ci, size_t n, uint64_t llc)
{
    if (!bytes || !ns || n < 3 || !llc || llc > UINT64_MAX / LAT_SWEEP_DENSE_LLC)
        return false;
    if (bytes[n - 1] <= llc * LAT_SWEEP_DENSE_LLC || bytes[n - 2] <= llc)
        return false;
    return flat_step(ns, ci, n - 1) && flat_step(ns, ci, n - 2);
}

uint64_t lat_placed_bytes(const struct cache_sizes *c)
{
    const uint64_t unit = (uint64_t)LAT_PLACED_STRIDE * 64;
    uint64_t w = c && c->l2 ? c->l2 / 4 : KiB(64);
    /* Must exceed the L1 by a good margin, or some of the pass could be served by it. */
    if (c && c->l1 && w < c->l1 * 2)
        w = c->l1 * 2;
    return MAX(ALIGN_DOWN(w, unit), unit);
}

uint64_t lat_other_core_bytes(const struct cache_sizes *c)
{
    const uint64_t unit = (uint64_t)LAT_PLACED_STRIDE * 64;
    uint64_t w = MIN(lat_placed_bytes(c), LAT_C2C_MAX_BYTES);
    return MAX(ALIGN_DOWN(w, unit), unit);
}

uint64_t lat_evict_bytes(const struct cache_sizes *c, int levels)
{
    uint64_t l1 = c && c->l1 ? c->l1 : KiB(32);
    uint64_t want = levels >= 2 ? 2 * (l1 + (c && c->l2 ? c->l2 : 0)) : 2 * l1;
    if (c && c->l3 && want > c->l3 / 4)
        want = c->l3 / 4;
    return MAX(ALIGN_UP(want, KiB(64)), KiB(64));
}

uint64_t lat_evict_chunk(const struct cache_sizes *c, int levels)
{
    uint64_t l1 = c && c->l1 ? c->l1 : KiB(32);
    uint64_t level = levels >= 2 && c && c->l2 ? c->l2 : l1;
    return MAX(ALIGN_DOWN(level / 4, KiB(4)), KiB(4));
}

uint64_t lat_dram_bytes(const struct cache_sizes *c, bool quick, uint64_t cap)
{
    uint64_t llc = c ? c->llc : 0;
    uint64_t w = quick ? MAX(2 * llc, MiB(16)) : MAX(8 * llc, MiB(64));
    if (cap && w > cap)
        w = cap;
    return MAX(ALIGN_DOWN(w, MiB(2)), MiB(2));
}

uint64_t lat_fresh_max_bytes_par(const struct cache_sizes *c, uint32_t build_cpus)
{
    uint64_t llc_rule = c && c->llc ? 2 * c->llc : MiB(64);
    uint64_t cost_rule = (uint64_t)LAT_FRESH_MAX_LINES * 64 * MAX(build_cpus, 1u);
    return MIN(llc_rule, cost_rule);
}

uint64_t lat_fresh_max_bytes(const struct cache_sizes *c) { return lat_fresh_max_bytes_par(c, 1); }

uint64_t lat_l1_bytes(const struct cache_sizes *c)
{
    uint64_t w = c && c->l1 ? c->l1 / 2 : KiB(16);
    return MAX(ALIGN_DOWN(w, KiB(1)), KiB(1));
}

size_t lat_pick_cpus(size_t n, size_t max, uint32_t *out)
{
    if (!out || max == 0 || n == 0)
        return 0;
    if (n <= max) {
        for (size_t i = 0; i < n; i++)
            out[i] = (uint32_t)i;
        return n;
    }
    /* i * (n - 1) / (max - 1): first 0, last n - 1, steps of at least one since n > max. */
    if (max == 1) {
        out[0] = 0;
        return 1;
    }
    for (size_t i = 0; i < max; i++)
        out[i] = (uint32_t)((uint64_t)i * (n - 1) / (max - 1));
    return max;
}

size_t lat_loaded_delays(bool quick, uint32_t *out, size_t max)
{
    /* 16 points, about two per doubling of the delay where the curve bends (MLC draws latency against
     * bandwidth as a curve; with a handful of points its knee is a guess). */
    static const uint32_t full[] = {0, 10, 20, 30, 50, 70, 100, 140, 200, 280, 400, 560, 800, 1600, 3200, 6400};
    static const uint32_t fast[] = {0, 400, 6400};
    _Static_assert(ARRAY_SIZE(full) <= LAT_LOADED_MAX_DELAYS, "LAT_LOADED_MAX_DELAYS too small");
    const uint32_t *d = quick ? fast : full;
    size_t n = quick ? ARRAY_SIZE(fast) : ARRAY_SIZE(full);
    if (!out)
        return 0;
    n = MIN(n, max);
    for (size_t i = 0; i < n; i++)
        out[i] = d[i];
    return n;
}

uint64_t lat_rep_offset(uint64_t buf_bytes, uint64_t bytes, uint64_t align, size_t k, size_t reps)
{
    if (reps <= 1 || bytes == 0 || bytes > buf_bytes || align == 0 || (align & (align - 1)) != 0)
        return 0;
    uint64_t room = buf_bytes - bytes;
    uint64_t slots = room / align + 1; /* aligned offsets 0, align, ... <= room */
    if (slots >= reps)
        return (uint64_t)(k % reps) * ALIGN_DOWN(room / (reps - 1), align);
    return (uint64_t)(k % slots) * align;
}

uint64_t lat_rep_buffer_bytes(uint64_t bytes, size_t reps)
{
    if (reps <= 1)
        return bytes;
    return (uint64_t)(reps - 1) * ALIGN_UP(bytes, LAT_REP_ALIGN) + bytes;
}
