/* uncore_bw.c - per-socket memory bandwidth from the uncore / northbridge counters, each socket read by one of its own CPUs. */
#include "pmu/uncore_bw.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/msr.h"
#include "kernel/out.h"
#include "kernel/pci.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "pmu/counting.h"
#include "pmu/encode.h"
#include "pmu/msr_pmu.h"
#include "pmu/pmu.h"

/* ---- the known streams ------------------------------------------------------------------------ */

uint64_t pmu_stream_read(const void *buf, size_t bytes)
{
    const volatile uint64_t *p = buf;
    uint64_t s = 0;
    for (size_t i = 0; i < bytes / 8; i += 8)
        s += p[i];
    return s;
}

void pmu_stream_write(void *buf, size_t bytes, uint64_t v)
{
    volatile uint64_t *p = buf;
    for (size_t i = 0; i < bytes / 8; i += 8)
        p[i] = v + i;
}

/* ---- what each PMU counts --------------------------------------------------------------------- */

/* [PAG] "Measuring Bandwidth From the Uncore": Table 32 UNC_IMC_NORMAL_READS.ANY (libpfm4
 * UNC_QMC_NORMAL_READS:ANY, 2CH/07H) and UNC_IMC_WRITES.FULL.ANY (2FH/07H); Table 31 the home
 * agent's requests from this socket and from the other (20H/10H, 20H/20H, 20H/04H, 20H/08H); the
 * uncore clock on the fixed counter. Six general events and the fixed one: one group. */
#define NHM_EVENTS                                                                                          \
    "UNC_QMC_NORMAL_READS:ANY,UNC_QMC_WRITES:FULL_ANY,UNC_QHL_REQUESTS:LOCAL_READS,UNC_QHL_REQUESTS:LOCAL_WRITES," \
    "UNC_QHL_REQUESTS:REMOTE_READS,UNC_QHL_REQUESTS:REMOTE_WRITES,UNC_CLK_UNHALTED"
enum { NHM_QMC_RD, NHM_QMC_WR, NHM_QHL_LRD, NHM_QHL_LWR, NHM_QHL_RRD, NHM_QHL_RWR, NHM_UCLK };
/* [AMD] 4.2.2: CPU clocks 76H, System_read 6CH/07H, System_write 6DH/01H, and "a separate performance
 * counter must be configured for each memory controller": DRAM accesses E0H/07H (DCT0) and E0H/38H
 * (DCT1). Five events on four counters: two groups. */
#define AMD10_EVENTS                                                                                        \
    "CPU_CLK_UNHALTED,SYSTEM_READ_RESPONSES:EXCLUSIVE:MODIFIED:SHARED,"                                     \
    "QUADWORDS_WRITTEN_TO_SYSTEM:QUADWORD_WRITE_TRANSFER,DRAM_ACCESSES_PAGE:HIT:MISS:CONFLICT,"             \
    "DRAM_ACCESSES_PAGE:DCT1_PAGE_HIT:DCT1_PAGE_MISS:DCT1_PAGE_CONFLICT"
enum { AMD10_CLK, AMD10_RD, AMD10_WR, AMD10_DCT0, AMD10_DCT1 };
/* Family 15h: the same E0H unit-mask layout per DCT on the northbridge counters (libpfm4
 * amd64_fam15h_nb, BKDG 42301 D18F3 NB events). */
#define AMD15_NB_EVENTS                                                                                     \
    "DRAM_ACCESSES:DCT0_PAGE_HIT:DCT0_PAGE_MISS:DCT0_PAGE_CONFLICT,"                                        \
    "DRAM_ACCESSES:DCT1_PAGE_HIT:DCT1_PAGE_MISS:DCT1_PAGE_CONFLICT"
enum { AMD15_DCT0, AMD15_DCT1 };

enum bw_kind { BW_NONE, BW_NHM, BW_AMD10, BW_AMD_NB };

static bool is_row(const char *a, const char *b) { return a && !strcmp(a, b); }

static enum bw_kind kind_of(const char **events, enum pmu_feature *gate, const char **why)
{
    const struct pmu_caps *c = &PMU.caps;
    *events = NULL;
    *gate = PMU_FEAT_UNCORE;
    *why = NULL;
    if (!PMU.present) {
        *why = PMU.reason ? PMU.reason : "PMU unavailable";
        return BW_NONE;
    }
    if (c->uncore == PMU_UNCORE_NHM) {
        *events = NHM_EVENTS;
        return BW_NHM;
    }
    if (is_row(c->model, "amd_fam10h")) {
        /* Family 10h northbridge events count on the core counters. */
        *events = AMD10_EVENTS;
        *gate = PMU_FEAT_COUNTING;
        return BW_AMD10;
    }
    if (c->uncore == PMU_UNCORE_AMD_NB) {
        *events = AMD15_NB_EVENTS;
        return BW_AMD_NB;
    }
    if (is_row(c->model, "amd_fam15h"))
        *why = "unavailable: no northbridge counters (CPUID 8000_0001h:ECX[24] PerfCtrExtNB is clear)";
    else if (c->vendor == PMU_VENDOR_AMD)
        *why = "unavailable: DRAM traffic on this AMD family is counted by the data fabric / UMC PMUs, not programmed "
               "here";
    else if (c->uncore == PMU_UNCORE_NHM_EX)
        *why = c->uncore_note ? c->uncore_note : "unavailable: box-based EX uncore, not programmed";
    else
        *why = "unavailable: no uncore or northbridge memory counters on this PMU model";
    return BW_NONE;
}

/* ---- sockets ------------------------------------------------------------------------------------ */

struct bw_socket {
    uint32_t package;
    int node;         /* the node of the CPU that reads it: where its stream buffer lives */
    int cpu;          /* SMP index of the CPU that reads it, -1 none */
    const char *why;  /* not read: why */
    char whybuf[96];
    bool ran, measured;
    uint64_t ticks;   /* TSC ticks of the timed passes, summed over groups */
    uint64_t value[PMU_COUNTING_MAX];
    bool have[PMU_COUNTING_MAX];
    int dct_ganged;   /* family 10h: F2x110[DctGangEn] of its node, -1 unknown */
};

static struct bw_socket sockets[UNCORE_BW_MAX_SOCKETS];
static unsigned nsockets;
static unsigned sockets_dropped; /* sockets beyond UNCORE_BW_MAX_SOCKETS */

/* One entry per package (per package and node on AMD: a two-die package has two northbridges). The
 * BSP's socket first; each read by its first online CPU. */
static void find_sockets(bool per_node)
{
    nsockets = sockets_dropped = 0;
    uint32_t total = smp_cpu_total();
    for (uint32_t i = 0; i < total; i++) {
        const struct smp_cpu *c = smp_cpu(i);
        if (!c)
            continue;
        int node = c->node;
        struct bw_socket *s = NULL;
        for (unsigned k = 0; k < nsockets; k++)
            if (sockets[k].package == c->package && (!per_node || sockets[k].node == node))
                s = &sockets[k];
        if (!s) {
            if (nsockets >= UNCORE_BW_MAX_SOCKETS) {
                sockets_dropped++;
                continue;
            }
            s = &sockets[nsockets++];
            memset(s, 0, sizeof(*s));
            s->package = c->package;
            s->node = node;
            s->cpu = -1;
            s->why = c->fail_reason ? c->fail_reason : "no CPU of this socket is online";
        }
        if (c->online && s->cpu < 0) {
            s->cpu = (int)c->index;
            s->node = node;
            s->why = NULL;
        }
    }
    if (!nsockets) { /* no SMP table: the BSP alone */
        memset(&sockets[0], 0, sizeof(sockets[0]));
        sockets[0].node = -1;
        nsockets = 1;
    }
    for (unsigned k = 1; k < nsockets; k++)
        if (sockets[k].cpu == 0) {
            struct bw_socket t = sockets[0];
            sockets[0] = sockets[k];
            sockets[k] = t;
        }
}

/* ---- a group run on another CPU ---------------------------------------------------------------
 * pmu_group_program / pmu_group_release emit the pmu_measure record and open / close the measurement
 * window on the calling CPU, so a group whose counters belong to another socket is run here: the BSP
 * emits the record (with "cpu") and holds the window open, the socket's own CPU writes the MSRs in
 * pmu/counting.c's order (everything with the uncore globally disabled, counters cleared, overflow
 * status cleared; pmu_group_start enables last, pmu_group_stop disables first, pmu_group_read reads;
 * then every control zeroed). Its msr_trace entries queue and are written by the BSP inside the
 * window. Uncore, AMD core and AMD northbridge counters only: the bandwidth events. */

static void wr(struct pmu_group *g, uint32_t msr, uint64_t v)
{
    if (wrmsr_safe(msr, v) != MSR_OK)
        g->faults++;
}

static void program_here(struct pmu_group *g)
{
    bool unc = pmu_group_uses_uncore(g);
    if (unc)
        wr(g, MSR_UNCORE_PERF_GLOBAL_CTRL, 0);
    for (unsigned i = 0; i < g->n; i++) {
        struct pmu_slot *s = &g->s[i];
        uint64_t m = s->width >= 64 ? ~0ULL : (1ULL << s->width) - 1;
        switch (s->kind) {
        case PMU_SLOT_UNCORE_GP:
            wr(g, s->ctl_msr, s->ctl);
            wr(g, s->ctr_msr, 0);
            break;
        case PMU_SLOT_UNCORE_FIXED: wr(g, s->ctr_msr, 0); break;
        case PMU_SLOT_AMD:
        case PMU_SLOT_AMD_NB: /* the local EN bit is the enable: pmu_group_start sets it */
            wr(g, s->ctl_msr, s->ctl & ~AMD_PERF_CTL_EN);
            wr(g, s->ctr_msr, s->preload & m);
            break;
        default: g->faults++; break; /* not a bandwidth counter: never placed here */
        }
    }
    for (unsigned i = 0; i < g->n; i++)
        if (g->s[i].kind == PMU_SLOT_UNCORE_FIXED)
            wr(g, MSR_UNCORE_FIXED_CTR_CTRL, g->s[i].ctl);
    if (unc)
        wr(g, MSR_UNCORE_PERF_GLOBAL_OVF_CTRL, pmu_enc_uncore_global_ovf_clear_all());
    g->programmed = true;
}

static void release_here(struct pmu_group *g)
{
    bool unc = pmu_group_uses_uncore(g), fixed = false;
    if (g->running)
        pmu_group_stop(g);
    for (unsigned i = 0; i < g->n; i++) {
        struct pmu_slot *s = &g->s[i];
        if (s->kind == PMU_SLOT_UNCORE_FIXED)
            fixed = true;
        else
            wr(g, s->ctl_msr, 0);
    }
    if (fixed)
        wr(g, MSR_UNCORE_FIXED_CTR_CTRL, 0);
    if (unc)
        wr(g, MSR_UNCORE_PERF_GLOBAL_OVF_CTRL, pmu_enc_uncore_global_ovf_clear_all());
    g->programmed = false;
}

struct bw_job {
    struct pmu_group *g;
    void *buf;
    size_t bytes;
    bool remote;     /* program / release here (the BSP's socket goes through pmu_counting_*) */
    uint64_t ticks;
};

/* The stream every group counts: one read pass and one write pass over the buffer. */
static void timed_stream(struct bw_job *b)
{
    uint64_t t0 = rdtsc_ordered();
    uint64_t s = pmu_stream_read(b->buf, b->bytes);
    pmu_stream_write(b->buf, b->bytes, s);
    b->ticks = rdtsc_ordered() - t0;
}

static void remote_job(void *arg)
{
    struct bw_job *b = arg;
    program_here(b->g);
    pmu_group_start(b->g);
    timed_stream(b);
    pmu_group_stop(b->g);
    pmu_group_read(b->g);
    release_here(b->g);
}

static void warm_job(void *arg)
{
    struct bw_job *b = arg;
    pmu_stream_write(b->buf, b->bytes, 1); /* touch every line (and its TLB entries) once */
}

/* ---- the step ----------------------------------------------------------------------------------- */

static struct pmu_counting pc;

/* The counter group `gi` of the prepared set, as pmu_counting_begin builds it. */
static int build_group(unsigned gi, const char *label)
{
    pmu_group_init(&pc.g, "counting", label);
    for (unsigned i = 0; i < pc.nev; i++)
        if (pc.sched.a[i].group == gi && pmu_group_add(&pc.g, &pc.ev[i], pc.sched.a[i].alt, pc.sched.a[i].counter,
                                                       (int)i) != 0)
            return -1;
    return 0;
}

static void measure_socket(struct bw_socket *s, const char *what, size_t bytes)
{
    uint64_t phys = 0;
    if (!K.pmm || pmm_alloc_tagged(K.pmm, bytes, 4096, s->node, "pmu_uncore_stream", &phys) != PMM_OK) {
        fmt_snprintf(s->whybuf, sizeof(s->whybuf), "cannot allocate %lu MiB on node %d, the socket's own memory",
                     (unsigned long)(bytes >> 20), s->node);
        s->why = s->whybuf;
        return;
    }
    struct bw_job job = {.g = &pc.g, .buf = (void *)(uintptr_t)phys, .bytes = bytes, .remote = s->cpu != 0};
    smp_run_on((uint32_t)s->cpu, warm_job, &job, SMP_DEFAULT_TIMEOUT_US);
    bool ok = true;
    for (unsigned gi = 0; gi < pc.ngroups && ok; gi++) {
        if (!job.remote) {
            if (pmu_counting_begin(&pc, gi) != 0) {
                ok = false;
                break;
            }
            timed_stream(&job);
            pmu_counting_end(&pc, gi);
        } else {
            if (build_group(gi, what) != 0) {
                ok = false;
                break;
            }
            pc.g.id = pmu_window_next_id();
            pmu_group_record(&pc.g, s->cpu, (int)s->package);
            pmu_window_open(pc.g.id);
            int rc = smp_run_on((uint32_t)s->cpu, remote_job, &job, SMP_DEFAULT_TIMEOUT_US);
            pmu_window_close(pc.g.id);
            if (rc != 0) {
                fmt_snprintf(s->whybuf, sizeof(s->whybuf), "CPU %d did not finish its counting job", s->cpu);
                s->why = s->whybuf;
                ok = false;
                break;
            }
            for (unsigned i = 0; i < pc.g.n; i++) {
                const struct pmu_slot *sl = &pc.g.s[i];
                if (sl->ev < 0 || sl->ev >= (int)pc.nev)
                    continue;
                pc.value[sl->ev] = sl->value;
                pc.measured[sl->ev] = sl->read_ok;
                pc.overflowed[sl->ev] = sl->overflowed;
            }
            if (pc.g.faults && pc.valid) {
                pc.valid = false;
                pc.why = "an MSR access faulted";
            }
        }
        s->ticks += job.ticks;
    }
    pmm_free(K.pmm, phys, bytes);
    s->ran = ok;
    if (!ok && !s->why)
        s->why = "the counter group could not be programmed";
    for (unsigned i = 0; i < pc.nev; i++) {
        s->value[i] = pc.value[i];
        s->have[i] = ok && pc.measured[i] && !pc.overflowed[i];
    }
    s->measured = ok && pc.valid;
}

/* Bytes per event count ([PAG]: 64 per line; [AMD] 4.2.2: System_read x 64, family 10h writes x 16,
 * DRAM accesses x 64). */
struct bw_bytes {
    bool rd_ok, wr_ok, dram_ok, qhl_ok;
    uint64_t rd, wr, dram, qhl_rd, qhl_wr;
};

static struct bw_bytes bytes_of(enum bw_kind k, const struct bw_socket *s)
{
    struct bw_bytes b = {0};
    if (!s->measured)
        return b;
    switch (k) {
    case BW_NHM:
        b.rd_ok = s->have[NHM_QMC_RD], b.rd = 64 * s->value[NHM_QMC_RD];
        b.wr_ok = s->have[NHM_QMC_WR], b.wr = 64 * s->value[NHM_QMC_WR];
        b.qhl_ok = s->have[NHM_QHL_LRD] && s->have[NHM_QHL_LWR] && s->have[NHM_QHL_RRD] && s->have[NHM_QHL_RWR];
        b.qhl_rd = 64 * (s->value[NHM_QHL_LRD] + s->value[NHM_QHL_RRD]);
        b.qhl_wr = 64 * (s->value[NHM_QHL_LWR] + s->value[NHM_QHL_RWR]);
        break;
    case BW_AMD10:
        b.rd_ok = s->have[AMD10_RD], b.rd = 64 * s->value[AMD10_RD];
        b.wr_ok = s->have[AMD10_WR], b.wr = 16 * s->value[AMD10_WR];
        b.dram_ok = s->have[AMD10_DCT0] && s->have[AMD10_DCT1];
        b.dram = 64 * pmu_amd10_dram_lines(s->value[AMD10_DCT0], s->value[AMD10_DCT1], s->dct_ganged);
        break;
    case BW_AMD_NB:
        b.dram_ok = s->have[AMD15_DCT0] && s->have[AMD15_DCT1];
        b.dram = 64 * (s->value[AMD15_DCT0] + s->value[AMD15_DCT1]);
        break;
    default: break;
    }
    return b;
}

static void kv_rate(struct json *j, const char *k, bool ok, uint64_t bytes, double secs)
{
    if (ok && secs > 0)
        json_kv_double(j, k, (double)bytes / secs);
    else
        json_kv_null(j, k);
}

static double secs_of(const struct bw_socket *s)
{
    /* Every group streamed the same passes: a group's share of the time. */
    if (!s->ticks || !K.time.tsc_hz || !pc.ngroups)
        return 0;
    return (double)s->ticks / (double)K.time.tsc_hz / (double)pc.ngroups;
}

static const char *method_of(enum bw_kind k)
{
    switch (k) {
    case BW_NHM:
        return "[PAG] 64 x UNC_QMC_NORMAL_READS.ANY (reads) / 64 x UNC_QMC_WRITES.FULL.ANY (writes) at this socket's "
               "memory controller; QHL 64 x (LOCAL + REMOTE) requests at its home agent";
    case BW_AMD10:
        return "[AMD] 4.2.2 System_read x 64, System_write x 16, DRAM accesses (DCT0 E0H/07H + DCT1 E0H/38H; DCT0 "
               "alone where F2x110[DctGangEn] says the DCTs are ganged) x 64, "
               "on a core of this node";
    case BW_AMD_NB: return "DRAM accesses (DCT0 E0H/07H + DCT1 E0H/38H) x 64 on this node's northbridge counters";
    default: return NULL;
    }
}

static void socket_record(enum bw_kind k, const char *what, const struct bw_socket *s, size_t bytes)
{
    struct bw_bytes b = bytes_of(k, s);
    double secs = secs_of(s);
    bool valid = pc.valid;
    pc.valid = s->measured;
    struct json *j = pmu_rec_begin("pmu_counting");
    json_kv_str(j, "what", what);
    json_kv_str(j, "bench", "stream");
    json_kv_uint(j, "socket", s->package);
    json_kv_int(j, "node", s->node);
    json_kv_int(j, "cpu", s->cpu);
    json_kv_uint(j, "bytes", bytes);
    json_kv_str(j, "events_source", "default");
    json_kv_str(j, "per", "pass");
    json_kv_uint(j, "elapsed_tsc", s->ticks);
    pmu_counting_json(&pc, j, 1.0);
    kv_rate(j, "read_bytes_per_s", b.rd_ok, b.rd, secs);
    kv_rate(j, "write_bytes_per_s", b.wr_ok, b.wr, secs);
    if (k != BW_NHM)
        kv_rate(j, "dram_bytes_per_s", b.dram_ok, b.dram, secs);
    else {
        kv_rate(j, "qhl_read_bytes_per_s", b.qhl_ok, b.qhl_rd, secs);
        kv_rate(j, "qhl_write_bytes_per_s", b.qhl_ok, b.qhl_wr, secs);
    }
    json_kv_str(j, "bandwidth_method", method_of(k));
    if (k == BW_AMD10) {
        /* F2x110[DctGangEn] of this node: ganged, DRAM bytes come from DCT0 alone (pmu_amd10_dram_lines). */
        if (s->dct_ganged < 0)
            json_kv_null(j, "dct_ganged");
        else
            json_kv_bool(j, "dct_ganged", s->dct_ganged > 0);
        json_kv_str(j, "dram_dcts", s->dct_ganged > 0 ? "DCT0 (ganged: one 128-bit channel)" : "DCT0 + DCT1");
    }
    pmu_rec_end();
    pc.valid = valid;
}

/* Family 10h: F2x110[DctGangEn] of node's northbridge (bus 0, device 18H + node, function 2); -1 when no
 * device answers there or the node is unknown. Read on the BSP: configuration space is system-wide. */
static int amd10_dct_ganged(int node)
{
    uint32_t v;
    if (node < 0 || node > 7 ||
        pci_cfg_read32_amd_ext(0, AMD10_PCI_DEV_NODE0 + (unsigned)node, AMD10_PCI_FN_DRAM, AMD10_F2X110, &v) != 0)
        return -1;
    return (v & AMD10_F2X110_DCT_GANG_EN) ? 1 : 0;
}

static void summary_record(enum bw_kind k, const char *what, const char *why, size_t bytes)
{
    unsigned nread = 0, nmeasured = 0;
    uint64_t trd = 0, twr = 0, tdram = 0;
    double tsecs = 0;
    bool rd_ok = true, wr_ok = true, dram_ok = true;
    for (unsigned i = 0; i < nsockets; i++) {
        const struct bw_socket *s = &sockets[i];
        if (!s->ran)
            continue;
        nread++;
        struct bw_bytes b = bytes_of(k, s);
        nmeasured += s->measured;
        rd_ok &= b.rd_ok, wr_ok &= b.wr_ok, dram_ok &= b.dram_ok;
        trd += b.rd, twr += b.wr, tdram += b.dram;
        tsecs += secs_of(s);
    }
    bool all = nread && nmeasured == nread;
    struct json *j = pmu_rec_begin("uncore_bandwidth");
    json_kv_str(j, "what", what);
    json_kv_str(j, "model", PMU.detect_ran ? PMU.caps.model : NULL);
    json_kv_str(j, "status", all ? (nread == nsockets && !sockets_dropped ? "ok" : "partial") : "unavailable");
    if (!all)
        json_kv_str(j, "reason", why ? why : !nread ? "no socket was read" : pc.why ? pc.why : "not measured");
    json_kv_uint(j, "bytes", bytes);
    json_kv_str(j, "method", method_of(k));
    json_kv_str(j, "total_method", "sum over the sockets read, one after another: each socket's bytes over the sum "
                                   "of their pass times");
    json_key(j, "sockets");
    json_arr_begin(j);
    for (unsigned i = 0; i < nsockets && k != BW_NONE; i++) {
        const struct bw_socket *s = &sockets[i];
        if (!s->ran)
            continue;
        struct bw_bytes b = bytes_of(k, s);
        double secs = secs_of(s);
        json_obj_begin(j);
        json_kv_uint(j, "socket", s->package);
        json_kv_int(j, "node", s->node);
        json_kv_int(j, "cpu", s->cpu);
        json_kv_str(j, "status", s->measured ? "ok" : "unavailable");
        if (!s->measured)
            json_kv_str(j, "reason", pc.why ? pc.why : "not measured");
        kv_rate(j, "read_bytes_per_s", b.rd_ok, b.rd, secs);
        kv_rate(j, "write_bytes_per_s", b.wr_ok, b.wr, secs);
        kv_rate(j, "dram_bytes_per_s", b.dram_ok, b.dram, secs);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_kv_uint(j, "sockets_read", nread);
    json_key(j, "sockets_not_read");
    json_arr_begin(j);
    for (unsigned i = 0; i < nsockets; i++) {
        const struct bw_socket *s = &sockets[i];
        if (s->ran)
            continue;
        json_obj_begin(j);
        json_kv_uint(j, "socket", s->package);
        json_kv_int(j, "node", s->node);
        json_kv_str(j, "reason", k == BW_NONE && why ? why : s->why ? s->why : "not read");
        json_obj_end(j);
    }
    if (sockets_dropped) {
        json_obj_begin(j);
        json_kv_null(j, "socket");
        json_kv_null(j, "node");
        char r[64];
        fmt_snprintf(r, sizeof(r), "%u more socket(s) beyond the first %u", sockets_dropped,
                     (unsigned)UNCORE_BW_MAX_SOCKETS);
        json_kv_str(j, "reason", r);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_key(j, "total");
    json_obj_begin(j);
    kv_rate(j, "read_bytes_per_s", all && rd_ok, trd, tsecs);
    kv_rate(j, "write_bytes_per_s", all && wr_ok, twr, tsecs);
    kv_rate(j, "dram_bytes_per_s", all && dram_ok, tdram, tsecs);
    json_obj_end(j);
    pmu_rec_end();
    kprintf("PMU %s: %u of %u socket(s) read%s%s\n", what, nread, nsockets + sockets_dropped,
            all ? ", measured" : ": ", all ? "" : why ? why : pc.why ? pc.why : "not measured");
}

void pmu_uncore_bandwidth(size_t bytes)
{
    const char *events, *why;
    enum pmu_feature gate;
    enum bw_kind k = kind_of(&events, &gate, &why);
    const char *what = k == BW_NHM || k == BW_NONE ? "uncore_bandwidth" : "dram_bandwidth";

    find_sockets(PMU.caps.vendor == PMU_VENDOR_AMD);
    for (unsigned i = 0; i < nsockets; i++)
        sockets[i].dct_ganged = k == BW_AMD10 ? amd10_dct_ganged(sockets[i].node) : -1;
    memset(&pc, 0, sizeof(pc));
    if (k != BW_NONE && !pmu_may_program(gate, &why))
        k = BW_NONE;
    if (k != BW_NONE && pmu_counting_prepare(&pc, events, what) != PMU_COUNTING_OK) {
        why = pc.status == PMU_COUNTING_ERROR ? pc.err : pc.why;
        k = BW_NONE;
    }
    if (k == BW_NONE) {
        for (unsigned i = 0; i < nsockets; i++)
            sockets[i].ran = false;
        summary_record(k, what, why, bytes);
        return;
    }
    bool valid0 = pc.valid;
    const char *why0 = pc.why;
    for (unsigned i = 0; i < nsockets; i++) {
        struct bw_socket *s = &sockets[i];
        if (s->cpu < 0)
            continue;
        pc.valid = valid0;
        pc.why = why0;
        measure_socket(s, what, bytes);
        if (s->ran)
            socket_record(k, what, s, bytes);
        kprintf("PMU %s socket %u (node %d, CPU %d): %s%s%s\n", what, s->package, s->node, s->cpu,
                !s->ran ? "not read" : s->measured ? "measured" : "programmed, not measured",
                s->measured ? "" : ": ", s->measured ? "" : !s->ran ? s->why : pc.why ? pc.why : "?");
    }
    pc.valid = valid0;
    pc.why = why0;
    summary_record(k, what, NULL, bytes);
}
