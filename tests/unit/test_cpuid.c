/* test_cpuid.c - cpuid_decode() against real and emulated CPUID dumps (tests/fixtures/cpuid) and
 * hostile synthetic ones. The replay follows tests/fixtures/cpuid/README.md. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/cpuid.h"

/* ---- dump parsing and replay ---------------------------------------------------------------- */

#define MAX_ENTRIES 512

struct entry {
    uint32_t leaf, sub, r[4];
};

/* What the replay answers for a leaf outside the CPU's ranges. */
enum garbage { GARBAGE_INTEL, GARBAGE_ONES, GARBAGE_ZERO };

struct dump {
    struct entry e[MAX_ENTRIES];
    size_t n;
    enum garbage mode;
    unsigned calls;
    unsigned illegal;      /* out-of-range reads other than the range probes */
    uint32_t illegal_leaf; /* the first one, for the failure message */
};

/* Parses the fixture format into d. Returns 0, or the 1-based number of the first bad line. */
static int parse_dump(const char *text, struct dump *d)
{
    int lineno = 0;
    memset(d, 0, sizeof(*d));
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        char line[256];
        lineno++;
        if (len >= sizeof(line))
            return lineno;
        memcpy(line, text, len);
        line[len] = 0;
        text += len + (nl ? 1 : 0);
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        uint32_t v[6];
        int nv = 0;
        for (char *tok = strtok(line, " \t\r"); tok; tok = strtok(NULL, " \t\r")) {
            char *end;
            errno = 0;
            unsigned long x = strtoul(tok, &end, 16);
            if (nv == 6 || *end || errno || x > 0xFFFFFFFFul || tok[0] == '-')
                return lineno;
            v[nv++] = (uint32_t)x;
        }
        if (nv == 0)
            continue;
        if (nv != 6 || d->n == MAX_ENTRIES)
            return lineno;
        for (size_t i = 0; i < d->n; i++)
            if (d->e[i].leaf == v[0] && d->e[i].sub == v[1])
                return lineno; /* duplicate */
        struct entry *e = &d->e[d->n++];
        e->leaf = v[0];
        e->sub = v[1];
        memcpy(e->r, &v[2], sizeof(e->r));
    }
    return 0;
}

static const struct entry *find(const struct dump *d, uint32_t leaf, uint32_t sub)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->e[i].leaf == leaf && d->e[i].sub == sub)
            return &d->e[i];
    return NULL;
}

static bool subleaf_indexed(uint32_t leaf)
{
    switch (leaf) {
    case 0x04: case 0x07: case 0x0B: case 0x0D: case 0x0F: case 0x10: case 0x12: case 0x14: case 0x17:
    case 0x18: case 0x1B: case 0x1D: case 0x1E: case 0x1F: case 0x20: case 0x23: case 0x24:
    case 0x8000001D: case 0x80000020: case 0x80000026:
        return true;
    default:
        return false;
    }
}

static bool in_range(const struct dump *d, uint32_t leaf)
{
    const struct entry *m;
    if (leaf < 0x40000000u)
        return (m = find(d, 0, 0)) && leaf <= m->r[0];
    if (leaf < 0x50000000u) /* EAX 0 (early KVM) means 4000_0001 */
        return (m = find(d, 0x40000000u, 0)) && leaf <= (m->r[0] ? m->r[0] : 0x40000001u);
    if (leaf >= 0x80000000u && leaf < 0x90000000u)
        return (m = find(d, 0x80000000u, 0)) && m->r[0] >= 0x80000000u && leaf <= m->r[0];
    return false;
}

static void answer(const struct dump *d, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    const struct entry *e = find(d, leaf, sub);
    memset(r, 0, 4 * sizeof(uint32_t));
    if (e) {
        memcpy(r, e->r, 4 * sizeof(uint32_t));
    } else if (subleaf_indexed(leaf)) {
        if (leaf == 0x0B || leaf == 0x1F || leaf == 0x80000026) {
            /* An invalid level still echoes the subleaf and the x2APIC id. */
            const struct entry *e0 = find(d, leaf, 0);
            r[2] = sub & 0xFF;
            r[3] = e0 ? e0->r[3] : 0;
        }
    } else if ((e = find(d, leaf, 0))) {
        memcpy(r, e->r, 4 * sizeof(uint32_t));
    }
}

static bool hv_bit(const struct dump *d)
{
    const struct entry *e = find(d, 1, 0);
    return in_range(d, 1) && e && (e->r[2] >> 31);
}

static void replay(uint32_t leaf, uint32_t sub, uint32_t r[4], void *ctx)
{
    struct dump *d = ctx;
    d->calls++;
    if (in_range(d, leaf)) {
        answer(d, leaf, sub, r);
        return;
    }
    /* Leaf 0 and 8000_0000 discover the ranges; 4000_0000 may be probed when leaf 1 ECX[31] says so. */
    bool probe = leaf == 0 || leaf == 0x80000000u || (leaf == 0x40000000u && hv_bit(d));
    if (!probe && d->illegal++ == 0)
        d->illegal_leaf = leaf;
    switch (d->mode) {
    case GARBAGE_INTEL: {
        const struct entry *m = find(d, 0, 0);
        answer(d, m ? m->r[0] : 0, sub, r);
        break;
    }
    case GARBAGE_ONES:
        memset(r, 0xFF, 4 * sizeof(uint32_t));
        break;
    case GARBAGE_ZERO:
        memset(r, 0, 4 * sizeof(uint32_t));
        break;
    }
}

/* ---- fixtures ------------------------------------------------------------------------------- */

static char fixture_dir[PATH_MAX + 64];

static bool dir_ok(const char *dir)
{
    char p[sizeof(fixture_dir) + 16];
    snprintf(p, sizeof(p), "%s/README.md", dir);
    return access(p, R_OK) == 0;
}

/* PMB_FIXTURES overrides; else the tree relative to the working directory, else to the binary
 * (build/host/test_cpuid -> ../../tests/fixtures/cpuid). */
static const char *fixtures(void)
{
    if (fixture_dir[0])
        return fixture_dir;
    const char *env = getenv("PMB_FIXTURES");
    if (env) {
        snprintf(fixture_dir, sizeof(fixture_dir), "%s/cpuid", env);
        return fixture_dir;
    }
    snprintf(fixture_dir, sizeof(fixture_dir), "tests/fixtures/cpuid");
    if (dir_ok(fixture_dir))
        return fixture_dir;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(fixture_dir, sizeof(fixture_dir), "%s/../../tests/fixtures/cpuid", exe);
    }
    return fixture_dir;
}

static struct dump *load_text(const char *text)
{
    struct dump *d = calloc(1, sizeof(*d));
    assert_non_null(d);
    int bad = parse_dump(text, d);
    if (bad)
        fail_msg("dump line %d does not parse", bad);
    return d;
}

static struct dump *load_fixture(const char *name)
{
    char path[sizeof(fixture_dir) + 128];
    snprintf(path, sizeof(path), "%s/%s", fixtures(), name);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s (set PMB_FIXTURES to the tests/fixtures directory)", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    struct dump *d = calloc(1, sizeof(*d));
    assert_non_null(d);
    int bad = parse_dump(buf, d);
    if (bad)
        fail_msg("%s:%d does not parse", name, bad);
    return d;
}

/* Decodes d with Intel garbage past the ranges, requires that no out-of-range leaf was read, and
 * that all-ones and all-zero garbage decode identically. */
static void decode_checked(struct dump *d, const char *what, struct cpu_info *ci)
{
    d->mode = GARBAGE_INTEL;
    d->illegal = 0;
    cpuid_decode(ci, replay, d);
    if (d->illegal)
        fail_msg("%s: decoder read out-of-range leaf %#x (%u such reads)", what, d->illegal_leaf, d->illegal);
    static const enum garbage others[] = {GARBAGE_ONES, GARBAGE_ZERO};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        struct cpu_info alt;
        d->mode = others[i];
        cpuid_decode(&alt, replay, d);
        if (memcmp(ci, &alt, sizeof(alt)) != 0)
            fail_msg("%s: result depends on what out-of-range leaves return (mode %d)", what, (int)others[i]);
    }
    d->mode = GARBAGE_INTEL;
}

static struct dump *decode_fixture(const char *name, struct cpu_info *ci)
{
    struct dump *d = load_fixture(name);
    decode_checked(d, name, ci);
    return d;
}

/* ---- assertion helpers ---------------------------------------------------------------------- */

#define ASSERT_CACHE(c, lvl, typ, by, wy, ln, st, sh, inc)                                              \
    do {                                                                                             \
        assert_int_equal((c).level, (lvl));                                                          \
        assert_int_equal((c).type, (typ));                                                           \
        assert_int_equal((c).bytes, (by));                                                           \
        assert_int_equal((c).ways, (wy));                                                            \
        assert_int_equal((c).line, (ln));                                                            \
        assert_int_equal((c).sets, (st));                                                            \
        assert_int_equal((c).shared_by, (sh));                                                       \
        assert_int_equal((c).inclusive, (inc));                                                      \
    } while (0)

#define D CPU_CACHE_DATA
#define I CPU_CACHE_INSTRUCTION
#define U CPU_CACHE_UNIFIED
#define K 1024ull
#define M (1024ull * 1024)

/* The flags the kernel relies on; each fixture lists the ones that must be set, all others clear. */
#define FLAG(n) { #n, offsetof(struct cpu_features, n) }
static const struct {
    const char *name;
    size_t off;
} flags[] = {
    FLAG(fpu), FLAG(tsc), FLAG(msr), FLAG(apic), FLAG(pae), FLAG(pse36), FLAG(mtrr), FLAG(pat),
    FLAG(clflush), FLAG(sse), FLAG(sse2), FLAG(sse3), FLAG(ssse3), FLAG(sse4_1), FLAG(sse4_2),
    FLAG(popcnt), FLAG(x2apic), FLAG(xsave), FLAG(osxsave), FLAG(avx), FLAG(avx2), FLAG(avx512f),
    FLAG(avx512bw), FLAG(avx512vl), FLAG(fma), FLAG(bmi2), FLAG(erms), FLAG(fsrm), FLAG(rdtscp),
    FLAG(invariant_tsc), FLAG(pdpe1gb), FLAG(nx), FLAG(lm), FLAG(hypervisor), FLAG(pdcm), FLAG(ds),
    FLAG(dtes64), FLAG(aperfmperf), FLAG(arat), FLAG(clflushopt), FLAG(clwb), FLAG(cx16), FLAG(monitor),
    FLAG(tsc_deadline),
};

static bool word_in(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return true;
    return false;
}

static void check_flags(const struct cpu_info *ci, const char *set)
{
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        bool want = word_in(set, flags[i].name);
        bool got = *(const bool *)((const char *)&ci->feat + flags[i].off);
        if (want != got)
            fail_msg("feature %s: expected %d, decoded %d", flags[i].name, want, got);
    }
}

/* ---- real CPUs ------------------------------------------------------------------------------ */

static void test_xeon_x5570(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("intel_xeon_x5570_nehalem_ep.txt", &ci);

    assert_int_equal(ci.vendor, CPU_VENDOR_INTEL);
    assert_string_equal(ci.vendor_str, "GenuineIntel");
    assert_int_equal(ci.max_basic, 0xB);
    assert_int_equal(ci.max_ext, 0x80000008);
    assert_int_equal(ci.signature, 0x106A5);
    assert_int_equal(ci.family, 6);
    assert_int_equal(ci.model, 0x1A);
    assert_int_equal(ci.stepping, 5);
    assert_string_equal(ci.brand, "Intel(R) Xeon(R) CPU           X5570  @ 2.93GHz");
    assert_string_equal(ci.uarch, "Nehalem");
    assert_int_equal(ci.clflush_line, 64);
    assert_int_equal(ci.phys_addr_bits, 40);
    assert_int_equal(ci.virt_addr_bits, 48);
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 ssse3 sse4_1 sse4_2 popcnt "
                     "rdtscp invariant_tsc nx lm pdcm ds dtes64 aperfmperf cx16 monitor");
    assert_true(ci.feat.turbo);
    assert_int_equal(ci.xcr0_supported, 0);
    assert_int_equal(ci.xsave_size, 0);

    assert_string_equal(ci.cache_source, "cpuid.04h");
    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[0], 1, D, 32 * K, 8, 64, 64, 2, false);
    ASSERT_CACHE(ci.caches[1], 1, I, 32 * K, 4, 64, 128, 2, false);
    ASSERT_CACHE(ci.caches[2], 2, U, 256 * K, 8, 64, 512, 2, false);
    ASSERT_CACHE(ci.caches[3], 3, U, 8 * M, 16, 64, 8192, 16, true);

    assert_string_equal(ci.topo.source, "cpuid.0bh");
    assert_int_equal(ci.topo.initial_apic_id, 1);
    assert_int_equal(ci.topo.x2apic_id, 1);
    assert_int_equal(ci.topo.smt_bits, 1);
    assert_int_equal(ci.topo.core_bits, 3);
    assert_int_equal(ci.topo.threads_per_core, 2);
    assert_int_equal(ci.topo.cores_per_package, 4);
    assert_int_equal(ci.topo.logical_per_package, 8);
    uint32_t pkg, core, smt;
    cpu_topology_split(&ci, ci.topo.x2apic_id, &pkg, &core, &smt);
    assert_int_equal(pkg, 0);
    assert_int_equal(core, 0);
    assert_int_equal(smt, 1);
    cpu_topology_split(&ci, 0x15, &pkg, &core, &smt); /* second socket, core 2, thread 1 */
    assert_int_equal(pkg, 1);
    assert_int_equal(core, 2);
    assert_int_equal(smt, 1);

    assert_int_equal(ci.tsc_hz, 0); /* no leaf 15H/16H: the kernel calibrates */
    assert_string_equal(ci.tsc_hz_source, "none");
    assert_int_equal(ci.base_mhz, 0);

    assert_int_equal(ci.perf.version, 3);
    assert_int_equal(ci.perf.gp_counters, 4);
    assert_int_equal(ci.perf.gp_width, 48);
    assert_int_equal(ci.perf.ebx_length, 7);
    assert_int_equal(ci.perf.events_unavailable, 0x44);
    assert_int_equal(ci.perf.fixed_counters, 3);
    assert_int_equal(ci.perf.fixed_width, 48);
    assert_int_equal(ci.perf.fixed_mask, 0);

    assert_string_equal(ci.hv_vendor, "");
    assert_int_equal(ci.hv_max_leaf, 0);
    assert_false(ci.is_qemu_tcg);
    free(d);
}

/* BIOS "Limit CPUID Maximum" (IA32_MISC_ENABLE[22]) caps leaf 0 EAX at 2: the decoder must then fall
 * back to the leaf-2 descriptors, and they must describe the same caches leaf 4 did. */
static void test_x5570_limit_cpuid_uses_leaf2(void **state)
{
    (void)state;
    struct cpu_info full, lim;
    struct dump *d = decode_fixture("intel_xeon_x5570_nehalem_ep.txt", &full);
    struct entry *e0 = (struct entry *)find(d, 0, 0);
    e0->r[0] = 2;
    decode_checked(d, "x5570 limited to leaf 2", &lim);

    assert_int_equal(lim.max_basic, 2);
    assert_string_equal(lim.cache_source, "cpuid.02h");
    assert_int_equal(lim.n_caches, full.n_caches);
    for (uint32_t i = 0; i < lim.n_caches; i++) {
        assert_int_equal(lim.caches[i].level, full.caches[i].level);
        assert_int_equal(lim.caches[i].type, full.caches[i].type);
        assert_int_equal(lim.caches[i].bytes, full.caches[i].bytes);
        assert_int_equal(lim.caches[i].ways, full.caches[i].ways);
        assert_int_equal(lim.caches[i].line, full.caches[i].line);
        assert_int_equal(lim.caches[i].sets, full.caches[i].sets);
    }
    assert_int_equal(lim.perf.version, 0); /* leaf 0AH is out of range now */
    assert_false(lim.feat.aperfmperf);     /* so is leaf 6 */
    assert_string_equal(lim.topo.source, "cpuid.01h");
    free(d);
}

static void test_pentium4_northwood(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("intel_pentium4_northwood.txt", &ci);

    assert_int_equal(ci.vendor, CPU_VENDOR_INTEL);
    assert_int_equal(ci.max_basic, 2);
    assert_int_equal(ci.max_ext, 0x80000004);
    assert_int_equal(ci.family, 0xF);
    assert_int_equal(ci.model, 2);
    assert_int_equal(ci.stepping, 9);
    assert_string_equal(ci.uarch, "NetBurst");
    assert_string_equal(ci.brand, "Intel(R) Pentium(R) 4 CPU 2.80GHz"); /* leading blanks trimmed */
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 ds");
    assert_true(ci.feat.htt);
    assert_int_equal(ci.phys_addr_bits, 36); /* no 8000_0008: PAE width */
    assert_int_equal(ci.virt_addr_bits, 32);

    /* Leaf 2: 66H L1d 8K 4-way, 7BH L2 512K 8-way; 50H/5BH TLBs, 40H "no L3", 70H trace cache skipped. */
    assert_string_equal(ci.cache_source, "cpuid.02h");
    assert_int_equal(ci.n_caches, 2);
    ASSERT_CACHE(ci.caches[0], 1, D, 8 * K, 4, 64, 32, 2, false);
    ASSERT_CACHE(ci.caches[1], 2, U, 512 * K, 8, 64, 1024, 2, false);

    /* HT without leaf 4: two logical processors, one core. */
    assert_string_equal(ci.topo.source, "cpuid.01h");
    assert_int_equal(ci.topo.initial_apic_id, 0);
    assert_int_equal(ci.topo.smt_bits, 1);
    assert_int_equal(ci.topo.core_bits, 0);
    assert_int_equal(ci.topo.threads_per_core, 2);
    assert_int_equal(ci.topo.cores_per_package, 1);
    assert_int_equal(ci.topo.logical_per_package, 2);

    assert_int_equal(ci.perf.version, 0);
    assert_int_equal(ci.perf.gp_counters, 0);
    assert_int_equal(ci.tsc_hz, 0);
    assert_string_equal(ci.hv_vendor, "");
    free(d);
}

static void test_opteron_2378_k10(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("amd_opteron_2378_k10.txt", &ci);

    assert_int_equal(ci.vendor, CPU_VENDOR_AMD);
    assert_string_equal(ci.vendor_str, "AuthenticAMD");
    assert_int_equal(ci.max_basic, 5);
    assert_int_equal(ci.max_ext, 0x8000001B);
    assert_int_equal(ci.family, 0x10);
    assert_int_equal(ci.model, 4);
    assert_int_equal(ci.stepping, 2);
    assert_string_equal(ci.uarch, "K10");
    assert_string_equal(ci.brand, "Quad-Core AMD Opteron(tm) Processor 2378");
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 popcnt rdtscp invariant_tsc "
                     "pdpe1gb nx lm cx16 monitor");
    assert_true(ci.feat.svm);
    assert_true(ci.feat.sse4a);
    assert_false(ci.feat.topoext);
    assert_int_equal(ci.phys_addr_bits, 48);

    /* 8000_0005: 64K 2-way L1s; 8000_0006: L2 512K assoc code 8 (16-way), L3 12 x 512K assoc Bh (48-way). */
    assert_string_equal(ci.cache_source, "cpuid.80000005h");
    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[0], 1, D, 64 * K, 2, 64, 512, 1, false);
    ASSERT_CACHE(ci.caches[1], 1, I, 64 * K, 2, 64, 512, 1, false);
    ASSERT_CACHE(ci.caches[2], 2, U, 512 * K, 16, 64, 512, 1, false);
    ASSERT_CACHE(ci.caches[3], 3, U, 6 * M, 48, 64, 2048, 4, false);

    /* 8000_0008 ECX = 2003h: NC = 4 cores, ApicIdCoreIdSize = 2. */
    assert_string_equal(ci.topo.source, "cpuid.80000008h");
    assert_int_equal(ci.topo.smt_bits, 0);
    assert_int_equal(ci.topo.core_bits, 2);
    assert_int_equal(ci.topo.threads_per_core, 1);
    assert_int_equal(ci.topo.cores_per_package, 4);
    uint32_t pkg, core, smt;
    cpu_topology_split(&ci, 6, &pkg, &core, &smt);
    assert_int_equal(pkg, 1);
    assert_int_equal(core, 2);
    assert_int_equal(smt, 0);

    assert_int_equal(ci.perf.version, 0);
    assert_int_equal(ci.perf.gp_counters, 4); /* PERF_CTR0-3 */
    assert_int_equal(ci.perf.gp_width, 48);
    assert_false(ci.perf.amd_perfctr_core);
    assert_false(ci.perf.amd_perfmon_v2);
    assert_int_equal(ci.tsc_hz, 0);
    free(d);
}

static void test_core_i9_13900kf(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("intel_core_i9_13900kf_raptor_lake.txt", &ci);

    assert_int_equal(ci.max_basic, 0x20);
    assert_int_equal(ci.family, 6);
    assert_int_equal(ci.model, 0xB7);
    assert_int_equal(ci.stepping, 1);
    assert_string_equal(ci.uarch, "Raptor Lake");
    assert_string_equal(ci.brand, "13th Gen Intel(R) Core(TM) i9-13900KF");
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 ssse3 sse4_1 sse4_2 popcnt "
                     "x2apic xsave osxsave avx avx2 fma bmi2 erms fsrm rdtscp invariant_tsc pdpe1gb nx lm pdcm "
                     "ds dtes64 aperfmperf arat clflushopt clwb cx16 monitor tsc_deadline");
    assert_true(ci.feat.hybrid);
    assert_true(ci.feat.arch_lbr);
    assert_int_equal(ci.core_type, 0x40); /* this dump is from a P-core */
    assert_int_equal(ci.xcr0_supported, 0x207);
    assert_int_equal(ci.xsave_size, 0x340);
    assert_int_equal(ci.xsave_size_max, 0xA88);
    assert_int_equal(ci.phys_addr_bits, 39);

    assert_string_equal(ci.cache_source, "cpuid.04h");
    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[0], 1, D, 48 * K, 12, 64, 64, 2, false);
    ASSERT_CACHE(ci.caches[1], 1, I, 32 * K, 8, 64, 64, 2, false);
    ASSERT_CACHE(ci.caches[2], 2, U, 2 * M, 16, 64, 2048, 8, false);
    ASSERT_CACHE(ci.caches[3], 3, U, 36 * M, 12, 64, 49152, 128, false);

    assert_string_equal(ci.topo.source, "cpuid.1fh");
    assert_int_equal(ci.topo.smt_bits, 1);
    assert_int_equal(ci.topo.core_bits, 6);
    assert_int_equal(ci.topo.threads_per_core, 2);
    assert_int_equal(ci.topo.logical_per_package, 32);
    assert_int_equal(ci.topo.cores_per_package, 16); /* 32 / 2: an estimate on hybrid parts (8P+16E) */

    /* 15H: 38.4 MHz crystal x 156/2 */
    assert_string_equal(ci.tsc_hz_source, "cpuid.15h");
    assert_int_equal(ci.crystal_hz, 38400000);
    assert_false(ci.crystal_from_table);
    assert_int_equal(ci.tsc_hz, 2995200000ull);
    assert_int_equal(ci.base_mhz, 3000);
    assert_int_equal(ci.max_mhz, 6200);
    assert_int_equal(ci.bus_mhz, 100);

    assert_int_equal(ci.perf.version, 5);
    assert_int_equal(ci.perf.gp_counters, 6);
    assert_int_equal(ci.perf.gp_width, 48);
    assert_int_equal(ci.perf.ebx_length, 7);
    assert_int_equal(ci.perf.events_unavailable, 0);
    assert_int_equal(ci.perf.fixed_counters, 3);
    assert_int_equal(ci.perf.fixed_width, 48);
    assert_int_equal(ci.perf.fixed_mask, 7);
    free(d);
}

static void test_core_i9_7900x_skylake_x(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("intel_core_i9_7900x_skylake_x.txt", &ci);

    assert_int_equal(ci.family, 6);
    assert_int_equal(ci.model, 0x55);
    assert_int_equal(ci.stepping, 4);
    assert_string_equal(ci.uarch, "Skylake-SP/Cascade Lake");
    assert_string_equal(ci.brand, "Intel(R) Core(TM) i9-7900X CPU @ 3.30GHz");
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 ssse3 sse4_1 sse4_2 popcnt "
                     "x2apic xsave osxsave avx avx2 avx512f avx512bw avx512vl fma bmi2 erms rdtscp invariant_tsc "
                     "pdpe1gb nx lm pdcm ds dtes64 aperfmperf arat clflushopt clwb cx16 monitor tsc_deadline");
    assert_false(ci.feat.hybrid);
    assert_int_equal(ci.core_type, 0);
    assert_int_equal(ci.xcr0_supported, 0xFF);

    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[2], 2, U, 1 * M, 16, 64, 1024, 2, false);
    ASSERT_CACHE(ci.caches[3], 3, U, 11 * 64 * 20480ull, 11, 64, 20480, 32, false); /* 13.75 MB, 11-way */

    assert_string_equal(ci.topo.source, "cpuid.0bh");
    assert_int_equal(ci.topo.smt_bits, 1);
    assert_int_equal(ci.topo.core_bits, 4);
    assert_int_equal(ci.topo.cores_per_package, 10);
    assert_int_equal(ci.topo.threads_per_core, 2);

    /* 15H gives 276/2 with ECX = 0. The SDM's 25 MHz for 06_55 would make 3.45 GHz; 16H says 3300 MHz,
     * more than 2% away, so 16H wins (these HEDT parts do not run the Xeon crystal). */
    assert_int_equal(ci.crystal_hz, 25000000);
    assert_true(ci.crystal_from_table);
    assert_int_equal(ci.base_mhz, 3300);
    assert_int_equal(ci.max_mhz, 4000);
    assert_int_equal(ci.tsc_hz, 3300000000ull);
    assert_string_equal(ci.tsc_hz_source, "cpuid.16h");

    assert_int_equal(ci.perf.version, 4);
    assert_int_equal(ci.perf.gp_counters, 4);
    assert_int_equal(ci.perf.fixed_counters, 3);
    free(d);
}

static void test_ryzen7_7700x_zen4(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("amd_ryzen7_7700x_zen4.txt", &ci);

    assert_int_equal(ci.vendor, CPU_VENDOR_AMD);
    assert_int_equal(ci.max_basic, 0x10);
    assert_int_equal(ci.max_ext, 0x80000028);
    assert_int_equal(ci.family, 0x19);
    assert_int_equal(ci.model, 0x61);
    assert_int_equal(ci.stepping, 2);
    assert_string_equal(ci.uarch, "Zen4");
    assert_string_equal(ci.brand, "AMD Ryzen 7 7700X 8-Core Processor");
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 ssse3 sse4_1 sse4_2 popcnt "
                     "x2apic xsave osxsave avx avx2 avx512f avx512bw avx512vl fma bmi2 erms fsrm rdtscp "
                     "invariant_tsc pdpe1gb nx lm aperfmperf arat clflushopt clwb cx16 monitor");
    assert_true(ci.feat.topoext);
    assert_int_equal(ci.xcr0_supported, 0x2E7);

    assert_string_equal(ci.cache_source, "cpuid.8000001dh");
    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[0], 1, D, 32 * K, 8, 64, 64, 2, false);
    ASSERT_CACHE(ci.caches[1], 1, I, 32 * K, 8, 64, 64, 2, false);
    ASSERT_CACHE(ci.caches[2], 2, U, 1 * M, 8, 64, 2048, 2, true);
    ASSERT_CACHE(ci.caches[3], 3, U, 32 * M, 16, 64, 32768, 16, false);

    /* Zen 4 implements leaf 0BH; 8000_001E still gives the node. */
    assert_string_equal(ci.topo.source, "cpuid.0bh");
    assert_int_equal(ci.topo.smt_bits, 1);
    assert_int_equal(ci.topo.core_bits, 3);
    assert_int_equal(ci.topo.threads_per_core, 2);
    assert_int_equal(ci.topo.cores_per_package, 8);
    assert_int_equal(ci.topo.amd_node_id, 0);
    assert_int_equal(ci.topo.amd_nodes_per_package, 1);

    assert_int_equal(ci.perf.version, 0);
    assert_true(ci.perf.amd_perfctr_core);
    assert_true(ci.perf.amd_perfctr_nb);
    assert_true(ci.perf.amd_perfmon_v2);
    assert_int_equal(ci.perf.amd_core_counters, 6);
    assert_int_equal(ci.perf.amd_nb_counters, 16);
    assert_int_equal(ci.perf.gp_counters, 6);
    assert_int_equal(ci.perf.gp_width, 48);
    assert_int_equal(ci.tsc_hz, 0);
    free(d);
}

/* Zen 2-3 parts have TOPOEXT but no leaf 0BH: hide 0BH from the 7700X and check 8000_001E/8000_0008. */
static void test_zen_without_leaf_0b(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = load_fixture("amd_ryzen7_7700x_zen4.txt");
    for (size_t i = 0; i < d->n; i++)
        if (d->e[i].leaf == 0x0B)
            memset(d->e[i].r, 0, sizeof(d->e[i].r));
    decode_checked(d, "7700x without 0BH", &ci);
    /* 8000_0008 ECX = 400Fh: NC = 16 threads, ApicIdCoreIdSize = 4; 8000_001E EBX[15:8] = 1: 2 threads. */
    assert_string_equal(ci.topo.source, "cpuid.8000001eh");
    assert_int_equal(ci.topo.smt_bits, 1);
    assert_int_equal(ci.topo.core_bits, 3);
    assert_int_equal(ci.topo.threads_per_core, 2);
    assert_int_equal(ci.topo.cores_per_package, 8);
    assert_int_equal(ci.topo.logical_per_package, 16);
    free(d);
}

static void test_fx8150_bulldozer(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("amd_fx8150_bulldozer.txt", &ci);

    assert_int_equal(ci.family, 0x15);
    assert_int_equal(ci.model, 0x01);
    assert_int_equal(ci.stepping, 2);
    assert_string_equal(ci.uarch, "Bulldozer");
    assert_string_equal(ci.brand, "AMD FX(tm)-8150 Eight-Core Processor");
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 ssse3 sse4_1 sse4_2 popcnt "
                     "xsave osxsave avx rdtscp invariant_tsc pdpe1gb nx lm aperfmperf cx16 monitor");

    /* 8000_001D: L1i and L2 belong to a two-core module, L3 to the die. */
    assert_string_equal(ci.cache_source, "cpuid.8000001dh");
    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[0], 1, D, 16 * K, 4, 64, 64, 1, false);
    ASSERT_CACHE(ci.caches[1], 1, I, 64 * K, 2, 64, 512, 2, false);
    ASSERT_CACHE(ci.caches[2], 2, U, 2 * M, 16, 64, 2048, 2, false);
    ASSERT_CACHE(ci.caches[3], 3, U, 8 * M, 64, 64, 2048, 8, false);

    /* 8000_001E EBX[15:8] = 1 means two cores per compute unit on family 15h, not two threads. */
    assert_string_equal(ci.topo.source, "cpuid.8000001eh");
    assert_int_equal(ci.topo.threads_per_core, 1);
    assert_int_equal(ci.topo.smt_bits, 0);
    assert_int_equal(ci.topo.core_bits, 4); /* ApicIdCoreIdSize */
    assert_int_equal(ci.topo.cores_per_package, 8);
    assert_int_equal(ci.topo.initial_apic_id, 0);
    assert_int_equal(ci.topo.x2apic_id, 16); /* ExtendedApicId: this board lifts APIC ids by 16 */
    assert_int_equal(ci.topo.amd_nodes_per_package, 1);

    assert_true(ci.perf.amd_perfctr_core);
    assert_true(ci.perf.amd_perfctr_nb);
    assert_false(ci.perf.amd_perfmon_v2); /* max_ext 8000_001E < 8000_0022 */
    assert_int_equal(ci.perf.gp_counters, 6);
    free(d);
}

static void test_host_kvm(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("host_kvm_emerald_rapids.txt", &ci);

    assert_int_equal(ci.family, 6);
    assert_int_equal(ci.model, 0xCF);
    assert_int_equal(ci.stepping, 2);
    assert_string_equal(ci.uarch, "Emerald Rapids");
    assert_string_equal(ci.brand, "Intel(R) Xeon(R) Processor");
    assert_int_equal(ci.max_basic, 0x1C); /* so leaf 1FH is out of range */
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 ssse3 sse4_1 sse4_2 popcnt "
                     "x2apic xsave osxsave avx avx2 avx512f avx512bw avx512vl fma bmi2 erms fsrm rdtscp "
                     "invariant_tsc pdpe1gb nx lm hypervisor arat clflushopt clwb cx16 tsc_deadline");
    assert_string_equal(ci.hv_vendor, "KVMKVMKVM");
    assert_int_equal(ci.hv_max_leaf, 0x40000001);
    assert_false(ci.is_qemu_tcg);
    assert_int_equal(ci.xcr0_supported, 0x600E7); /* includes AMX tile state */

    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[0], 1, D, 48 * K, 12, 64, 64, 1, false);
    ASSERT_CACHE(ci.caches[3], 3, U, 260 * M, 20, 64, 212992, 2, false);

    assert_string_equal(ci.topo.source, "cpuid.0bh");
    assert_int_equal(ci.topo.smt_bits, 0);
    assert_int_equal(ci.topo.core_bits, 5);
    assert_int_equal(ci.topo.threads_per_core, 1);
    assert_int_equal(ci.topo.cores_per_package, 2);

    assert_int_equal(ci.perf.version, 0); /* no vPMU */
    assert_int_equal(ci.tsc_hz, 0);       /* 15H/16H are zero under this KVM */
    assert_string_equal(ci.tsc_hz_source, "none");
    free(d);
}

/* ---- QEMU TCG ------------------------------------------------------------------------------- */

static void test_qemu_tcg_nehalem(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("qemu_tcg_nehalem.txt", &ci);

    assert_int_equal(ci.vendor, CPU_VENDOR_INTEL);
    assert_int_equal(ci.family, 6);
    assert_int_equal(ci.model, 0x1A);
    assert_int_equal(ci.stepping, 3);
    assert_string_equal(ci.uarch, "Nehalem");
    assert_string_equal(ci.brand, "Intel Core i7 9xx (Nehalem Class Core i7)");
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 ssse3 sse4_1 sse4_2 popcnt "
                     "nx lm hypervisor cx16");
    assert_string_equal(ci.hv_vendor, "TCGTCGTCGTCG");
    assert_int_equal(ci.hv_max_leaf, 0x40000001);
    assert_true(ci.is_qemu_tcg);

    assert_string_equal(ci.cache_source, "cpuid.04h");
    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[0], 1, D, 32 * K, 8, 64, 64, 1, false);
    ASSERT_CACHE(ci.caches[1], 1, I, 32 * K, 8, 64, 64, 1, false);
    ASSERT_CACHE(ci.caches[2], 2, U, 4 * M, 16, 64, 4096, 1, false);
    ASSERT_CACHE(ci.caches[3], 3, U, 16 * M, 16, 64, 16384, 1, true);

    assert_string_equal(ci.topo.source, "cpuid.0bh");
    assert_int_equal(ci.topo.smt_bits, 0);
    assert_int_equal(ci.topo.core_bits, 0);
    assert_int_equal(ci.topo.threads_per_core, 1);
    assert_int_equal(ci.topo.cores_per_package, 1);

    /* TCG: leaf 0AH is all zero, so no architectural PMU. */
    assert_int_equal(ci.perf.version, 0);
    assert_int_equal(ci.perf.gp_counters, 0);
    assert_int_equal(ci.perf.fixed_counters, 0);
    assert_int_equal(ci.tsc_hz, 0);
    free(d);
}

static void test_qemu_tcg_nehalem_2c2t(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("qemu_tcg_nehalem_2c2t.txt", &ci);
    assert_true(ci.is_qemu_tcg);
    assert_true(ci.feat.htt);
    assert_string_equal(ci.topo.source, "cpuid.0bh");
    assert_int_equal(ci.topo.smt_bits, 1);
    assert_int_equal(ci.topo.core_bits, 1);
    assert_int_equal(ci.topo.threads_per_core, 2);
    assert_int_equal(ci.topo.cores_per_package, 2);
    assert_int_equal(ci.topo.logical_per_package, 4);
    /* QEMU 7.2 reports L1 per thread, L2 per core, L3 per package. */
    assert_int_equal(ci.caches[0].shared_by, 1);
    assert_int_equal(ci.caches[2].shared_by, 2);
    assert_int_equal(ci.caches[3].shared_by, 4);
    uint32_t pkg, core, smt;
    cpu_topology_split(&ci, 3, &pkg, &core, &smt);
    assert_int_equal(pkg, 0);
    assert_int_equal(core, 1);
    assert_int_equal(smt, 1);
    free(d);
}

static void test_qemu_tcg_max(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("qemu_tcg_max.txt", &ci);

    /* QEMU 7.2's TCG "max" is the AMD-flavoured qemu64 plus every feature TCG emulates. */
    assert_int_equal(ci.vendor, CPU_VENDOR_AMD);
    assert_int_equal(ci.max_basic, 0xD);
    assert_int_equal(ci.max_ext, 0x8000000A);
    assert_int_equal(ci.family, 0xF);
    assert_int_equal(ci.model, 0x6B);
    assert_int_equal(ci.stepping, 1);
    assert_string_equal(ci.uarch, "K8");
    assert_string_equal(ci.brand, "QEMU TCG CPU version 2.5+");
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 ssse3 sse4_1 sse4_2 popcnt "
                     "xsave avx avx2 fma bmi2 erms rdtscp pdpe1gb nx lm hypervisor arat clflushopt clwb cx16 "
                     "monitor");
    assert_true(ci.is_qemu_tcg);
    assert_int_equal(ci.xcr0_supported, 0x21F);
    assert_int_equal(ci.virt_addr_bits, 57);
    assert_int_equal(ci.phys_addr_bits, 40);

    assert_string_equal(ci.cache_source, "cpuid.80000005h");
    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[0], 1, D, 64 * K, 2, 64, 512, 1, false);
    ASSERT_CACHE(ci.caches[1], 1, I, 64 * K, 2, 64, 512, 1, false);
    ASSERT_CACHE(ci.caches[2], 2, U, 512 * K, 16, 64, 512, 1, false);
    ASSERT_CACHE(ci.caches[3], 3, U, 16 * M, 16, 64, 16384, 1, false);

    assert_string_equal(ci.topo.source, "cpuid.0bh");
    assert_int_equal(ci.topo.cores_per_package, 1);

    assert_int_equal(ci.perf.version, 0);
    assert_int_equal(ci.perf.gp_counters, 0); /* TCG emulates no counters even for an AMD model */
    free(d);
}

static void test_qemu_tcg_opteron_g3(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_fixture("qemu_tcg_opteron_g3.txt", &ci);

    assert_int_equal(ci.vendor, CPU_VENDOR_AMD);
    assert_int_equal(ci.max_basic, 5);
    assert_int_equal(ci.family, 0x10);
    assert_int_equal(ci.model, 2);
    assert_int_equal(ci.stepping, 3);
    assert_string_equal(ci.uarch, "K10");
    assert_string_equal(ci.brand, "AMD Opteron 23xx (Gen 3 Class Opteron)");
    check_flags(&ci, "fpu tsc msr apic pae pse36 mtrr pat clflush sse sse2 sse3 popcnt rdtscp nx lm hypervisor "
                     "cx16 monitor");
    assert_true(ci.is_qemu_tcg);
    assert_string_equal(ci.hv_vendor, "TCGTCGTCGTCG");

    assert_string_equal(ci.cache_source, "cpuid.80000005h");
    assert_int_equal(ci.n_caches, 4);
    ASSERT_CACHE(ci.caches[3], 3, U, 16 * M, 16, 64, 16384, 1, false);

    /* No 0BH (max_basic 5), 8000_0008 ECX = 0: one core. */
    assert_string_equal(ci.topo.source, "cpuid.80000008h");
    assert_int_equal(ci.topo.smt_bits, 0);
    assert_int_equal(ci.topo.core_bits, 0);
    assert_int_equal(ci.topo.cores_per_package, 1);
    assert_int_equal(ci.perf.gp_counters, 0);
    free(d);
}

/* ---- synthetic and hostile inputs ----------------------------------------------------------- */

static void test_null_fn(void **state)
{
    (void)state;
    struct cpu_info ci;
    memset(&ci, 0xA5, sizeof(ci));
    cpuid_decode(&ci, NULL, NULL);
    assert_int_equal(ci.vendor, CPU_VENDOR_UNKNOWN);
    assert_string_equal(ci.vendor_str, "");
    assert_string_equal(ci.brand, "");
    assert_string_equal(ci.uarch, "unknown");
    assert_string_equal(ci.cache_source, "none");
    assert_string_equal(ci.tsc_hz_source, "none");
    assert_string_equal(ci.topo.source, "none");
    assert_int_equal(ci.n_caches, 0);
    assert_int_equal(ci.max_basic, 0);
}

static void zero_fn(uint32_t leaf, uint32_t sub, uint32_t r[4], void *ctx)
{
    (void)leaf, (void)sub;
    (*(unsigned *)ctx)++;
    r[0] = r[1] = r[2] = r[3] = 0;
}

static void test_all_zero_cpu(void **state)
{
    (void)state;
    struct cpu_info ci;
    unsigned calls = 0;
    cpuid_decode(&ci, zero_fn, &calls);
    assert_int_equal(ci.vendor, CPU_VENDOR_UNKNOWN);
    assert_int_equal(ci.max_basic, 0);
    assert_int_equal(ci.max_ext, 0);
    assert_int_equal(ci.family, 0);
    assert_int_equal(ci.n_caches, 0);
    assert_string_equal(ci.uarch, "unknown");
    assert_int_equal(ci.topo.threads_per_core, 1);
    assert_int_equal(ci.topo.cores_per_package, 1);
    assert_true(calls <= 2); /* only leaf 0 and 8000_0000 may be asked */
}

/* A CPU whose subleaf-indexed leaves never terminate (no type-0 entry, every level "SMT" then "core"
 * with shift 31): decoding must stay bounded and the split must not shift out of range. */
static void endless_fn(uint32_t leaf, uint32_t sub, uint32_t r[4], void *ctx)
{
    (*(unsigned *)ctx)++;
    r[0] = r[1] = r[2] = r[3] = 0;
    switch (leaf) {
    case 0:
        r[0] = 0x1F;
        r[1] = 0x756E6547, r[3] = 0x49656E69, r[2] = 0x6C65746E; /* GenuineIntel */
        break;
    case 1:
        r[0] = 0x000906EA;
        r[1] = 0xFF000000;
        break;
    case 4:
        r[0] = 0xFFFFC121 & ~0x1Eu; /* data, level 1, 4096 sharing */
        r[1] = 0x01C0003F;
        r[2] = 0x3F;
        break;
    case 0x0B:
    case 0x1F:
        r[0] = 31;
        r[1] = 0xFFFF;
        r[2] = (sub == 0 ? 1u : 2u) << 8 | (sub & 0xFF);
        r[3] = 0xFFFFFFFF;
        break;
    default:
        break;
    }
}

static void test_endless_subleafs_are_bounded(void **state)
{
    (void)state;
    struct cpu_info ci;
    unsigned calls = 0;
    cpuid_decode(&ci, endless_fn, &calls);
    assert_true(calls < 200);
    assert_int_equal(ci.n_caches, CPU_MAX_CACHES);
    assert_string_equal(ci.topo.source, "cpuid.1fh");
    assert_true(ci.topo.smt_bits + ci.topo.core_bits <= 31);
    assert_int_equal(ci.topo.x2apic_id, 0xFFFFFFFF);
    uint32_t pkg, core, smt;
    cpu_topology_split(&ci, 0xFFFFFFFF, &pkg, &core, &smt);
    assert_int_equal(smt, 0x7FFFFFFF);
    assert_int_equal(core, 0);
    assert_int_equal(pkg, 1);
}

static void test_split_clamps_hand_built_widths(void **state)
{
    (void)state;
    struct cpu_info ci;
    memset(&ci, 0, sizeof(ci));
    ci.topo.smt_bits = 40;
    ci.topo.core_bits = 40;
    uint32_t pkg = 1, core = 1, smt = 0;
    cpu_topology_split(&ci, 0x12345678, &pkg, &core, &smt);
    assert_int_equal(smt, 0x12345678);
    assert_int_equal(core, 0);
    assert_int_equal(pkg, 0);
    cpu_topology_split(&ci, 7, NULL, NULL, NULL); /* NULL outputs are allowed */
    ci.topo.smt_bits = 2;
    ci.topo.core_bits = 3;
    cpu_topology_split(&ci, 0xB7, &pkg, NULL, &smt);
    assert_int_equal(pkg, 0xB7 >> 5);
    assert_int_equal(smt, 3);
    cpu_topology_split(NULL, 9, &pkg, &core, &smt);
    assert_int_equal(pkg, 9);
    assert_int_equal(core, 0);
    assert_int_equal(smt, 0);
}

static struct dump *decode_text(const char *text, struct cpu_info *ci)
{
    struct dump *d = load_text(text);
    decode_checked(d, "synthetic dump", ci);
    return d;
}

#define INTEL_LEAF0(max) "00000000 0 " max " 756e6547 6c65746e 49656e69\n"
#define AMD_LEAF0(max) "00000000 0 " max " 68747541 444d4163 69746e65\n"

static void test_display_family_model(void **state)
{
    (void)state;
    static const struct {
        const char *leaf0;
        uint32_t sig, family, model, stepping;
    } cases[] = {
        {INTEL_LEAF0("1"), 0x000906EA, 6, 0x9E, 0xA},   /* ext model used for family 6 */
        {INTEL_LEAF0("1"), 0x00000F29, 0xF, 0x2, 9},    /* NetBurst */
        {INTEL_LEAF0("1"), 0x00100F00, 0x10, 0x0, 0},   /* ext family added only when base is 0FH */
        {INTEL_LEAF0("1"), 0x0FF106A5, 6, 0x1A, 5},     /* ext family ignored for family 6 */
        {INTEL_LEAF0("1"), 0x00010521, 5, 0x2, 1},      /* ext model ignored for family 5 */
        {INTEL_LEAF0("1"), 0x00B40F41, 0xF + 0xB, 0x44, 1}, /* ext model used for family 0FH */
        {AMD_LEAF0("1"), 0x00A60F12, 0x19, 0x61, 2},
        {AMD_LEAF0("1"), 0x00010661, 6, 0x6, 1},        /* AMD: ext model only with base family 0FH */
        {AMD_LEAF0("1"), 0x00020F32, 0xF, 0x23, 2},     /* K8 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text), "%s00000001 0 %08x 0 0 0\n", cases[i].leaf0, cases[i].sig);
        struct cpu_info ci;
        struct dump *d = decode_text(text, &ci);
        assert_int_equal(ci.signature, cases[i].sig);
        assert_int_equal(ci.family, cases[i].family);
        assert_int_equal(ci.model, cases[i].model);
        assert_int_equal(ci.stepping, cases[i].stepping);
        free(d);
    }
}

static void test_uarch_table(void **state)
{
    (void)state;
    static const struct {
        enum cpu_vendor v;
        uint32_t family, model;
        const char *name;
    } cases[] = {
        {CPU_VENDOR_INTEL, 6, 0x0F, "Core2"}, {CPU_VENDOR_INTEL, 6, 0x17, "Core2"},
        {CPU_VENDOR_INTEL, 6, 0x1D, "Core2"}, {CPU_VENDOR_INTEL, 6, 0x1A, "Nehalem"},
        {CPU_VENDOR_INTEL, 6, 0x1E, "Nehalem"}, {CPU_VENDOR_INTEL, 6, 0x1F, "Nehalem"},
        {CPU_VENDOR_INTEL, 6, 0x2E, "Nehalem-EX"}, {CPU_VENDOR_INTEL, 6, 0x25, "Westmere"},
        {CPU_VENDOR_INTEL, 6, 0x2C, "Westmere"}, {CPU_VENDOR_INTEL, 6, 0x2F, "Westmere-EX"},
        {CPU_VENDOR_INTEL, 6, 0x2A, "Sandy Bridge"}, {CPU_VENDOR_INTEL, 6, 0x2D, "Sandy Bridge-EP"},
        {CPU_VENDOR_INTEL, 6, 0x3A, "Ivy Bridge"}, {CPU_VENDOR_INTEL, 6, 0x3E, "Ivy Bridge-EP"},
        {CPU_VENDOR_INTEL, 6, 0x3C, "Haswell"}, {CPU_VENDOR_INTEL, 6, 0x3F, "Haswell-EP"},
        {CPU_VENDOR_INTEL, 6, 0x45, "Haswell"}, {CPU_VENDOR_INTEL, 6, 0x46, "Haswell"},
        {CPU_VENDOR_INTEL, 6, 0x3D, "Broadwell"}, {CPU_VENDOR_INTEL, 6, 0x47, "Broadwell"},
        {CPU_VENDOR_INTEL, 6, 0x4F, "Broadwell-EP"}, {CPU_VENDOR_INTEL, 6, 0x56, "Broadwell-DE"},
        {CPU_VENDOR_INTEL, 6, 0x4E, "Skylake"}, {CPU_VENDOR_INTEL, 6, 0x5E, "Skylake"},
        {CPU_VENDOR_INTEL, 6, 0x55, "Skylake-SP/Cascade Lake"},
        {CPU_VENDOR_INTEL, 6, 0x8E, "Kaby Lake/Coffee Lake"}, {CPU_VENDOR_INTEL, 6, 0x9E, "Kaby Lake/Coffee Lake"},
        {CPU_VENDOR_INTEL, 6, 0x7D, "Ice Lake"}, {CPU_VENDOR_INTEL, 6, 0x7E, "Ice Lake"},
        {CPU_VENDOR_INTEL, 6, 0x6A, "Ice Lake-SP"}, {CPU_VENDOR_INTEL, 6, 0x6C, "Ice Lake-SP"},
        {CPU_VENDOR_INTEL, 6, 0x8C, "Tiger Lake"}, {CPU_VENDOR_INTEL, 6, 0x8D, "Tiger Lake"},
        {CPU_VENDOR_INTEL, 6, 0x8F, "Sapphire Rapids"}, {CPU_VENDOR_INTEL, 6, 0x97, "Alder Lake"},
        {CPU_VENDOR_INTEL, 6, 0x9A, "Alder Lake"}, {CPU_VENDOR_INTEL, 6, 0xB7, "Raptor Lake"},
        {CPU_VENDOR_INTEL, 6, 0xBA, "Raptor Lake"}, {CPU_VENDOR_INTEL, 6, 0xBF, "Raptor Lake"},
        {CPU_VENDOR_INTEL, 6, 0x5C, "Goldmont"}, {CPU_VENDOR_INTEL, 0xF, 0x02, "NetBurst"},
        {CPU_VENDOR_INTEL, 0xF, 0x06, "NetBurst"},
        {CPU_VENDOR_AMD, 0xF, 0x23, "K8"}, {CPU_VENDOR_AMD, 0x10, 0x04, "K10"},
        {CPU_VENDOR_AMD, 0x11, 0x03, "K10 (Griffin)"}, {CPU_VENDOR_AMD, 0x12, 0x01, "K10 (Llano)"},
        {CPU_VENDOR_AMD, 0x14, 0x02, "Bobcat"}, {CPU_VENDOR_AMD, 0x15, 0x01, "Bulldozer"},
        {CPU_VENDOR_AMD, 0x15, 0x02, "Piledriver"}, {CPU_VENDOR_AMD, 0x15, 0x30, "Steamroller"},
        {CPU_VENDOR_AMD, 0x15, 0x65, "Excavator"}, {CPU_VENDOR_AMD, 0x16, 0x00, "Jaguar"},
        {CPU_VENDOR_AMD, 0x17, 0x01, "Zen"}, {CPU_VENDOR_AMD, 0x17, 0x08, "Zen+"},
        {CPU_VENDOR_AMD, 0x17, 0x11, "Zen"}, {CPU_VENDOR_AMD, 0x17, 0x18, "Zen+"},
        {CPU_VENDOR_AMD, 0x17, 0x31, "Zen2"}, {CPU_VENDOR_AMD, 0x17, 0x71, "Zen2"},
        {CPU_VENDOR_AMD, 0x19, 0x01, "Zen3"}, {CPU_VENDOR_AMD, 0x19, 0x21, "Zen3"},
        {CPU_VENDOR_AMD, 0x19, 0x44, "Zen3+"}, {CPU_VENDOR_AMD, 0x19, 0x11, "Zen4"},
        {CPU_VENDOR_AMD, 0x19, 0x61, "Zen4"}, {CPU_VENDOR_AMD, 0x1A, 0x44, "Zen5"},
        {CPU_VENDOR_HYGON, 0x18, 0x00, "Dhyana (Zen)"},
        /* unknown */
        {CPU_VENDOR_INTEL, 6, 0xFF, "unknown"}, {CPU_VENDOR_INTEL, 0x10F, 0x1A, "unknown"},
        {CPU_VENDOR_AMD, 6, 0x1A, "unknown"}, {CPU_VENDOR_AMD, 0x19, 0x90, "unknown"},
        {CPU_VENDOR_OTHER, 6, 0x1A, "unknown"}, {CPU_VENDOR_UNKNOWN, 0, 0, "unknown"},
        {CPU_VENDOR_HYGON, 0x17, 0x01, "unknown"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = cpu_uarch_name(cases[i].v, cases[i].family, cases[i].model);
        if (strcmp(got, cases[i].name) != 0)
            fail_msg("vendor %d %02X_%02X: expected \"%s\", got \"%s\"", (int)cases[i].v, cases[i].family,
                     cases[i].model, cases[i].name, got);
    }
}

/* Before leaf 0BH: leaf 1 EBX[23:16] (with HTT) and leaf 4 EAX[31:26] give addressable widths. */
static void test_legacy_intel_topology(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint32_t smt_bits, core_bits, threads, cores, logical;
    } cases[] = {
        /* Core 2 Quad (06_0F): 4 logical, 4 cores. */
        {INTEL_LEAF0("a") "00000001 0 000006fb 00040800 0 10000000\n00000004 0 0c004121 01c0003f 3f 0\n",
         0, 2, 1, 4, 4},
        /* Nehalem without 0BH: 16 addressable logical, 8 addressable cores. */
        {INTEL_LEAF0("a") "00000001 0 000106a5 00100800 0 10000000\n00000004 0 1c004121 01c0003f 3f 0\n",
         1, 3, 2, 8, 16},
        /* HTT clear: one logical processor whatever leaf 4 claims. */
        {INTEL_LEAF0("a") "00000001 0 000106a5 00100800 0 0\n00000004 0 1c004121 01c0003f 3f 0\n",
         0, 0, 1, 1, 1},
        /* Leaf 0BH with EBX = 0 at subleaf 0 is "not supported" (SDM): fall back to leaf 1/4. */
        {INTEL_LEAF0("b") "00000001 0 000006fb 00040800 0 10000000\n00000004 0 0c004121 01c0003f 3f 0\n"
                          "0000000b 0 00000001 00000000 00000100 00000003\n",
         0, 2, 1, 4, 4},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cpu_info ci;
        struct dump *d = decode_text(cases[i].text, &ci);
        assert_string_equal(ci.topo.source, "cpuid.01h");
        if (ci.topo.smt_bits != cases[i].smt_bits || ci.topo.core_bits != cases[i].core_bits ||
            ci.topo.threads_per_core != cases[i].threads || ci.topo.cores_per_package != cases[i].cores ||
            ci.topo.logical_per_package != cases[i].logical)
            fail_msg("case %zu: smt %u core %u threads %u cores %u logical %u", i, ci.topo.smt_bits,
                     ci.topo.core_bits, ci.topo.threads_per_core, ci.topo.cores_per_package,
                     ci.topo.logical_per_package);
        free(d);
    }
}

static void test_brand_string_edges(void **state)
{
    (void)state;
    struct cpu_info ci;
    /* 48 non-NUL bytes: no terminator in the registers. */
    struct dump *d = decode_text(INTEL_LEAF0("1") "80000000 0 80000004 0 0 0\n"
                                 "80000002 0 41414141 41414141 41414141 41414141\n"
                                 "80000003 0 41414141 41414141 41414141 41414141\n"
                                 "80000004 0 41414141 41414141 41414141 41414141\n",
                                 &ci);
    assert_int_equal(strlen(ci.brand), 48);
    assert_int_equal(ci.brand[47], 'A');
    free(d);
    /* Unprintable bytes are replaced, blanks trimmed at both ends, the tail after NUL ignored. */
    d = decode_text(INTEL_LEAF0("1") "80000000 0 80000004 0 0 0\n"
                    "80000002 0 20202020 41074120 20202020 00202020\n"
                    "80000003 0 41414141 41414141 41414141 41414141\n"
                    "80000004 0 41414141 41414141 41414141 41414141\n",
                    &ci);
    assert_string_equal(ci.brand, "A?A");
    free(d);
    /* All blanks. */
    d = decode_text(INTEL_LEAF0("1") "80000000 0 80000004 0 0 0\n"
                    "80000002 0 20202020 20202020 20202020 20202020\n"
                    "80000003 0 20202020 20202020 20202020 20202020\n"
                    "80000004 0 20202020 20202020 20202020 00202020\n",
                    &ci);
    assert_string_equal(ci.brand, "");
    free(d);
    /* Brand leaves past max_ext (8000_0003 here) are not read: no brand. */
    d = decode_text(INTEL_LEAF0("1") "80000000 0 80000003 0 0 0\n"
                    "80000002 0 41414141 41414141 41414141 41414141\n"
                    "80000003 0 41414141 41414141 41414141 41414141\n",
                    &ci);
    assert_string_equal(ci.brand, "");
    free(d);
}

static void test_vendor_strings(void **state)
{
    (void)state;
    struct cpu_info ci;
    struct dump *d = decode_text("00000000 0 1 6f677948 656e6975 6e65476e\n", &ci); /* HygonGenuine */
    assert_int_equal(ci.vendor, CPU_VENDOR_HYGON);
    assert_string_equal(ci.vendor_str, "HygonGenuine");
    free(d);
    d = decode_text("00000000 0 1 746e6543 736c7561 48727561\n", &ci); /* CentaurHauls */
    assert_int_equal(ci.vendor, CPU_VENDOR_OTHER);
    assert_string_equal(ci.vendor_str, "CentaurHauls");
    free(d);
    d = decode_text("00000000 0 1 0001ff47 0 0\n", &ci); /* unprintable junk */
    assert_int_equal(ci.vendor, CPU_VENDOR_OTHER);
    assert_string_equal(ci.vendor_str, "G??");
    free(d);
}

static void test_hypervisor_range_validation(void **state)
{
    (void)state;
    struct cpu_info ci;
    /* Hypervisor bit set but no 4000_0000 answer: the probe returns the highest basic leaf. */
    struct dump *d = decode_text(INTEL_LEAF0("1") "00000001 0 000106a5 0 80000000 0\n", &ci);
    assert_true(ci.feat.hypervisor);
    assert_string_equal(ci.hv_vendor, "");
    assert_int_equal(ci.hv_max_leaf, 0);
    assert_false(ci.is_qemu_tcg);
    free(d);
    /* Early KVM: EAX = 0 means 4000_0001. */
    d = decode_text(INTEL_LEAF0("1") "00000001 0 000106a5 0 80000000 0\n"
                    "40000000 0 0 4b4d564b 564b4d56 0000004d\n",
                    &ci);
    assert_string_equal(ci.hv_vendor, "KVMKVMKVM");
    assert_int_equal(ci.hv_max_leaf, 0x40000001);
    free(d);
    /* A 4000_0000 answer without leaf 1 ECX[31] is never looked at (bare metal). */
    d = decode_text(INTEL_LEAF0("1") "00000001 0 000106a5 0 0 0\n"
                    "40000000 0 40000001 54474354 43544743 47435447\n",
                    &ci);
    assert_string_equal(ci.hv_vendor, "");
    assert_false(ci.is_qemu_tcg);
    free(d);
}

static void test_ext_range_garbage(void **state)
{
    (void)state;
    struct cpu_info ci;
    /* No 8000_0000 line: the probe gets leaf 1's data (Intel rule), which is not a valid maximum. */
    struct dump *d = decode_text(INTEL_LEAF0("1") "00000001 0 00000f29 0 0 0\n", &ci);
    assert_int_equal(ci.max_ext, 0);
    assert_false(ci.feat.lm);
    assert_int_equal(ci.phys_addr_bits, 32);
    free(d);
    /* A maximum far past any real CPU is rejected too. */
    d = decode_text(INTEL_LEAF0("1") "80000000 0 8000ffff 0 0 0\n80000001 0 0 0 0 20000000\n", &ci);
    assert_int_equal(ci.max_ext, 0);
    assert_false(ci.feat.lm);
    free(d);
}

static void test_leaf2_edges(void **state)
{
    (void)state;
    struct cpu_info ci;
    /* EBX has bit 31 set (no descriptors); ECX holds FFH (use leaf 4), F0H (prefetch) and 2CH twice
     * across registers; EDX: 49H on a non-Xeon-MP part is an L2. AL = 0 is treated as one pass. */
    struct dump *d = decode_text(INTEL_LEAF0("2") "00000001 0 00000f43 0 0 0\n"
                                 "00000002 0 002c0000 80e4e4e4 00f0ff2c 00000049\n",
                                 &ci);
    assert_string_equal(ci.cache_source, "cpuid.02h");
    assert_int_equal(ci.n_caches, 2);
    ASSERT_CACHE(ci.caches[0], 1, D, 32 * K, 8, 64, 64, 1, false);
    ASSERT_CACHE(ci.caches[1], 2, U, 4 * M, 16, 64, 4096, 1, false);
    free(d);
    /* 49H on Xeon MP (family 0FH model 06H) is an L3; leaf 1 HT count gives shared_by. */
    d = decode_text(INTEL_LEAF0("2") "00000001 0 00000f64 00020800 0 10000000\n"
                    "00000002 0 00000001 0 0 00000049\n",
                    &ci);
    assert_int_equal(ci.n_caches, 1);
    ASSERT_CACHE(ci.caches[0], 3, U, 4 * M, 16, 64, 4096, 2, false);
    free(d);
    /* Only unknown / TLB descriptors: no caches, source stays "none". */
    d = decode_text(INTEL_LEAF0("2") "00000001 0 00000f43 0 0 0\n00000002 0 5b500001 0 0 0\n", &ci);
    assert_int_equal(ci.n_caches, 0);
    assert_string_equal(ci.cache_source, "none");
    free(d);
}

static void test_leaf4_rejects_overflowing_geometry(void **state)
{
    (void)state;
    struct cpu_info ci;
    /* Subleaf 0: 1024 ways x 1024 partitions x 4096-byte lines x 2^32 sets = 2^64 bytes: dropped.
     * Subleaf 1: 2^63 bytes fits in 64 bits but is past any real cache: dropped.
     * Subleaf 2 is sane and kept; subleaf 3 has level 0 and is dropped. */
    struct dump *d = decode_text(INTEL_LEAF0("4") "00000001 0 000106a5 0 0 0\n"
                                 "00000004 0 00000021 ffffffff ffffffff 0\n"
                                 "00000004 1 00000063 ffffffff 7fffffff 0\n"
                                 "00000004 2 00000143 01c0003f 000001ff 2\n"
                                 "00000004 3 00000003 01c0003f 000001ff 0\n",
                                 &ci);
    assert_string_equal(ci.cache_source, "cpuid.04h");
    assert_int_equal(ci.n_caches, 1);
    ASSERT_CACHE(ci.caches[0], 2, U, 256 * K, 8, 64, 512, 1, true);
    free(d);
}

static void test_amd_legacy_edges(void **state)
{
    (void)state;
    struct cpu_info ci;
    /* L1d fully associative (FFh), L1i disabled (assoc 0), L2 code Fh (fully), L3 assoc 0 (none). */
    struct dump *d = decode_text(AMD_LEAF0("1") "00000001 0 00100f42 0 0 0\n"
                                 "80000000 0 80000006 0 0 0\n"
                                 "80000005 0 0 0 10ff0140 40000140\n"
                                 "80000006 0 0 0 0040f040 00400040\n",
                                 &ci);
    assert_string_equal(ci.cache_source, "cpuid.80000005h");
    assert_int_equal(ci.n_caches, 2);
    ASSERT_CACHE(ci.caches[0], 1, D, 16 * K, 256, 64, 1, 1, false);
    assert_true(ci.caches[0].fully_assoc);
    ASSERT_CACHE(ci.caches[1], 2, U, 64 * K, 1024, 64, 1, 1, false);
    assert_true(ci.caches[1].fully_assoc);
    /* No 8000_0008: one core. */
    assert_string_equal(ci.topo.source, "cpuid.01h");
    assert_int_equal(ci.topo.cores_per_package, 1);
    free(d);
}

static void test_tsc_crystal_table(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t hz, crystal;
        const char *source;
    } cases[] = {
        /* Kaby Lake 06_9E, 15H = 2/300, ECX 0: 24 MHz x 150. */
        {INTEL_LEAF0("15") "00000001 0 000906e9 0 0 0\n00000015 0 2 12c 0 0\n", 3600000000ull, 24000000,
         "cpuid.15h"},
        /* Same with a consistent 16H (3600 MHz): the table value stands. */
        {INTEL_LEAF0("16") "00000001 0 000906e9 0 0 0\n00000015 0 2 12c 0 0\n00000016 0 e10 1194 64 0\n",
         3600000000ull, 24000000, "cpuid.15h"},
        /* Skylake 06_4E. */
        {INTEL_LEAF0("15") "00000001 0 000406e3 0 0 0\n00000015 0 2 c8 0 0\n", 2400000000ull, 24000000,
         "cpuid.15h"},
        /* Xeon Gold 6130 (06_55): 25 MHz x 168/2 = 2.1 GHz, 16H agrees. */
        {INTEL_LEAF0("16") "00000001 0 00050654 0 0 0\n00000015 0 2 a8 0 0\n00000016 0 834 e74 64 0\n",
         2100000000ull, 25000000, "cpuid.15h"},
        /* Goldmont 06_5C: 19.2 MHz x 62. */
        {INTEL_LEAF0("15") "00000001 0 000506c9 0 0 0\n00000015 0 1 3e 0 0\n", 1190400000ull, 19200000,
         "cpuid.15h"},
        /* Crystal enumerated: used as is. */
        {INTEL_LEAF0("15") "00000001 0 000806f8 0 0 0\n00000015 0 2 118 17d7840 0\n", 3500000000ull, 25000000,
         "cpuid.15h"},
        /* Denominator 0: 15H unusable, 16H used. */
        {INTEL_LEAF0("16") "00000001 0 000906e9 0 0 0\n00000015 0 0 12c 0 0\n00000016 0 bb8 0 64 0\n",
         3000000000ull, 24000000, "cpuid.16h"},
        /* Model not in the table, ECX 0, no 16H: unknown. */
        {INTEL_LEAF0("15") "00000001 0 000806f8 0 0 0\n00000015 0 2 118 0 0\n", 0, 0, "none"},
        /* An AMD part never uses the Intel table. */
        {AMD_LEAF0("15") "00000001 0 00000f4e 0 0 0\n00000015 0 2 118 0 0\n", 0, 0, "none"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cpu_info ci;
        struct dump *d = decode_text(cases[i].text, &ci);
        if (ci.tsc_hz != cases[i].hz || ci.crystal_hz != cases[i].crystal ||
            strcmp(ci.tsc_hz_source, cases[i].source) != 0)
            fail_msg("case %zu: tsc %llu crystal %llu source %s", i, (unsigned long long)ci.tsc_hz,
                     (unsigned long long)ci.crystal_hz, ci.tsc_hz_source);
        free(d);
    }
}

static void test_perfmon_edges(void **state)
{
    (void)state;
    struct cpu_info ci;
    /* Version 1: EDX is reserved and must not be decoded. */
    struct dump *d = decode_text(INTEL_LEAF0("a") "0000000a 0 07280201 5 ffffffff ffffffff\n", &ci);
    assert_int_equal(ci.perf.version, 1);
    assert_int_equal(ci.perf.gp_counters, 2);
    assert_int_equal(ci.perf.gp_width, 40);
    assert_int_equal(ci.perf.events_unavailable, 5);
    assert_int_equal(ci.perf.fixed_counters, 0);
    assert_int_equal(ci.perf.fixed_width, 0);
    assert_int_equal(ci.perf.fixed_mask, 0);
    free(d);
    /* EBX length of 32 and beyond: the whole EBX, no undefined shift. */
    d = decode_text(INTEL_LEAF0("a") "0000000a 0 28300802 ffffffff 0 00000603\n", &ci);
    assert_int_equal(ci.perf.ebx_length, 40);
    assert_int_equal(ci.perf.events_unavailable, 0xFFFFFFFF);
    assert_int_equal(ci.perf.fixed_counters, 3);
    assert_int_equal(ci.perf.fixed_width, 48);
    free(d);
    /* Bits past the length are masked off. */
    d = decode_text(INTEL_LEAF0("a") "0000000a 0 07300403 ffffffff 0 00000603\n", &ci);
    assert_int_equal(ci.perf.events_unavailable, 0x7F);
    free(d);
    /* Leaf 0AH past max_basic is never read. */
    d = decode_text(INTEL_LEAF0("9") "0000000a 0 07300403 0 0 00000603\n", &ci);
    assert_int_equal(ci.perf.version, 0);
    free(d);
}

static void test_parse_rejects_bad_lines(void **state)
{
    (void)state;
    struct dump *d = calloc(1, sizeof(*d));
    assert_non_null(d);
    assert_int_equal(parse_dump("# only a comment\n\n   \n", d), 0);
    assert_int_equal(d->n, 0);
    assert_int_equal(parse_dump("0 0 1 2 3 4 # trailing comment\n0x1 0x0 0xa 0xb 0xc 0xd", d), 0);
    assert_int_equal(d->n, 2);
    assert_int_equal(d->e[1].r[3], 0xd);
    assert_int_equal(parse_dump("0 0 1 2 3\n", d), 1);           /* five words */
    assert_int_equal(parse_dump("0 0 1 2 3 4 5\n", d), 1);       /* seven words */
    assert_int_equal(parse_dump("\n0 0 1 2 3 zz\n", d), 2);      /* not hex */
    assert_int_equal(parse_dump("0 0 1 2 3 100000000\n", d), 1); /* over 32 bits */
    assert_int_equal(parse_dump("0 0 1 2 3 4\n0 0 1 2 3 4\n", d), 2); /* duplicate */
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xeon_x5570),
        cmocka_unit_test(test_x5570_limit_cpuid_uses_leaf2),
        cmocka_unit_test(test_pentium4_northwood),
        cmocka_unit_test(test_opteron_2378_k10),
        cmocka_unit_test(test_core_i9_13900kf),
        cmocka_unit_test(test_core_i9_7900x_skylake_x),
        cmocka_unit_test(test_ryzen7_7700x_zen4),
        cmocka_unit_test(test_zen_without_leaf_0b),
        cmocka_unit_test(test_fx8150_bulldozer),
        cmocka_unit_test(test_host_kvm),
        cmocka_unit_test(test_qemu_tcg_nehalem),
        cmocka_unit_test(test_qemu_tcg_nehalem_2c2t),
        cmocka_unit_test(test_qemu_tcg_max),
        cmocka_unit_test(test_qemu_tcg_opteron_g3),
        cmocka_unit_test(test_null_fn),
        cmocka_unit_test(test_all_zero_cpu),
        cmocka_unit_test(test_endless_subleafs_are_bounded),
        cmocka_unit_test(test_split_clamps_hand_built_widths),
        cmocka_unit_test(test_display_family_model),
        cmocka_unit_test(test_uarch_table),
        cmocka_unit_test(test_legacy_intel_topology),
        cmocka_unit_test(test_brand_string_edges),
        cmocka_unit_test(test_vendor_strings),
        cmocka_unit_test(test_hypervisor_range_validation),
        cmocka_unit_test(test_ext_range_garbage),
        cmocka_unit_test(test_leaf2_edges),
        cmocka_unit_test(test_leaf4_rejects_overflowing_geometry),
        cmocka_unit_test(test_amd_legacy_edges),
        cmocka_unit_test(test_tsc_crystal_table),
        cmocka_unit_test(test_perfmon_edges),
        cmocka_unit_test(test_parse_rejects_bad_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
