/* lat_numa.c - idle latency between NUMA nodes, and latency under load from the other cores' read streams. */
#include "bench/lat_numa.h"
#include "bench/lat_common.h"
#include "measure/rand.h"
#include "kernel/fmt.h"
#include "bench/crosscheck.h"
#include "bench/lat_sweep.h"
#include "measure/timing.h"

#define NUMA_MAX 16 /* = ACPI_MAX_NODES */

/* ---- numa_latency ---------------------------------------------------------------------------------- */

struct remote_chase {
    void *start;
    size_t n;
    bool own_cpu;
    int rc;
    struct lat_result r;
    const struct lat_reps *reps;
};

static void chase_job(void *arg)
{
    struct remote_chase *c = arg;
    c->rc = lat_chase(c->start, c->n, c->own_cpu, c->reps, &c->r);
}

static double numa_ns[NUMA_MAX][NUMA_MAX];

/* DRAM working set for node `node`, capped by max_bytes and half the node's largest free block (*cap_out: that
 * cap, 0 for none; optional). */
static uint64_t dram_bytes_cap(const struct cache_sizes *c, int node, uint64_t *cap_out)
{
    const struct plat_config *cfg = plat_config();
    uint64_t cap = cfg->max_bytes;
    uint64_t lim = plat_alloc_limit(node) / 2;
    if (lim && (!cap || lim < cap))
        cap = lim;
    if (cap_out)
        *cap_out = cap;
    return lat_dram_bytes(c, cfg->quick, cap);
}

static uint64_t dram_bytes(const struct cache_sizes *c, int node) { return dram_bytes_cap(c, node, NULL); }

/* A chain over a DRAM-sized buffer: page-by-page over 2 MiB units when the pages are that large. */
static void *dram_chain(struct plat_buf *b, uint64_t w, uint64_t seed, struct lat_scratch *s, size_t *n,
                        struct lat_reps *reps)
{
    struct chain_params p = {
        .bytes = (size_t)w,
        .line = 64,
        .page = MiB(2),
        .mode = b->page_bytes >= MiB(2) ? CHAIN_PAGE : CHAIN_RANDOM,
        .seed = seed,
    };
    *reps = (struct lat_reps){.buf = b->ptr, .p = p, .s = s}; /* each replicate a fresh permutation */
    return lat_chain(b->ptr, &p, s, n);
}

/* The numa_latency chain: over wb bytes of the buffer b (its units beyond w are the replicates' room), each replicate
 * a relink of it (lat_chain_relinkable: a fresh order of the units in its own window of b; on 4 KiB pages a fresh
 * order of the cycle's stretches). */
static void *dram_chain_relinkable(struct plat_buf *b, uint64_t w, uint64_t wb, uint64_t seed, struct lat_scratch *s, size_t *n,
                                   struct lat_reps *reps, struct lat_relink *rl)
{
    bool big = b->page_bytes >= MiB(2);
    struct chain_params p = {
        .bytes = (size_t)(big ? ALIGN_DOWN(wb, MiB(2)) : w),
        .line = 64,
        .page = MiB(2),
        .mode = big ? CHAIN_PAGE : CHAIN_RANDOM,
        .seed = seed,
    };
    void *start = lat_chain_relinkable(b->ptr, &p, w, s, rl, n);
    p.bytes = (size_t)w;
    *reps = (struct lat_reps){.relink = rl->on ? rl : NULL, .buf = b->ptr, .p = p, .s = s};
    return start;
}

void bench_numa_latency(void)
{
    struct cache_sizes c;
    cache_sizes_from_cpuid(plat_cpuinfo(), &c);
    uint32_t nodes = MIN(plat_node_count(), (uint32_t)NUMA_MAX);
    uint32_t ncpu = plat_cpu_count();
    struct plat_cpu cpu_of[NUMA_MAX];
    bool has_cpu[NUMA_MAX] = {0};
    for (uint32_t i = 0; i < ncpu; i++) {
        struct plat_cpu pc;
        if (plat_cpu(i, &pc) && pc.node >= 0 && pc.node < (int)nodes && !has_cpu[pc.node]) {
            cpu_of[pc.node] = pc;
            has_cpu[pc.node] = true;
        }
    }
    struct plat_cpu self;
    plat_cpu(0, &self);
    uint64_t s = plat_config()->seed ^ 0x4e554d41ull;
    struct lat_scratch scratch = {0};
    plat_printf("NUMA latency: %u node(s); a CPU of each node chases a DRAM-sized chain on each node's memory\n", nodes);

    for (uint32_t mem = 0; mem < nodes; mem++) {
        for (uint32_t i = 0; i < nodes; i++)
            numa_ns[i][mem] = 0;
        if (plat_node_bytes((int)mem) == 0)
            continue;
        uint64_t cap = 0;
        uint64_t w = dram_bytes_cap(&c, (int)mem, &cap);
        uint64_t wb = lat_relink_buffer_bytes(w, MiB(2), cap); /* room for the replicates' windows (large pages) */
        struct plat_buf b = {0};
        void *start = NULL;
        size_t n = 0;
        const char *fail = NULL;
        struct lat_reps reps = {0};
        struct lat_relink rl = {0};
        uint64_t seed = splitmix64_next(&s);
        if (plat_alloc(&b, wb, PLAT_PAGE_LARGEST, (int)mem, "numa latency") != 0 &&
            (wb == w || plat_alloc(&b, wb = w, PLAT_PAGE_LARGEST, (int)mem, "numa latency") != 0))
            fail = "no memory on this node for the chain";
        else if (!(start = dram_chain_relinkable(&b, w, wb, seed, &scratch, &n, &reps, &rl)))
            fail = "could not build the chain";
        for (uint32_t from = 0; from < nodes; from++) {
            if (!has_cpu[from])
                continue;
            if (!fail && rl.on) /* replicate 0's chain: the previous pair's replicates left the last one's */
                start = lat_relink_rep(&rl, 0, &n);
            struct remote_chase rc = {.start = start, .n = n, .own_cpu = cpu_of[from].id == self.id, .rc = -1,
                                      .reps = &reps};
            const char *why = fail;
            if (!why && plat_run_on(cpu_of[from].id, chase_job, &rc) != 0)
                why = "the CPU did not finish its job in time";
            else if (!why && rc.rc != CHASE_OK)
                why = "the chase failed (clock)";
            struct json *j = plat_rec_begin("numa_latency");
            json_kv_uint(j, "from_node", from);
            json_kv_uint(j, "to_node", mem);
            json_kv_uint(j, "cpu", cpu_of[from].id);
            json_kv_int(j, "distance", plat_node_distance((int)from, (int)mem));
            json_kv_uint(j, "bytes", w);
            char name[LEDGER_NAME_MAX];
            fmt_snprintf(name, sizeof(name), "numa_latency/%u-%u", from, mem);
            if (why) {
                json_kv_str(j, "status", "failed");
                json_kv_str(j, "reason", why);
                lat_unavailable_json(j, name, why);
            } else {
                json_kv_str(j, "status", "ok");
                lat_result_json(j, name, &rc.r);
                json_kv_uint(j, "page_bytes", b.page_bytes);
                json_kv_int(j, "buffer_node", b.node);
                json_kv_str(j, "chain", b.page_bytes >= MiB(2) ? "page" : "random");
                json_kv_uint(j, "buffer_bytes", b.page_bytes >= MiB(2) ? ALIGN_DOWN(wb, MiB(2)) : w); /* the chain's */
                lat_relink_json(j, &rl);
                numa_ns[from][mem] = rc.r.ns;
            }
            plat_rec_end();
        }
        lat_relink_free(&rl);
        plat_free(&b);
    }
    lat_scratch_free(&scratch);

    /* The same quantity as the Table 2 local_DRAM row: same chain, same working-set rule, CPU 0's node. */
    struct plat_cpu self0;
    if (plat_cpu(0, &self0) && self0.node >= 0) {
        char a[LEDGER_NAME_MAX];
        fmt_snprintf(a, sizeof(a), "numa_latency/%d-%d", self0.node, self0.node);
        /* a third way: the sweep's plateau at the DRAM working set, where its pages make it the same quantity */
        const char *why;
        crosscheck_figures3("local DRAM latency (numa_latency vs Table 2 row)", a, "data_source/local_DRAM",
                            lat_sweep_dram_plateau(dram_bytes(&c, self0.node), &why), XC_TOL_DRAM, NULL, NULL);
    }

    plat_printf("NUMA latency (ns; rows: node of the CPU, columns: node of the memory)\n  %6s", "node");
    for (uint32_t m = 0; m < nodes; m++)
        plat_printf(" %8u", m);
    plat_printf("\n");
    for (uint32_t f = 0; f < nodes; f++) {
        if (!has_cpu[f]) {
            plat_printf("  %6u  (no CPU)\n", f);
            continue;
        }
        plat_printf("  %6u", f);
        for (uint32_t m = 0; m < nodes; m++) {
            if (numa_ns[f][m] > 0)
                plat_printf(" %8.1f", numa_ns[f][m]);
            else
                plat_printf(" %8s", plat_node_bytes((int)m) ? "fail" : "no mem");
        }
        plat_printf("\n");
    }
}

/* ---- loaded_latency ----------------------------------------------------------------------------------- */

#define MAX_STREAMERS 63

struct streamer {
    const uint8_t *buf;
    uint64_t bytes;  /* a multiple of 4 KiB */
    uint32_t delay;  /* empty loop iterations after each line */
    volatile uint32_t started;
    uint64_t ticks, lines;
    volatile uint64_t sink;
};

static volatile uint32_t stream_go, stream_stop;
static struct streamer streamers[MAX_STREAMERS];
static struct plat_buf stream_bufs[MAX_STREAMERS];

static void streamer_job(void *arg)
{
    struct streamer *s = arg;
    __atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&stream_go, __ATOMIC_ACQUIRE) && !__atomic_load_n(&stream_stop, __ATOMIC_ACQUIRE))
        timing_pause();
    __atomic_store_n(&s->started, 2, __ATOMIC_RELEASE); /* streaming */
    uint64_t t0 = timing_rdtsc(), lines = 0, sum = 0;
    uint64_t off = 0;
    do { /* at least one chunk: a chase shorter than a time slice still sees every streamer's load */
        /* One 4 KiB chunk in address order (the prefetchers help, as in a real stream), then the stop flag. */
        for (uint64_t k = 0; k < 4096; k += 64) {
            sum += *(const volatile uint64_t *)(s->buf + off + k);
            for (uint32_t d = s->delay; d; d--)
                timing_barrier(); /* ~1 core cycle per iteration: the injection delay */
        }
        lines += 64;
        off += 4096;
        if (off >= s->bytes)
            off = 0;
    } while (!__atomic_load_n(&stream_stop, __ATOMIC_RELAXED));
    s->ticks = timing_rdtsc() - t0;
    s->lines = lines;
    s->sink = sum;
}

static void loaded_unavailable(const char *why)
{
    struct json *j = plat_rec_begin("loaded_latency");
    json_kv_str(j, "status", "unavailable");
    json_kv_str(j, "reason", why);
    json_kv_null(j, "delay");
    json_kv_null(j, "bytes_per_s");
    lat_unavailable_json(j, "loaded_latency/idle", why);
    plat_rec_end();
    plat_printf("loaded latency: %s\n", why);
}

void bench_loaded_latency(void)
{
    const struct plat_config *cfg = plat_config();
    uint32_t ncpu = plat_cpu_count();
    if (ncpu < 2) {
        loaded_unavailable("one CPU: no other core to generate load");
        return;
    }
    struct cache_sizes c;
    cache_sizes_from_cpuid(plat_cpuinfo(), &c);
    struct plat_cpu self;
    plat_cpu(0, &self);

    /* The chaser's chain, on its own node. */
    uint64_t w = dram_bytes(&c, self.node);
    struct plat_buf cb;
    struct lat_scratch scratch = {0};
    size_t n = 0;
    uint64_t s = cfg->seed ^ 0x10ad;
    if (plat_alloc(&cb, w, PLAT_PAGE_LARGEST, self.node, "loaded latency chain") != 0 &&
        plat_alloc(&cb, w, PLAT_PAGE_LARGEST, -1, "loaded latency chain") != 0) {
        loaded_unavailable("no memory for the chain");
        return;
    }
    struct lat_reps reps;
    void *start = dram_chain(&cb, w, splitmix64_next(&s), &scratch, &n, &reps);
    if (!start) {
        lat_scratch_free(&scratch);
        plat_free(&cb);
        loaded_unavailable("could not build the chain");
        return;
    }

    /* Streams: each other CPU reads its own buffer on its own node, twice the LLC, together at most a quarter
     * of what can be allocated, each at most max_bytes. */
    uint32_t ns = MIN(ncpu - 1, (uint32_t)MAX_STREAMERS), have = 0;
    uint64_t sb = MAX(2 * c.llc, cfg->quick ? MiB(8) : MiB(32));
    uint64_t lim = plat_alloc_limit(-1) / 4 / ns;
    if (cfg->max_bytes && (!lim || cfg->max_bytes < lim))
        lim = cfg->max_bytes;
    if (lim && sb > lim)
        sb = MAX(ALIGN_DOWN(lim, MiB(2)), MiB(2));
    uint32_t ids[MAX_STREAMERS];
    for (uint32_t i = 0; i < ns; i++) {
        struct plat_cpu pc;
        if (!plat_cpu(i + 1, &pc))
            continue;
        struct plat_buf *b = &stream_bufs[have];
        if (plat_alloc(b, sb, PLAT_PAGE_LARGEST, pc.node, "loaded latency stream") != 0 &&
            plat_alloc(b, sb, PLAT_PAGE_LARGEST, -1, "loaded latency stream") != 0)
            break;
        streamers[have] = (struct streamer){.buf = b->ptr, .bytes = ALIGN_DOWN(b->bytes, 4096)};
        ids[have++] = pc.id;
    }
    if (have == 0) {
        lat_scratch_free(&scratch);
        plat_free(&cb);
        loaded_unavailable("no memory for the streams");
        return;
    }
    uint32_t delays[LAT_LOADED_MAX_DELAYS];
    size_t nd = lat_loaded_delays(cfg->quick, delays, ARRAY_SIZE(delays));
    char bt[24], bt2[24];
    plat_printf("Loaded latency: CPU %u chases %s while %u CPU(s) stream reads over %s each\n", self.id,
                lat_bytes_text(w, bt, sizeof(bt)), have, lat_bytes_text(sb, bt2, sizeof(bt2)));
    plat_printf("  %12s %12s %10s %9s\n", "delay", "GB/s", "ns", "cycles");

    for (size_t d = 0; d <= nd; d++) {
        bool idle = d == nd;
        uint32_t started = 0;
        __atomic_store_n(&stream_go, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&stream_stop, 0, __ATOMIC_RELEASE);
        bool running[MAX_STREAMERS] = {0};
        if (!idle) {
            for (uint32_t i = 0; i < have; i++) {
                streamers[i].delay = delays[d];
                streamers[i].started = 0;
                streamers[i].ticks = streamers[i].lines = 0;
                running[i] = plat_start(ids[i], streamer_job, &streamers[i]) == 0;
            }
            /* Let them reach the start line (bounded: 100 ms), then release them together. */
            uint64_t end = timing_rdtsc() + plat_tsc_hz() / 10;
            for (uint32_t i = 0; i < have; i++)
                while (running[i] && !__atomic_load_n(&streamers[i].started, __ATOMIC_ACQUIRE) && timing_rdtsc() < end)
                    timing_pause();
            __atomic_store_n(&stream_go, 1, __ATOMIC_RELEASE);
            /* ... and streaming before the chase starts: the chase above the LLC is short now (a fixed
             * warm-up, docs/latency.md), shorter than a host time slice under emulation. */
            end = timing_rdtsc() + plat_tsc_hz() / 10;
            for (uint32_t i = 0; i < have; i++)
                while (running[i] && __atomic_load_n(&streamers[i].started, __ATOMIC_ACQUIRE) < 2 &&
                       timing_rdtsc() < end)
                    timing_pause();
        }
        struct lat_result r;
        int rc = lat_chase(start, n, true, &reps, &r);
        __atomic_store_n(&stream_stop, 1, __ATOMIC_RELEASE);
        double bps = 0;
        for (uint32_t i = 0; i < have; i++) {
            if (!running[i])
                continue;
            if (plat_wait(ids[i]) != 0)
                continue;
            started++;
            if (streamers[i].ticks)
                bps += (double)streamers[i].lines * 64 * (double)plat_tsc_hz() / (double)streamers[i].ticks;
        }
        char dl_name[16];
        if (idle)
            fmt_snprintf(dl_name, sizeof(dl_name), "idle");
        else
            fmt_snprintf(dl_name, sizeof(dl_name), "%u", delays[d]);
        struct json *j = plat_rec_begin("loaded_latency");
        if (idle)
            json_kv_str(j, "delay", "idle");
        else
            json_kv_uint(j, "delay", delays[d]);
        json_kv_str(j, "delay_unit", "empty loop iterations after each 64-byte read of a streaming CPU");
        json_kv_uint(j, "streamers", started);
        json_kv_double(j, "bytes_per_s", bps);
        json_kv_uint(j, "cpu", self.id);
        json_kv_uint(j, "bytes", w);
        json_kv_uint(j, "stream_bytes", sb);
        char name[LEDGER_NAME_MAX];
        fmt_snprintf(name, sizeof(name), "loaded_latency/%s", dl_name);
        if (rc == CHASE_OK) {
            json_kv_str(j, "status", "ok");
            lat_result_json(j, name, &r);
        } else {
            json_kv_str(j, "status", "failed");
            json_kv_str(j, "reason", "the chase failed (clock)");
            lat_unavailable_json(j, name, "the chase failed (clock)");
        }
        plat_rec_end();
        plat_printf("  %12s %12.3f %10.2f %9.1f\n", dl_name, bps * 1e-9, rc == CHASE_OK ? r.ns : 0.0,
                    rc == CHASE_OK ? r.cycles : 0.0);
    }
    for (uint32_t i = 0; i < have; i++)
        plat_free(&stream_bufs[i]);
    plat_free(&cb);
    lat_scratch_free(&scratch);
    /* The idle point is the Table 2 local_DRAM row again: same chain and working-set rule, CPU 0's node. */
    char third[LEDGER_NAME_MAX]; /* the same chain from numa_latency, CPU 0's node */
    fmt_snprintf(third, sizeof(third), "numa_latency/%d-%d", self.node, self.node);
    crosscheck_figures3("local DRAM latency (loaded-latency idle point vs Table 2 row)", "loaded_latency/idle",
                        "data_source/local_DRAM", third, XC_TOL_DRAM, NULL, NULL);
}
