/* core_clock.c - core/TSC ratio: the two dependency chains, their timing, APERF/MPERF, and the pure logic that combines runs and judges agreement. */
#include "kernel/core_clock.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#ifndef PMB_HOST
#include "kernel/msr.h" /* APERF/MPERF: the image only; a hosted program has no MSR access */
#endif

/* Chain lengths: ~1 M core cycles each per run (256 instructions per loop iteration; the loop's own
 * counter and branch are independent of the chain and execute beside it). */
#define ADD_ITERS 4096U  /* 1,048,576 adds x 1 cycle */
#define IMUL_ITERS 1024U /* 262,144 imuls x 3 cycles on most cores */
#define PER_ITER 256U
#define WARMUP_RUNS 2
/* Under QEMU TCG the chains count emulated instructions, not cycles (core_clock_decide says so in the note):
 * chains an eighth as long keep every run well above the TSC step and cost an eighth of the time (the clock
 * is measured at the start of every benchmark). */
#define TCG_ITERS_DIV 8U

_Static_assert(CORE_CLOCK_ADD_PER_ITER == PER_ITER, "one unroll factor");

const char *core_chain_name(enum core_chain c)
{
    return c == CORE_CHAIN_ADD ? "add_rr_chain" : c == CORE_CHAIN_IMUL ? "imul_chain" : "none";
}

/* ---- IMUL r64,r64 latency ---------------------------------------------------------------------------------
 * Sources (register form, 64-bit operand size):
 *   [AF]   Agner Fog, "Instruction tables" (agner.org/optimize): 3 cycles on Intel Nehalem and every later
 *          big core, 4 on AMD K8 and K10, 6 on Bulldozer/Piledriver/Steamroller, 3 on Zen.
 *   [LLVM] LLVM X86 scheduling models, WriteIMul64Reg: X86ScheduleBdVer2.td (Piledriver) 6,
 *          X86ScheduleBtVer2.td (Jaguar, from AMD's Family 16h optimization guide appendix) 6,
 *          X86ScheduleZnver1..5.td 3.
 *   [AMD10] Software Optimization Guide for AMD Family 10h Processors, appendix C: IMUL reg64, reg64 4.
 * Not listed, so not judged: Core 2 (5 per [AF]) and NetBurst, the Atom line (Bonnell .. Crestmont, Xeon
 * Phi) and hybrid parts' efficient cores, whose latencies differ between generations, Bobcat, other
 * vendors, and families newer than this table. */

/* Intel family 6 models of the Atom line and of Xeon Phi (Silvermont-based): no verified latency. */
static const uint8_t intel_atom_models[] = {
    0x1C, 0x26,                   /* Bonnell */
    0x27, 0x35, 0x36,             /* Saltwell */
    0x37, 0x4A, 0x4D, 0x5A, 0x5D, /* Silvermont */
    0x4C,                         /* Airmont */
    0x5C, 0x5F,                   /* Goldmont */
    0x7A,                         /* Goldmont Plus */
    0x86, 0x96, 0x9C,             /* Tremont */
    0xBE,                         /* Gracemont-only (Alder Lake-N) */
    0xAF, 0xB6, 0xDD,             /* Crestmont / Darkmont servers (Sierra Forest, Grand Ridge, Clearwater Forest) */
    0x57, 0x85,                   /* Xeon Phi Knights Landing / Mill */
};

#define INTEL_MODEL_NEHALEM_FIRST 0x1A
#define INTEL_MODEL_DUNNINGTON 0x1D /* Core 2 based, numbered after Nehalem's first model */

uint32_t core_clock_imul_latency(enum cpu_vendor v, uint32_t family, uint32_t model, bool atom_core)
{
    if (v == CPU_VENDOR_INTEL) {
        if (family != 6 || atom_core || model < INTEL_MODEL_NEHALEM_FIRST || model == INTEL_MODEL_DUNNINGTON)
            return 0;
        for (size_t i = 0; i < ARRAY_SIZE(intel_atom_models); i++)
            if (model == intel_atom_models[i])
                return 0;
        return 3; /* [AF] Nehalem .. Lion Cove big cores */
    }
    if (v == CPU_VENDOR_AMD || v == CPU_VENDOR_HYGON) {
        switch (family) {
        case 0x0F: /* K8 */
        case 0x10: /* K10 */
        case 0x11: /* K8-based Griffin */
        case 0x12: /* K10-based Llano */
            return 4; /* [AF], [AMD10] */
        case 0x15: /* Bulldozer .. Excavator */
        case 0x16: /* Jaguar, Puma */
            return 6; /* [AF], [LLVM] */
        case 0x17: /* Zen, Zen+, Zen 2 */
        case 0x18: /* Hygon Dhyana (Zen) */
        case 0x19: /* Zen 3, Zen 4 */
        case 0x1A: /* Zen 5 */
            return 3; /* [AF], [LLVM] */
        default:
            return 0;
        }
    }
    return 0;
}

/* ---- pure logic ----------------------------------------------------------------------------------------- */

static void sort_small(double *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
}

/* Median and (max - min) / median of n > 0 values (v is sorted in place). */
static void median_spread(double *v, uint32_t n, double *median, double *spread)
{
    sort_small(v, n);
    double med = n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    *median = med;
    *spread = med > 0 ? (v[n - 1] - v[0]) / med : 0;
}

void core_chain_ratio_compute(struct core_chain_ratio *r, const struct core_chain_runs *in)
{
    double v[CORE_CLOCK_RUNS];
    memset(r, 0, sizeof(*r));
    r->latency = in->latency;
    r->n = in->n > CORE_CLOCK_RUNS ? CORE_CLOCK_RUNS : in->n;
    if (!r->n || !in->latency || !in->insns)
        return;
    for (uint32_t i = 0; i < r->n; i++) {
        if (!in->ticks[i])
            return; /* a run that took no time: no clock, or no chain */
        v[i] = (double)in->insns * (double)in->latency / (double)in->ticks[i];
    }
    median_spread(v, r->n, &r->ratio, &r->spread);
    r->valid = true;
}

/* The smallest of n ticks, and how many lie within `step` of it. */
static uint64_t window_min(const uint64_t *t, uint32_t n, double step, uint32_t *near)
{
    uint64_t m = t[0];
    for (uint32_t i = 1; i < n; i++)
        m = t[i] < m ? t[i] : m;
    *near = 0;
    for (uint32_t i = 0; i < n; i++)
        *near += (double)(t[i] - m) <= step;
    return m;
}

void core_windows_ratio(struct core_windows_ratio *r, const struct core_chain_windows *w)
{
    memset(r, 0, sizeof(*r));
    uint32_t n = w->n > CORE_WINDOWS_MAX ? CORE_WINDOWS_MAX : w->n;
    if (n == 0 || !w->insns)
        return;
    double step = w->step >= 1 ? w->step : 1;
    uint32_t cs, cl;
    uint64_t ms = window_min(w->shrt, n, step, &cs), ml = window_min(w->lng, n, step, &cl);
    r->confirmed = cs < cl ? cs : cl;
    r->disturbed = (n - cs) + (n - cl);
    if (ml <= ms)
        return;
    double d = (double)(ml - ms);
    r->ratio = (double)w->insns / d;
    r->u = 2 * step / d;
    r->valid = r->confirmed >= CORE_WINDOWS_CONFIRM;
}

double core_near_pick(const struct core_windows_ratio *add, const struct core_windows_ratio *imul, double *u,
                      enum core_chain *which)
{
    const struct core_windows_ratio *use = NULL;
    bool a = add && add->valid && add->ratio > 0, m = imul && imul->valid && imul->ratio > 0;
    if (a && m) {
        double q = imul->ratio / add->ratio - 1; /* imul higher, and not by more than a shortcut would be */
        use = q > 0 && q <= CORE_CLOCK_TOL ? imul : add;
    } else if (a) {
        use = add;
    } else if (m) {
        use = imul;
    }
    *which = use == add && use ? CORE_CHAIN_ADD : use ? CORE_CHAIN_IMUL : CORE_CHAIN_COUNT;
    *u = use ? use->u : 0;
    return use ? use->ratio : 0;
}

static void note_append(struct core_clock *c, const char *text)
{
    size_t len = strlen(c->note);
    fmt_snprintf(c->note + len, sizeof(c->note) - len, "%s%s", len ? "; " : "", text);
}

void core_clock_decide(struct core_clock *c, const struct core_chain_runs runs[CORE_CHAIN_COUNT],
                       const double *aperf, uint32_t n_aperf, bool tcg)
{
    memset(c, 0, sizeof(*c));
    c->method = "none";
    c->agree = -1;
    c->tcg = tcg;
    for (int k = 0; k < CORE_CHAIN_COUNT; k++)
        core_chain_ratio_compute(&c->chain[k], &runs[k]);
    const struct core_chain_ratio *add = &c->chain[CORE_CHAIN_ADD], *imul = &c->chain[CORE_CHAIN_IMUL];

    int use = -1; /* the chain the ratio comes from when APERF/MPERF does not give it */
    char why[CORE_CLOCK_NOTE_MAX];
    if (add->valid && imul->valid) {
        double q = add->ratio / imul->ratio - 1;
        c->agree = (q < 0 ? -q : q) <= CORE_CLOCK_TOL;
        if (c->agree) {
            use = CORE_CHAIN_ADD;
            fmt_snprintf(why, sizeof(why), "add and imul chains agree within %.0f %%", CORE_CLOCK_TOL * 100);
        } else {
            /* A shortcut (elimination at rename, a latency below the documented one) makes a chain faster,
             * so its ratio reads higher; nothing makes a chain slower than its latency. */
            int high = add->ratio > imul->ratio ? CORE_CHAIN_ADD : CORE_CHAIN_IMUL;
            use = high == CORE_CHAIN_ADD ? CORE_CHAIN_IMUL : CORE_CHAIN_ADD;
            c->suspect = core_chain_name((enum core_chain)high);
            fmt_snprintf(why, sizeof(why),
                         "chains disagree (add/imul %.3f): %s reads higher and a shortcut only makes a chain "
                         "faster, so %s is used",
                         add->ratio / imul->ratio, c->suspect, core_chain_name((enum core_chain)use));
        }
    } else if (add->valid) {
        use = CORE_CHAIN_ADD;
        fmt_snprintf(why, sizeof(why), "%s", imul->latency ? "imul chain took no time: not cross-checked"
                                                           : "imul latency not known for this CPU: not cross-checked");
    } else if (imul->valid) {
        use = CORE_CHAIN_IMUL;
        fmt_snprintf(why, sizeof(why), "add chain took no time: imul chain alone, not cross-checked");
    } else {
        fmt_snprintf(why, sizeof(why), "no chain took time (no TSC?)");
    }

    if (aperf && n_aperf && n_aperf == runs[CORE_CHAIN_ADD].n && n_aperf <= CORE_CLOCK_RUNS) {
        double v[CORE_CLOCK_RUNS];
        bool ok = true;
        for (uint32_t i = 0; i < n_aperf; i++) {
            v[i] = aperf[i];
            ok = ok && aperf[i] > 0;
        }
        if (ok) {
            median_spread(v, n_aperf, &c->aperf_ratio, &c->aperf_spread);
            c->aperf_n = n_aperf;
            c->aperf_valid = true;
        }
    }

    if (c->aperf_valid) {
        c->ratio = c->aperf_ratio;
        c->spread = c->aperf_spread;
        c->method = "aperf_mperf";
        note_append(c, "APERF/MPERF counts the core clock; the chains are the cross-check");
    } else if (use >= 0) {
        c->ratio = c->chain[use].ratio;
        c->spread = c->chain[use].spread;
        c->method = core_chain_name((enum core_chain)use);
    }
    note_append(c, why);
    if (tcg)
        note_append(c, "QEMU TCG: instructions have no latency, so each ratio counts emulated instructions per tick");
}

/* ---- measuring ------------------------------------------------------------------------------------------ */

/* `add %1,%0; add %0,%1` 128 times: 256 register-register adds, each needing the previous one's result. */
static TIMED_FN uint64_t add_rr_chain(uint64_t iters)
{
    uint64_t a = 1, b = 2;
    for (uint64_t i = 0; i < iters; i++)
        __asm__ volatile(".rept 128\n\tadd %1, %0\n\tadd %0, %1\n\t.endr" : "+r"(a), "+r"(b));
    return a ^ b;
}

/* `imul %1,%0` 256 times. Both factors odd, so the product stays odd and never becomes 0 (no x86 core has
 * a data-dependent multiply latency, but a chain stuck at 0 would invite one). */
static TIMED_FN uint64_t imul_chain(uint64_t iters)
{
    uint64_t a = 3, m = 0x9E3779B97F4A7C15ULL;
    for (uint64_t i = 0; i < iters; i++)
        __asm__ volatile(".rept 256\n\timul %1, %0\n\t.endr" : "+r"(a) : "r"(m));
    return a;
}

uint64_t core_clock_add_chain(uint64_t iters) { return add_rr_chain(iters); }
uint64_t core_clock_imul_chain(uint64_t iters) { return imul_chain(iters); }

static volatile uint64_t chain_sink; /* keeps the chains' results live */

/* Vendor, display family/model, hybrid efficient core and TCG, straight from CPUID (this CPU, now: a hybrid
 * part's cores differ). */
struct who {
    enum cpu_vendor vendor;
    uint32_t family, model;
    bool atom_core, tcg;
};

static void identify(struct who *w)
{
    uint32_t r[4], max_basic;
    char vendor[13];
    memset(w, 0, sizeof(*w));
    cpuid_raw(0, 0, r);
    max_basic = r[0];
    memcpy(vendor, &r[1], 4);
    memcpy(vendor + 4, &r[3], 4);
    memcpy(vendor + 8, &r[2], 4);
    vendor[12] = '\0';
    w->vendor = !strcmp(vendor, "GenuineIntel")   ? CPU_VENDOR_INTEL
                : !strcmp(vendor, "AuthenticAMD") ? CPU_VENDOR_AMD
                : !strcmp(vendor, "HygonGenuine") ? CPU_VENDOR_HYGON
                                                  : CPU_VENDOR_OTHER;
    if (max_basic < 1)
        return;
    cpuid_raw(1, 0, r);
    /* Display family/model (SDM Vol. 2A CPUID, "Processor Version Information"). */
    uint32_t fam = (r[0] >> 8) & 0xF, mod = (r[0] >> 4) & 0xF;
    w->family = fam == 0xF ? fam + ((r[0] >> 20) & 0xFF) : fam;
    w->model = (fam == 0x6 || fam == 0xF) ? mod | (((r[0] >> 16) & 0xF) << 4) : mod;
    bool hypervisor = (r[2] >> 31) & 1;
    if (max_basic >= 0x1A) {
        cpuid_raw(7, 0, r);
        if ((r[3] >> 15) & 1) { /* CPUID.07H.0:EDX[15] hybrid */
            cpuid_raw(0x1A, 0, r);
            w->atom_core = (r[0] >> 24) == 0x20; /* CPUID.1AH:EAX[31:24] core type: 20H Atom */
        }
    }
    if (hypervisor) {
        cpuid_raw(0x40000000, 0, r);
        w->tcg = !memcmp(&r[1], "TCGT", 4) && !memcmp(&r[2], "CGTC", 4) && !memcmp(&r[3], "GTCG", 4);
    }
}

/* dAPERF and dMPERF over one region need four reads; 0, or -1 when one faulted. */
static int read_aperf_mperf(uint64_t *a, uint64_t *m)
{
#ifndef PMB_HOST
    if (rdmsr_safe(MSR_IA32_APERF, a) != MSR_OK || rdmsr_safe(MSR_IA32_MPERF, m) != MSR_OK)
        return -1;
    return 0;
#else
    (void)a;
    (void)m;
    return -1;
#endif
}

int core_clock_measure(struct core_clock *out, bool use_aperf)
{
    struct core_chain_runs runs[CORE_CHAIN_COUNT];
    double aperf[CORE_CLOCK_RUNS];
    uint32_t n_aperf = 0;
    bool aperf_ok = use_aperf;
    struct who w;
    uint64_t sink = 0;

    identify(&w);
    uint32_t add_iters = w.tcg ? ADD_ITERS / TCG_ITERS_DIV : ADD_ITERS;
    uint32_t imul_iters = w.tcg ? IMUL_ITERS / TCG_ITERS_DIV : IMUL_ITERS;
    memset(runs, 0, sizeof(runs));
    runs[CORE_CHAIN_ADD].insns = (uint64_t)add_iters * PER_ITER;
    runs[CORE_CHAIN_ADD].latency = 1;
    runs[CORE_CHAIN_IMUL].insns = (uint64_t)imul_iters * PER_ITER;
    runs[CORE_CHAIN_IMUL].latency = core_clock_imul_latency(w.vendor, w.family, w.model, w.atom_core);

    for (int i = 0; i < WARMUP_RUNS; i++) /* code in the caches, and the clock ramped up */
        sink += add_rr_chain(add_iters) ^ imul_chain(imul_iters);
    for (uint32_t i = 0; i < CORE_CLOCK_RUNS; i++) {
        uint64_t a0 = 0, m0 = 0, a1 = 0, m1 = 0;
        if (aperf_ok && read_aperf_mperf(&a0, &m0))
            aperf_ok = false;
        uint64_t t0 = rdtsc_ordered();
        sink += add_rr_chain(add_iters);
        uint64_t t1 = rdtsc_ordered();
        if (aperf_ok && read_aperf_mperf(&a1, &m1))
            aperf_ok = false;
        if (aperf_ok && (a1 <= a0 || m1 <= m0))
            aperf_ok = false; /* counters that do not count (emulators) */
        if (aperf_ok)
            aperf[n_aperf++] = (double)(a1 - a0) / (double)(m1 - m0);
        runs[CORE_CHAIN_ADD].ticks[i] = t1 > t0 ? t1 - t0 : 0;

        uint64_t t2 = rdtsc_ordered();
        sink += imul_chain(imul_iters);
        uint64_t t3 = rdtsc_ordered();
        runs[CORE_CHAIN_IMUL].ticks[i] = t3 > t2 ? t3 - t2 : 0;
        runs[CORE_CHAIN_ADD].n = runs[CORE_CHAIN_IMUL].n = i + 1;
    }
    chain_sink = sink;
    core_clock_decide(out, runs, aperf_ok ? aperf : NULL, aperf_ok ? n_aperf : 0, w.tcg);
    return out->ratio > 0 ? 0 : -1;
}

/* ---- output --------------------------------------------------------------------------------------------- */

void core_clock_json(struct json *j, const struct core_clock *c)
{
    const struct core_chain_ratio *add = &c->chain[CORE_CHAIN_ADD], *imul = &c->chain[CORE_CHAIN_IMUL];
    json_obj_begin(j);
    json_kv_double(j, "ratio", c->ratio);
    json_kv_str(j, "method", c->method);
    json_kv_double(j, "spread", c->spread);
    json_kv_double_or_null(j, "add", add->valid, add->ratio);
    json_kv_double_or_null(j, "add_spread", add->valid, add->spread);
    json_kv_double_or_null(j, "imul", imul->valid, imul->ratio);
    json_kv_double_or_null(j, "imul_spread", imul->valid, imul->spread);
    json_kv_uint(j, "imul_latency", imul->latency);
    if (c->agree < 0)
        json_kv_null(j, "agree");
    else
        json_kv_bool(j, "agree", c->agree == 1);
    json_kv_str(j, "suspect", c->suspect); /* NULL writes null */
    json_kv_double_or_null(j, "aperf", c->aperf_valid, c->aperf_ratio);
    json_kv_uint(j, "runs", add->n);
    json_kv_str(j, "note", c->note);
    json_obj_end(j);
}
