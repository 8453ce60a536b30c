/* cpuid.c - decode CPUID into struct cpu_info. Sources: Intel SDM Vol.2A "CPUID" (Table 3-8, leaf 2
 * descriptors Table 3-12), SDM Vol.3B 20.7.3 (TSC/crystal), AMD APM Vol.3 Appendix E. See docs/cpuid.md. */
#include "kernel/cpuid.h"

/* Leaves, named as in the SDM / APM. */
#define LEAF_VENDOR        0x00000000u
#define LEAF_VERSION       0x00000001u
#define LEAF_CACHE_DESC    0x00000002u /* Intel leaf 2 descriptor bytes */
#define LEAF_DET_CACHE     0x00000004u /* Intel deterministic cache parameters */
#define LEAF_THERM_POWER   0x00000006u
#define LEAF_EXT_FEATURES  0x00000007u
#define LEAF_ARCH_PERFMON  0x0000000Au
#define LEAF_EXT_TOPO      0x0000000Bu
#define LEAF_XSAVE         0x0000000Du
#define LEAF_TSC_CRYSTAL   0x00000015u
#define LEAF_FREQ          0x00000016u
#define LEAF_HYBRID        0x0000001Au
#define LEAF_V2_EXT_TOPO   0x0000001Fu
#define LEAF_HV_BASE       0x40000000u
#define LEAF_EXT_MAX       0x80000000u
#define LEAF_EXT_FEATURES1 0x80000001u
#define LEAF_BRAND0        0x80000002u
#define LEAF_AMD_L1        0x80000005u
#define LEAF_AMD_L2L3      0x80000006u
#define LEAF_APM           0x80000007u
#define LEAF_ADDR_SIZES    0x80000008u
#define LEAF_AMD_CACHE_TOPO 0x8000001Du
#define LEAF_AMD_PROC_TOPO 0x8000001Eu
#define LEAF_AMD_PERFMON   0x80000022u

enum { EAX, EBX, ECX, EDX };

/* Bounds on subleaf loops, so a CPU (or emulator) that never reports "type 0" cannot hang us. */
#define MAX_SUBLEAF 16

struct dec {
    cpuid_fn fn;
    void *ctx;
    struct cpu_info *ci;
};

static inline uint32_t bits(uint32_t v, unsigned hi, unsigned lo)
{
    return (v >> lo) & (uint32_t)((2ull << (hi - lo)) - 1);
}

static uint32_t log2_ceil(uint32_t n)
{
    uint32_t b = 0;
    while (b < 31 && (1u << b) < n)
        b++;
    return b;
}

/* Unchecked CPUID: only for the range probes (leaf 0, 4000_0000, 8000_0000). */
static void raw(const struct dec *d, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    r[0] = r[1] = r[2] = r[3] = 0;
    d->fn(leaf, sub, r, d->ctx);
}

/* Leaves past the maximum return the highest basic leaf on Intel (SDM Vol.2A CPUID, "If a value
 * entered for CPUID.EAX is higher than the maximum input value ... the data for the highest basic
 * information leaf is returned"), so every read is checked against its range's maximum. */
static bool leaf_ok(const struct cpu_info *ci, uint32_t leaf)
{
    if (leaf < LEAF_HV_BASE)
        return leaf <= ci->max_basic;
    if (leaf < 0x50000000u)
        return ci->hv_max_leaf != 0 && leaf <= ci->hv_max_leaf;
    if (leaf >= LEAF_EXT_MAX && leaf < 0x90000000u)
        return ci->max_ext != 0 && leaf <= ci->max_ext;
    return false;
}

static bool rd(const struct dec *d, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    r[0] = r[1] = r[2] = r[3] = 0;
    if (!leaf_ok(d->ci, leaf))
        return false;
    d->fn(leaf, sub, r, d->ctx);
    return true;
}

/* Copies a register-packed string, stops at NUL, replaces unprintable bytes so reports stay valid. */
static void regs_to_str(char *dst, const uint32_t *w, size_t nwords)
{
    size_t n = nwords * 4, i;
    for (i = 0; i < n; i++) {
        char c = (char)(w[i / 4] >> (8 * (i % 4)));
        if (c == 0)
            break;
        dst[i] = (c >= 0x20 && c <= 0x7e) ? c : '?';
    }
    dst[i] = 0;
}

static void trim(char *s)
{
    size_t len = strlen(s), start = 0;
    while (len > 0 && s[len - 1] == ' ')
        s[--len] = 0;
    while (start < len && s[start] == ' ')
        start++;
    if (start)
        memmove(s, s + start, len - start + 1);
}

/* ---- identification ------------------------------------------------------------------------- */

static void decode_ident(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4];

    raw(d, LEAF_VENDOR, 0, r);
    ci->max_basic = r[EAX];
    uint32_t v[3] = {r[EBX], r[EDX], r[ECX]};
    regs_to_str(ci->vendor_str, v, 3);
    if (ci->vendor_str[0] == 0)
        ci->vendor = CPU_VENDOR_UNKNOWN;
    else if (strcmp(ci->vendor_str, "GenuineIntel") == 0)
        ci->vendor = CPU_VENDOR_INTEL;
    else if (strcmp(ci->vendor_str, "AuthenticAMD") == 0)
        ci->vendor = CPU_VENDOR_AMD;
    else if (strcmp(ci->vendor_str, "HygonGenuine") == 0)
        ci->vendor = CPU_VENDOR_HYGON;
    else
        ci->vendor = CPU_VENDOR_OTHER;

    if (rd(d, LEAF_VERSION, 0, r)) {
        uint32_t base_fam = bits(r[EAX], 11, 8), ext_fam = bits(r[EAX], 27, 20);
        uint32_t base_model = bits(r[EAX], 7, 4), ext_model = bits(r[EAX], 19, 16);
        bool amd_like = ci->vendor == CPU_VENDOR_AMD || ci->vendor == CPU_VENDOR_HYGON;
        ci->signature = r[EAX];
        ci->stepping = bits(r[EAX], 3, 0);
        /* SDM Vol.2A Figure 3-6: ext family only counts when family is 0FH; ext model when 06H or
         * 0FH. AMD APM CPUID Fn0000_0001: ext model only when base family is 0FH. */
        ci->family = base_fam == 0xF ? base_fam + ext_fam : base_fam;
        bool use_ext_model = amd_like ? base_fam == 0xF : (base_fam == 0x6 || base_fam == 0xF);
        ci->model = use_ext_model ? (ext_model << 4) + base_model : base_model;
    }

    /* 8000_0000 is read unconditionally: it is how the range is discovered. A CPU without the range
     * answers with basic-leaf data, which fails this check. */
    raw(d, LEAF_EXT_MAX, 0, r);
    ci->max_ext = (r[EAX] >= LEAF_EXT_MAX && r[EAX] <= 0x800000FFu) ? r[EAX] : 0;
}

/* ---- feature flags: one table row per bit ----------------------------------------------------- */

struct feat_bit {
    uint32_t leaf;
    uint8_t sub, reg, bit;
    uint16_t off;
};

#define F(l, s, r, b, name) { l, s, r, b, offsetof(struct cpu_features, name) }

/* Ordered by (leaf, subleaf) so each leaf is read once. */
static const struct feat_bit feat_bits[] = {
    /* SDM Vol.2A Table 3-10 "Feature Information Returned in the ECX Register" */
    F(0x1, 0, ECX, 0, sse3), F(0x1, 0, ECX, 2, dtes64), F(0x1, 0, ECX, 3, monitor),
    F(0x1, 0, ECX, 5, vmx), F(0x1, 0, ECX, 9, ssse3), F(0x1, 0, ECX, 12, fma),
    F(0x1, 0, ECX, 13, cx16), F(0x1, 0, ECX, 15, pdcm), F(0x1, 0, ECX, 17, pcid),
    F(0x1, 0, ECX, 19, sse4_1), F(0x1, 0, ECX, 20, sse4_2), F(0x1, 0, ECX, 21, x2apic),
    F(0x1, 0, ECX, 22, movbe), F(0x1, 0, ECX, 23, popcnt), F(0x1, 0, ECX, 24, tsc_deadline),
    F(0x1, 0, ECX, 25, aes), F(0x1, 0, ECX, 26, xsave), F(0x1, 0, ECX, 27, osxsave),
    F(0x1, 0, ECX, 28, avx), F(0x1, 0, ECX, 29, f16c), F(0x1, 0, ECX, 30, rdrand),
    F(0x1, 0, ECX, 31, hypervisor),
    /* SDM Vol.2A Table 3-11 "Feature Information Returned in the EDX Register" */
    F(0x1, 0, EDX, 0, fpu), F(0x1, 0, EDX, 4, tsc), F(0x1, 0, EDX, 5, msr), F(0x1, 0, EDX, 6, pae),
    F(0x1, 0, EDX, 8, cx8), F(0x1, 0, EDX, 9, apic), F(0x1, 0, EDX, 12, mtrr), F(0x1, 0, EDX, 13, pge),
    F(0x1, 0, EDX, 15, cmov), F(0x1, 0, EDX, 16, pat), F(0x1, 0, EDX, 17, pse36),
    F(0x1, 0, EDX, 19, clflush), F(0x1, 0, EDX, 21, ds), F(0x1, 0, EDX, 23, mmx),
    F(0x1, 0, EDX, 24, fxsr), F(0x1, 0, EDX, 25, sse), F(0x1, 0, EDX, 26, sse2), F(0x1, 0, EDX, 28, htt),
    /* Leaf 06H: Thermal and Power Management */
    F(0x6, 0, EAX, 1, turbo), F(0x6, 0, EAX, 2, arat), F(0x6, 0, ECX, 0, aperfmperf),
    /* Leaf 07H.0: Structured Extended Feature Flags */
    F(0x7, 0, EBX, 0, fsgsbase), F(0x7, 0, EBX, 3, bmi1), F(0x7, 0, EBX, 5, avx2),
    F(0x7, 0, EBX, 7, smep), F(0x7, 0, EBX, 8, bmi2), F(0x7, 0, EBX, 9, erms),
    F(0x7, 0, EBX, 10, invpcid), F(0x7, 0, EBX, 11, rtm), F(0x7, 0, EBX, 16, avx512f),
    F(0x7, 0, EBX, 17, avx512dq), F(0x7, 0, EBX, 18, rdseed), F(0x7, 0, EBX, 19, adx),
    F(0x7, 0, EBX, 20, smap), F(0x7, 0, EBX, 23, clflushopt), F(0x7, 0, EBX, 24, clwb),
    F(0x7, 0, EBX, 25, intel_pt), F(0x7, 0, EBX, 28, avx512cd), F(0x7, 0, EBX, 29, sha),
    F(0x7, 0, EBX, 30, avx512bw), F(0x7, 0, EBX, 31, avx512vl), F(0x7, 0, ECX, 22, rdpid),
    F(0x7, 0, EDX, 4, fsrm), F(0x7, 0, EDX, 15, hybrid), F(0x7, 0, EDX, 19, arch_lbr),
    /* 8000_0001: SDM Table 3-8 and AMD APM Vol.3 E.4.2 */
    F(0x80000001, 0, ECX, 0, lahf_lm), F(0x80000001, 0, ECX, 1, cmp_legacy),
    F(0x80000001, 0, ECX, 2, svm), F(0x80000001, 0, ECX, 5, lzcnt), F(0x80000001, 0, ECX, 6, sse4a),
    F(0x80000001, 0, ECX, 22, topoext), F(0x80000001, 0, ECX, 23, perfctr_core),
    F(0x80000001, 0, ECX, 24, perfctr_nb), F(0x80000001, 0, EDX, 20, nx),
    F(0x80000001, 0, EDX, 26, pdpe1gb), F(0x80000001, 0, EDX, 27, rdtscp), F(0x80000001, 0, EDX, 29, lm),
    /* 8000_0007 EDX[8]: TscInvariant */
    F(0x80000007, 0, EDX, 8, invariant_tsc),
};

static void decode_features(struct dec *d)
{
    uint32_t r[4] = {0, 0, 0, 0}, cur_leaf = 0, cur_sub = 0;
    bool have = false;
    for (size_t i = 0; i < ARRAY_SIZE(feat_bits); i++) {
        const struct feat_bit *f = &feat_bits[i];
        if (!have || f->leaf != cur_leaf || f->sub != cur_sub) {
            rd(d, f->leaf, f->sub, r); /* zeroes r when out of range */
            cur_leaf = f->leaf;
            cur_sub = f->sub;
            have = true;
        }
        *(bool *)((char *)&d->ci->feat + f->off) = (r[f->reg] >> f->bit) & 1;
    }
}

/* ---- hypervisor, brand, misc ---------------------------------------------------------------- */

static void decode_hypervisor(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4];
    /* The 4000_0000 range exists only under a hypervisor, which sets leaf 1 ECX[31]; on bare Intel
     * silicon it would answer with the highest basic leaf. */
    if (!ci->feat.hypervisor)
        return;
    raw(d, LEAF_HV_BASE, 0, r);
    uint32_t v[3] = {r[EBX], r[ECX], r[EDX]};
    char name[13];
    regs_to_str(name, v, 3);
    if (r[EAX] >= LEAF_HV_BASE && r[EAX] <= 0x400000FFu)
        ci->hv_max_leaf = r[EAX];
    else if (r[EAX] == 0 && name[0])
        ci->hv_max_leaf = LEAF_HV_BASE + 1; /* early KVM reported 0, meaning 4000_0001 */
    else
        return; /* garbage: no hypervisor range */
    memcpy(ci->hv_vendor, name, sizeof(name));
    ci->is_qemu_tcg = strcmp(ci->hv_vendor, "TCGTCGTCGTCG") == 0;
}

static void decode_brand_misc(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4];

    if (ci->max_ext >= LEAF_BRAND0 + 2) {
        uint32_t w[12];
        for (uint32_t i = 0; i < 3; i++) {
            rd(d, LEAF_BRAND0 + i, 0, r);
            memcpy(&w[i * 4], r, sizeof(r));
        }
        regs_to_str(ci->brand, w, 12);
        trim(ci->brand);
    }
    ci->uarch = cpu_uarch_name(ci->vendor, ci->family, ci->model);

    if (rd(d, LEAF_VERSION, 0, r) && ci->feat.clflush)
        ci->clflush_line = bits(r[EBX], 15, 8) * 8;

    if (rd(d, LEAF_ADDR_SIZES, 0, r) && r[EAX] != 0) {
        ci->phys_addr_bits = bits(r[EAX], 7, 0);
        ci->virt_addr_bits = bits(r[EAX], 15, 8);
    } else {
        ci->phys_addr_bits = ci->feat.pae ? 36 : 32;
        ci->virt_addr_bits = 32;
    }

    if (ci->feat.xsave && rd(d, LEAF_XSAVE, 0, r)) {
        ci->xcr0_supported = r[EAX] | ((uint64_t)r[EDX] << 32);
        ci->xsave_size = r[EBX];
        ci->xsave_size_max = r[ECX];
    }

    if (ci->feat.hybrid && rd(d, LEAF_HYBRID, 0, r))
        ci->core_type = (uint8_t)(r[EAX] >> 24);
}

/* ---- topology ------------------------------------------------------------------------------- */

static void topo_set(struct cpu_topology *t, uint32_t smt_bits, uint32_t pkg_shift, uint32_t threads,
                     uint32_t logical)
{
    /* Clamp so that smt_bits + core_bits <= 31 and every shift in cpu_topology_split is defined. */
    smt_bits = MIN(smt_bits, 31u);
    pkg_shift = MIN(MAX(pkg_shift, smt_bits), 31u);
    t->smt_bits = smt_bits;
    t->core_bits = pkg_shift - smt_bits;
    t->threads_per_core = threads ? threads : 1;
    t->logical_per_package = MAX(logical, t->threads_per_core);
    t->cores_per_package = MAX(t->logical_per_package / t->threads_per_core, 1u);
}

/* Leaf 1FH / 0BH (SDM Vol.2A "V2 Extended Topology Enumeration"; Vol.3A 10.12.8.1): each subleaf is
 * one level, EAX[4:0] = bits to shift the x2APIC id right to reach the next level's id. */
static bool decode_ext_topo(struct dec *d, uint32_t leaf)
{
    struct cpu_topology *t = &d->ci->topo;
    uint32_t r[4];
    if (!rd(d, leaf, 0, r) || bits(r[EBX], 15, 0) == 0 || bits(r[ECX], 15, 8) == 0)
        return false;
    uint32_t x2apic = r[EDX], smt_shift = 0, pkg_shift = 0, threads = 1, logical = 1;
    for (uint32_t sub = 0; sub < MAX_SUBLEAF; sub++) {
        if (sub)
            rd(d, leaf, sub, r);
        uint32_t type = bits(r[ECX], 15, 8);
        if (type == 0)
            break;
        if (type == 1) { /* SMT */
            smt_shift = bits(r[EAX], 4, 0);
            threads = bits(r[EBX], 15, 0);
        }
        /* The last level before type 0 is the one whose shift reaches the package id. */
        pkg_shift = bits(r[EAX], 4, 0);
        logical = bits(r[EBX], 15, 0);
    }
    t->x2apic_id = x2apic;
    topo_set(t, smt_shift, pkg_shift, threads, logical);
    t->source = leaf == LEAF_V2_EXT_TOPO ? "cpuid.1fh" : "cpuid.0bh";
    return true;
}

/* AMD APM Vol.3 E.4.7 (8000_0008 ECX: NC, ApicIdCoreIdSize) and E.4.15 (8000_001E). */
static void decode_amd_topo(struct dec *d, bool have_ext_topo)
{
    struct cpu_info *ci = d->ci;
    struct cpu_topology *t = &ci->topo;
    uint32_t r[4] = {0, 0, 0, 0};
    bool have_1e = ci->feat.topoext && rd(d, LEAF_AMD_PROC_TOPO, 0, r);
    uint32_t e1e[4] = {r[0], r[1], r[2], r[3]};

    if (have_1e) {
        t->amd_node_id = bits(e1e[ECX], 7, 0);
        t->amd_nodes_per_package = bits(e1e[ECX], 10, 8) + 1;
    }
    if (have_ext_topo)
        return;

    uint32_t nc = 1, id_size = 0, threads = 1;
    if (rd(d, LEAF_ADDR_SIZES, 0, r)) {
        nc = bits(r[ECX], 7, 0) + 1;
        id_size = bits(r[ECX], 15, 12);
        t->source = "cpuid.80000008h";
    } else {
        rd(d, LEAF_VERSION, 0, r);
        if (ci->feat.htt && ci->feat.cmp_legacy)
            nc = MAX(bits(r[EBX], 23, 16), 1u);
        t->source = "cpuid.01h";
    }
    if (id_size == 0) /* legacy: size follows from NC */
        id_size = log2_ceil(nc);
    if (have_1e) {
        t->x2apic_id = e1e[EAX];
        /* EBX[15:8]+1 is threads per core from Zen (family 17h) on; on family 15h it counts the
         * cores of a compute unit, which are not SMT threads. */
        if (ci->family >= 0x17)
            threads = bits(e1e[EBX], 15, 8) + 1;
        t->source = "cpuid.8000001eh";
    }
    uint32_t smt_bits = log2_ceil(threads);
    topo_set(t, smt_bits, MAX(id_size, smt_bits), threads, nc);
}

/* Pre-0BH Intel: leaf 1 EBX[23:16] addressable logical ids, leaf 4 EAX[31:26]+1 addressable cores
 * (SDM Vol.3A 10.12.8 / "Intel 64 Architecture Processor Topology Enumeration"). These are maxima
 * reserved in the APIC id space, not counts of enabled units. */
static void decode_legacy_topo(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4], logical = 1, cores = 1;
    rd(d, LEAF_VERSION, 0, r);
    if (ci->feat.htt)
        logical = MAX(bits(r[EBX], 23, 16), 1u);
    if (rd(d, LEAF_DET_CACHE, 0, r) && bits(r[EAX], 4, 0) != 0)
        cores = bits(r[EAX], 31, 26) + 1;
    cores = MIN(cores, logical);
    uint32_t per_core = MAX(logical / cores, 1u);
    uint32_t smt_bits = log2_ceil(per_core);
    topo_set(&ci->topo, smt_bits, smt_bits + log2_ceil(cores), per_core, logical);
    ci->topo.source = "cpuid.01h";
}

static void decode_topology(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4];
    bool amd_like = ci->vendor == CPU_VENDOR_AMD || ci->vendor == CPU_VENDOR_HYGON;

    if (rd(d, LEAF_VERSION, 0, r))
        ci->topo.initial_apic_id = bits(r[EBX], 31, 24);
    ci->topo.x2apic_id = ci->topo.initial_apic_id;

    bool ext = decode_ext_topo(d, LEAF_V2_EXT_TOPO) || decode_ext_topo(d, LEAF_EXT_TOPO);
    if (amd_like)
        decode_amd_topo(d, ext);
    else if (!ext)
        decode_legacy_topo(d);
}

void cpu_topology_split(const struct cpu_info *ci, uint32_t apic_id, uint32_t *pkg, uint32_t *core,
                        uint32_t *smt)
{
    /* 64-bit arithmetic with clamped widths: a hand-built cpu_info cannot cause an undefined shift. */
    uint64_t id = apic_id;
    uint32_t sb = ci ? MIN(ci->topo.smt_bits, 32u) : 0;
    uint32_t cb = ci ? MIN(ci->topo.core_bits, 32u) : 0;
    uint64_t above_smt = sb >= 32 ? 0 : id >> sb;
    if (smt)
        *smt = (uint32_t)(id & ((1ull << sb) - 1));
    if (core)
        *core = (uint32_t)(above_smt & ((1ull << cb) - 1));
    if (pkg)
        *pkg = (uint32_t)(cb >= 32 ? 0 : above_smt >> cb);
}

/* ---- caches --------------------------------------------------------------------------------- */

const char *cpu_cache_type_name(uint8_t type)
{
    switch (type) {
    case CPU_CACHE_DATA: return "data";
    case CPU_CACHE_INSTRUCTION: return "instruction";
    case CPU_CACHE_UNIFIED: return "unified";
    default: return "null";
    }
}

/* No cache is anywhere near 1 TiB; anything larger is a garbage leaf, not a cache. */
#define CACHE_MAX_BYTES (1ull << 40)

/* Adds a cache; rejects implausible geometry (garbage leaves) rather than reporting it. */
static void add_cache(struct cpu_info *ci, uint32_t level, uint32_t type, uint32_t ways, uint32_t parts,
                      uint32_t line, uint64_t sets, uint32_t shared_by, bool inclusive, bool fully)
{
    uint64_t bytes;
    if (ci->n_caches >= CPU_MAX_CACHES || level == 0 || type < CPU_CACHE_DATA || type > CPU_CACHE_UNIFIED ||
        ways == 0 || parts == 0 || line == 0 || sets == 0 || sets > UINT32_MAX)
        return;
    if (__builtin_mul_overflow((uint64_t)ways * parts, (uint64_t)line * sets, &bytes) ||
        bytes > CACHE_MAX_BYTES)
        return;
    struct cpu_cache *c = &ci->caches[ci->n_caches++];
    c->level = (uint8_t)level;
    c->type = (uint8_t)type;
    c->ways = ways * parts;
    c->line = line;
    c->sets = (uint32_t)sets;
    c->bytes = bytes;
    c->shared_by = shared_by ? shared_by : 1;
    c->inclusive = inclusive;
    c->fully_assoc = fully;
}

/* Intel leaf 04H and AMD 8000_001DH share one layout (SDM Table 3-8 leaf 04H; APM E.4.14). */
static uint32_t decode_det_caches(struct dec *d, uint32_t leaf)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4], before = ci->n_caches;
    for (uint32_t sub = 0; sub < MAX_SUBLEAF && ci->n_caches < CPU_MAX_CACHES; sub++) {
        if (!rd(d, leaf, sub, r))
            break;
        uint32_t type = bits(r[EAX], 4, 0);
        if (type == CPU_CACHE_NULL)
            break;
        bool fully = bits(r[EAX], 9, 9);
        add_cache(ci, bits(r[EAX], 7, 5), type, bits(r[EBX], 31, 22) + 1, bits(r[EBX], 21, 12) + 1,
                  bits(r[EBX], 11, 0) + 1, r[ECX] + 1ull, bits(r[EAX], 25, 14) + 1, bits(r[EDX], 1, 1), fully);
    }
    return ci->n_caches - before;
}

/* Leaf 02H cache descriptors (SDM Vol.2A Table 3-12 "Encoding of CPUID Leaf 2 Descriptors"). TLB,
 * prefetch and trace-cache descriptors (70H-73H, counted in uops) are not caches of bytes and are
 * left out. */
struct l2_desc {
    uint8_t desc, level, type, ways;
    uint16_t kib;
    uint8_t line;
};

#define D_L1D(d, k, w, l) { d, 1, CPU_CACHE_DATA, w, k, l }
#define D_L1I(d, k, w, l) { d, 1, CPU_CACHE_INSTRUCTION, w, k, l }
#define D_L2(d, k, w, l) { d, 2, CPU_CACHE_UNIFIED, w, k, l }
#define D_L3(d, k, w, l) { d, 3, CPU_CACHE_UNIFIED, w, k, l }

static const struct l2_desc leaf2_table[] = {
    D_L1I(0x06, 8, 4, 32), D_L1I(0x08, 16, 4, 32), D_L1I(0x09, 32, 4, 64), D_L1D(0x0A, 8, 2, 32),
    D_L1D(0x0C, 16, 4, 32), D_L1D(0x0D, 16, 4, 64), D_L1D(0x0E, 24, 6, 64), D_L2(0x1D, 128, 2, 64),
    D_L2(0x21, 256, 8, 64), D_L3(0x22, 512, 4, 64), D_L3(0x23, 1024, 8, 64), D_L2(0x24, 1024, 16, 64),
    D_L3(0x25, 2048, 8, 64), D_L3(0x29, 4096, 8, 64), D_L1D(0x2C, 32, 8, 64), D_L1I(0x30, 32, 8, 64),
    D_L2(0x39, 128, 4, 64), D_L2(0x3A, 192, 6, 64), D_L2(0x3B, 128, 2, 64), D_L2(0x3C, 256, 4, 64),
    D_L2(0x3D, 384, 6, 64), D_L2(0x3E, 512, 4, 64),
    D_L2(0x41, 128, 4, 32), D_L2(0x42, 256, 4, 32), D_L2(0x43, 512, 4, 32), D_L2(0x44, 1024, 4, 32),
    D_L2(0x45, 2048, 4, 32), D_L3(0x46, 4096, 4, 64), D_L3(0x47, 8192, 8, 64), D_L2(0x48, 3072, 12, 64),
    D_L2(0x49, 4096, 16, 64), /* L3 on Xeon MP family 0FH model 06H, see decode_leaf2 */
    D_L3(0x4A, 6144, 12, 64), D_L3(0x4B, 8192, 16, 64), D_L3(0x4C, 12288, 12, 64),
    D_L3(0x4D, 16384, 16, 64), D_L2(0x4E, 6144, 24, 64),
    D_L1D(0x60, 16, 8, 64), D_L1D(0x66, 8, 4, 64), D_L1D(0x67, 16, 4, 64), D_L1D(0x68, 32, 4, 64),
    D_L2(0x78, 1024, 4, 64), D_L2(0x79, 128, 8, 64), D_L2(0x7A, 256, 8, 64), D_L2(0x7B, 512, 8, 64),
    D_L2(0x7C, 1024, 8, 64), D_L2(0x7D, 2048, 8, 64), D_L2(0x7F, 512, 2, 64), D_L2(0x80, 512, 8, 64),
    D_L2(0x82, 256, 8, 32), D_L2(0x83, 512, 8, 32), D_L2(0x84, 1024, 8, 32), D_L2(0x85, 2048, 8, 32),
    D_L2(0x86, 512, 4, 64), D_L2(0x87, 1024, 8, 64),
    D_L3(0xD0, 512, 4, 64), D_L3(0xD1, 1024, 4, 64), D_L3(0xD2, 2048, 4, 64), D_L3(0xD6, 1024, 8, 64),
    D_L3(0xD7, 2048, 8, 64), D_L3(0xD8, 4096, 8, 64), D_L3(0xDC, 1536, 12, 64), D_L3(0xDD, 3072, 12, 64),
    D_L3(0xDE, 6144, 12, 64), D_L3(0xE2, 2048, 16, 64), D_L3(0xE3, 4096, 16, 64), D_L3(0xE4, 8192, 16, 64),
    D_L3(0xEA, 12288, 24, 64), D_L3(0xEB, 18432, 24, 64), D_L3(0xEC, 24576, 24, 64),
};

#define LEAF2_USE_LEAF4 0xFF /* "CPUID leaf 2 does not report cache descriptor information" */

static void leaf2_add(struct cpu_info *ci, uint8_t desc, uint32_t shared_by)
{
    for (size_t i = 0; i < ARRAY_SIZE(leaf2_table); i++) {
        const struct l2_desc *e = &leaf2_table[i];
        if (e->desc != desc)
            continue;
        uint32_t level = e->level;
        if (desc == 0x49 && ci->family == 0xF && ci->model == 0x6)
            level = 3;
        uint32_t bytes = (uint32_t)e->kib * 1024;
        add_cache(ci, level, e->type, e->ways, 1, e->line, bytes / (e->ways * e->line), shared_by, false,
                  false);
        return;
    }
}

static uint32_t decode_leaf2(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4], before = ci->n_caches;
    uint8_t seen[32] = {0}; /* a descriptor repeated across iterations is one cache */
    if (!rd(d, LEAF_CACHE_DESC, 0, r))
        return 0;
    /* AL = how many times to execute leaf 2 (P6: may be >1; SDM now says "always 01H, ignore"). */
    uint32_t iters = MIN(MAX(r[EAX] & 0xFF, 1u), 4u);
    for (uint32_t it = 0; it < iters; it++) {
        if (it)
            rd(d, LEAF_CACHE_DESC, 0, r);
        for (int reg = EAX; reg <= EDX; reg++) {
            if (r[reg] & 0x80000000u) /* bit 31 set: register holds no descriptors */
                continue;
            for (int b = (reg == EAX) ? 1 : 0; b < 4; b++) {
                uint8_t desc = (uint8_t)(r[reg] >> (8 * b));
                if (desc == 0 || desc == LEAF2_USE_LEAF4 || (seen[desc / 8] & (1u << (desc % 8))))
                    continue;
                seen[desc / 8] |= (uint8_t)(1u << (desc % 8));
                leaf2_add(ci, desc, ci->topo.logical_per_package);
            }
        }
    }
    return ci->n_caches - before;
}

/* AMD 8000_0006 L2/L3 associativity field (APM Vol.3 E.4.5). 0 = disabled; 0xFFFF = fully. */
static uint32_t amd_assoc(uint32_t code)
{
    static const uint16_t ways[16] = {0, 1, 2, 0, 4, 0, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0xFFFF};
    return ways[code & 0xF];
}

static void amd_legacy_add(struct cpu_info *ci, uint32_t level, uint32_t type, uint64_t bytes, uint32_t ways,
                           uint32_t line, uint32_t shared_by)
{
    if (bytes == 0 || ways == 0 || line == 0)
        return;
    bool fully = ways == 0xFFFF;
    if (fully)
        ways = (uint32_t)(bytes / line);
    if (ways == 0 || bytes % ((uint64_t)ways * line) != 0)
        return;
    add_cache(ci, level, type, ways, 1, line, (uint32_t)(bytes / ((uint64_t)ways * line)), shared_by, false,
              fully);
}

/* AMD legacy leaves: 8000_0005 (L1) and 8000_0006 (L2, L3), APM Vol.3 E.4.4/E.4.5. */
static uint32_t decode_amd_legacy(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4], before = ci->n_caches;
    uint32_t per_core = ci->topo.threads_per_core, per_pkg = ci->topo.logical_per_package;
    if (rd(d, LEAF_AMD_L1, 0, r)) {
        /* L1: size KiB [31:24], associativity [23:16] (FFh = fully), line [7:0]. */
        for (int reg = ECX; reg <= EDX; reg++) {
            uint32_t assoc = bits(r[reg], 23, 16);
            amd_legacy_add(ci, 1, reg == ECX ? CPU_CACHE_DATA : CPU_CACHE_INSTRUCTION,
                           (uint64_t)bits(r[reg], 31, 24) * 1024, assoc == 0xFF ? 0xFFFF : assoc,
                           bits(r[reg], 7, 0), per_core);
        }
    }
    if (rd(d, LEAF_AMD_L2L3, 0, r)) {
        amd_legacy_add(ci, 2, CPU_CACHE_UNIFIED, (uint64_t)bits(r[ECX], 31, 16) * 1024,
                       amd_assoc(bits(r[ECX], 15, 12)), bits(r[ECX], 7, 0), per_core);
        /* L3 size is in 512 KiB units. */
        amd_legacy_add(ci, 3, CPU_CACHE_UNIFIED, (uint64_t)bits(r[EDX], 31, 18) * 512 * 1024,
                       amd_assoc(bits(r[EDX], 15, 12)), bits(r[EDX], 7, 0), per_pkg);
    }
    return ci->n_caches - before;
}

/* Reports list caches by level, then data / instruction / unified, whatever order the source used. */
static void sort_caches(struct cpu_info *ci)
{
    for (uint32_t i = 1; i < ci->n_caches; i++) {
        struct cpu_cache c = ci->caches[i];
        uint32_t j = i;
        while (j > 0 && (ci->caches[j - 1].level > c.level ||
                         (ci->caches[j - 1].level == c.level && ci->caches[j - 1].type > c.type))) {
            ci->caches[j] = ci->caches[j - 1];
            j--;
        }
        ci->caches[j] = c;
    }
}

static void decode_caches(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    if (ci->vendor == CPU_VENDOR_AMD || ci->vendor == CPU_VENDOR_HYGON) {
        if (ci->feat.topoext && decode_det_caches(d, LEAF_AMD_CACHE_TOPO))
            ci->cache_source = "cpuid.8000001dh";
        else if (decode_amd_legacy(d))
            ci->cache_source = "cpuid.80000005h";
    } else if (decode_det_caches(d, LEAF_DET_CACHE)) {
        ci->cache_source = "cpuid.04h";
    } else if (ci->vendor == CPU_VENDOR_INTEL && decode_leaf2(d)) {
        ci->cache_source = "cpuid.02h";
    } else if (ci->vendor != CPU_VENDOR_INTEL && decode_amd_legacy(d)) {
        ci->cache_source = "cpuid.80000005h"; /* VIA/Zhaoxin implement the AMD leaves */
    }
    sort_caches(ci);
}

/* ---- TSC and frequencies -------------------------------------------------------------------- */

/* Nominal core crystal clock when 15H ECX is 0: SDM Vol.3B 20.7.3 Table 20-91 ("Nominal Core
 * Crystal Clock Frequency"); 06_5F (Goldmont-D) from Linux native_calibrate_tsc(). */
static uint32_t intel_crystal_hz(uint32_t family, uint32_t model)
{
    if (family != 6)
        return 0;
    switch (model) {
    case 0x4E: case 0x5E: case 0x8E: case 0x9E: return 24000000; /* 6th-10th gen Core client */
    case 0x55: case 0x5F: return 25000000;                       /* Xeon Scalable, Goldmont-D */
    case 0x5C: return 19200000;                                  /* Atom Goldmont */
    default: return 0;
    }
}

static void decode_tsc(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    uint32_t r[4];
    uint64_t tsc15 = 0;

    if (rd(d, LEAF_FREQ, 0, r)) {
        ci->base_mhz = bits(r[EAX], 15, 0);
        ci->max_mhz = bits(r[EBX], 15, 0);
        ci->bus_mhz = bits(r[ECX], 15, 0);
    }
    if (rd(d, LEAF_TSC_CRYSTAL, 0, r)) {
        uint32_t den = r[EAX], num = r[EBX];
        ci->crystal_hz = r[ECX];
        if (ci->crystal_hz == 0 && ci->vendor == CPU_VENDOR_INTEL) {
            ci->crystal_hz = intel_crystal_hz(ci->family, ci->model);
            ci->crystal_from_table = ci->crystal_hz != 0;
        }
        if (den && num && ci->crystal_hz)
            tsc15 = ci->crystal_hz * (uint64_t)num / den;
    }
    uint64_t tsc16 = (uint64_t)ci->base_mhz * 1000000;
    /* A table crystal is a guess by model: Skylake-X HEDT parts share 06_55 with Xeon Scalable but
     * do not run from 25 MHz (Linux dropped SKX from its table for this). When 16H disagrees by more
     * than 2%, trust 16H. */
    uint64_t diff = tsc15 > tsc16 ? tsc15 - tsc16 : tsc16 - tsc15;
    if (tsc15 && ci->crystal_from_table && tsc16 && diff > tsc16 / 50)
        tsc15 = 0;
    if (tsc15) {
        ci->tsc_hz = tsc15;
        ci->tsc_hz_source = "cpuid.15h";
    } else if (tsc16) {
        ci->tsc_hz = tsc16;
        ci->tsc_hz_source = "cpuid.16h";
    }
}

/* ---- performance monitoring ----------------------------------------------------------------- */

static void decode_perfmon(struct dec *d)
{
    struct cpu_info *ci = d->ci;
    struct cpu_perfmon *p = &ci->perf;
    uint32_t r[4];

    if (rd(d, LEAF_ARCH_PERFMON, 0, r) && bits(r[EAX], 7, 0) != 0) {
        p->version = bits(r[EAX], 7, 0);
        p->gp_counters = bits(r[EAX], 15, 8);
        p->gp_width = bits(r[EAX], 23, 16);
        p->ebx_length = bits(r[EAX], 31, 24);
        p->events_unavailable = p->ebx_length >= 32 ? r[EBX] : r[EBX] & ((1u << p->ebx_length) - 1);
        if (p->version >= 2) { /* EDX is reserved in version 1 */
            p->fixed_counters = bits(r[EDX], 4, 0);
            p->fixed_width = bits(r[EDX], 12, 5);
        }
        if (p->version >= 5)
            p->fixed_mask = r[ECX];
    }

    if (ci->vendor != CPU_VENDOR_AMD && ci->vendor != CPU_VENDOR_HYGON)
        return;
    p->amd_perfctr_core = ci->feat.perfctr_core;
    p->amd_perfctr_nb = ci->feat.perfctr_nb;
    if (rd(d, LEAF_AMD_PERFMON, 0, r)) {
        p->amd_perfmon_v2 = bits(r[EAX], 0, 0);
        p->amd_core_counters = bits(r[EBX], 3, 0);
        p->amd_nb_counters = bits(r[EBX], 15, 10);
    }
    /* Four PERF_CTR0-3 since K7; six at C001_0200 with PerfCtrExtCore; 8000_0022 counts them.
     * QEMU TCG emulates no counters at all, whatever CPU model it presents. */
    if (ci->is_qemu_tcg)
        p->gp_counters = 0;
    else if (p->amd_perfmon_v2 && p->amd_core_counters)
        p->gp_counters = p->amd_core_counters;
    else if (p->amd_perfctr_core)
        p->gp_counters = 6;
    else if (ci->family >= 6)
        p->gp_counters = 4;
    if (p->gp_counters)
        p->gp_width = 48;
}

/* ---- entry points --------------------------------------------------------------------------- */

void cpuid_decode(struct cpu_info *ci, cpuid_fn fn, void *ctx)
{
    memset(ci, 0, sizeof(*ci));
    ci->uarch = "unknown";
    ci->cache_source = "none";
    ci->tsc_hz_source = "none";
    ci->topo.source = "none";
    if (!fn)
        return;
    struct dec d = {fn, ctx, ci};
    decode_ident(&d);
    decode_features(&d);
    decode_hypervisor(&d);
    decode_brand_misc(&d);
    decode_topology(&d);
    decode_caches(&d);
    decode_tsc(&d);
    decode_perfmon(&d);
}

/* ---- microarchitecture names ---------------------------------------------------------------- */

struct uarch_row {
    uint8_t vendor;
    uint8_t family;
    uint8_t model_lo, model_hi;
    const char *name;
};

#define I(m, n) { CPU_VENDOR_INTEL, 6, m, m, n }
#define A(f, lo, hi, n) { CPU_VENDOR_AMD, f, lo, hi, n }

/* Intel: SDM Vol.4 Table 2-1 (DisplayFamily_DisplayModel) and Linux intel-family.h.
 * AMD: Revision Guides / PPRs per family; Zen generations by model range. */
static const struct uarch_row uarch_table[] = {
    I(0x01, "Pentium Pro"), I(0x03, "Pentium II"), I(0x05, "Pentium II"), I(0x06, "Pentium II"),
    I(0x07, "Pentium III"), I(0x08, "Pentium III"), I(0x0A, "Pentium III"), I(0x0B, "Pentium III"),
    I(0x09, "Pentium M"), I(0x0D, "Pentium M"), I(0x0E, "Yonah"),
    I(0x0F, "Core2"), I(0x16, "Core2"), I(0x17, "Core2"), I(0x1D, "Core2"),
    I(0x1A, "Nehalem"), I(0x1E, "Nehalem"), I(0x1F, "Nehalem"), I(0x2E, "Nehalem-EX"),
    I(0x25, "Westmere"), I(0x2C, "Westmere"), I(0x2F, "Westmere-EX"),
    I(0x2A, "Sandy Bridge"), I(0x2D, "Sandy Bridge-EP"), I(0x3A, "Ivy Bridge"), I(0x3E, "Ivy Bridge-EP"),
    I(0x3C, "Haswell"), I(0x45, "Haswell"), I(0x46, "Haswell"), I(0x3F, "Haswell-EP"),
    I(0x3D, "Broadwell"), I(0x47, "Broadwell"), I(0x4F, "Broadwell-EP"), I(0x56, "Broadwell-DE"),
    I(0x4E, "Skylake"), I(0x5E, "Skylake"), I(0x55, "Skylake-SP/Cascade Lake"),
    I(0x8E, "Kaby Lake/Coffee Lake"), I(0x9E, "Kaby Lake/Coffee Lake"), I(0xA5, "Comet Lake"),
    I(0xA6, "Comet Lake"), I(0x66, "Cannon Lake"),
    I(0x7D, "Ice Lake"), I(0x7E, "Ice Lake"), I(0x6A, "Ice Lake-SP"), I(0x6C, "Ice Lake-SP"),
    I(0xA7, "Rocket Lake"), I(0x8C, "Tiger Lake"), I(0x8D, "Tiger Lake"),
    I(0x8F, "Sapphire Rapids"), I(0xCF, "Emerald Rapids"), I(0xAD, "Granite Rapids"), I(0xAE, "Granite Rapids"),
    I(0x97, "Alder Lake"), I(0x9A, "Alder Lake"), I(0xB7, "Raptor Lake"), I(0xBA, "Raptor Lake"),
    I(0xBF, "Raptor Lake"), I(0xAA, "Meteor Lake"), I(0xAC, "Meteor Lake"), I(0xBD, "Lunar Lake"),
    I(0xC5, "Arrow Lake"), I(0xC6, "Arrow Lake"),
    I(0x1C, "Bonnell"), I(0x26, "Bonnell"), I(0x27, "Saltwell"), I(0x35, "Saltwell"), I(0x36, "Saltwell"),
    I(0x37, "Silvermont"), I(0x4A, "Silvermont"), I(0x4D, "Silvermont"), I(0x5A, "Silvermont"),
    I(0x5D, "Silvermont"), I(0x4C, "Airmont"), I(0x5C, "Goldmont"), I(0x5F, "Goldmont"),
    I(0x7A, "Goldmont Plus"), I(0x86, "Tremont"), I(0x96, "Tremont"), I(0x9C, "Tremont"),
    I(0xBE, "Gracemont"), I(0xAF, "Sierra Forest"), I(0xB6, "Grand Ridge"),
    I(0x57, "Knights Landing"), I(0x85, "Knights Mill"),
    {CPU_VENDOR_INTEL, 0x5, 0x00, 0xFF, "P5"},
    {CPU_VENDOR_INTEL, 0xF, 0x00, 0xFF, "NetBurst"}, /* Pentium 4 / Pentium D / Xeon */
    A(0x0F, 0x00, 0xFF, "K8"),
    A(0x10, 0x00, 0xFF, "K10"),
    A(0x11, 0x00, 0xFF, "K10 (Griffin)"),
    A(0x12, 0x00, 0xFF, "K10 (Llano)"),
    A(0x14, 0x00, 0xFF, "Bobcat"),
    A(0x15, 0x00, 0x01, "Bulldozer"), A(0x15, 0x02, 0x2F, "Piledriver"), A(0x15, 0x30, 0x3F, "Steamroller"),
    A(0x15, 0x60, 0x7F, "Excavator"),
    A(0x16, 0x00, 0xFF, "Jaguar"),
    A(0x17, 0x00, 0x07, "Zen"), A(0x17, 0x08, 0x0F, "Zen+"), A(0x17, 0x10, 0x17, "Zen"),
    A(0x17, 0x18, 0x1F, "Zen+"), A(0x17, 0x20, 0x2F, "Zen"), A(0x17, 0x30, 0xFF, "Zen2"),
    A(0x19, 0x00, 0x0F, "Zen3"), A(0x19, 0x10, 0x1F, "Zen4"), A(0x19, 0x20, 0x3F, "Zen3"),
    A(0x19, 0x40, 0x4F, "Zen3+"), A(0x19, 0x50, 0x5F, "Zen3"), A(0x19, 0x60, 0x7F, "Zen4"),
    A(0x19, 0xA0, 0xAF, "Zen4"),
    A(0x1A, 0x00, 0xFF, "Zen5"),
    {CPU_VENDOR_HYGON, 0x18, 0x00, 0xFF, "Dhyana (Zen)"},
};

const char *cpu_uarch_name(enum cpu_vendor v, uint32_t family, uint32_t model)
{
    for (size_t i = 0; i < ARRAY_SIZE(uarch_table); i++) {
        const struct uarch_row *u = &uarch_table[i];
        if (u->vendor == v && u->family == family && model >= u->model_lo && model <= u->model_hi)
            return u->name;
    }
    return "unknown";
}
