/* lat_c2c.c - core-to-core transfer latency, MLC style: one CPU places a set of lines (modified, or clean after
 * a write-back), another times one pass of dependent loads over them. */
#include "bench/lat_c2c.h"
#include "bench/lat_common.h"
#include "measure/rand.h"
#include "kernel/fmt.h"
#include "bench/crosscheck.h"
#include "bench/lat_table2.h"

static struct plat_cpu cpus[LAT_C2C_MAX_CPUS];
static double hit_ns[LAT_C2C_MAX_CPUS][LAT_C2C_MAX_CPUS], hitm_ns[LAT_C2C_MAX_CPUS][LAT_C2C_MAX_CPUS];
static bool dead[LAT_C2C_MAX_CPUS];

static void summary(const char *status, const char *reason, uint32_t used, uint32_t total, bool sampled,
                    uint64_t bytes, uint64_t evict_bytes, size_t lines, size_t rounds, uint32_t pairs, uint32_t failed)
{
    struct json *j = plat_rec_begin("c2c_summary");
    json_kv_str(j, "status", status);
    if (reason)
        json_kv_str(j, "reason", reason);
    json_kv_uint(j, "cpus", used);
    json_kv_uint(j, "cpus_total", total);
    json_kv_bool(j, "sampled", sampled);
    json_kv_uint(j, "pairs", pairs);
    json_kv_uint(j, "pairs_failed", failed);
    json_kv_uint(j, "bytes", bytes);
    /* each replicate's lines in a region of their own (bench_c2c) */
    size_t reps = lat_replicates();
    uint64_t bb = lat_rep_buffer_bytes(bytes, reps);
    json_kv_uint(j, "buffer_bytes", bb);
    lat_rep_offsets_json(j, "replicate_offsets", bb, bytes);
    /* and each replicate's HIT placement evicts with a window of its own of the eviction buffer */
    uint64_t eb = lat_rep_buffer_bytes(evict_bytes, reps);
    json_kv_uint(j, "evict_bytes", evict_bytes);
    json_kv_uint(j, "evict_buffer_bytes", eb);
    lat_rep_offsets_json(j, "evict_replicate_offsets", eb, evict_bytes);
    json_kv_uint(j, "lines", lines);
    json_kv_uint(j, "rounds", rounds);
    json_kv_str(j, "hit_method", "from_cpu writes every line, reads twice its L1+L2 elsewhere (write-back), reads "
                                 "the lines again (clean copy); to_cpu times one pass");
    json_kv_str(j, "hitm_method", "from_cpu writes every line (Modified in its caches); to_cpu times one pass");
    plat_rec_end();
}

static void print_matrix(const char *title, double m[][LAT_C2C_MAX_CPUS], uint32_t n)
{
    plat_printf("%s (ns; rows: from CPU that holds the lines, columns: to CPU that reads them)\n", title);
    plat_printf("  %6s", "from\\to");
    for (uint32_t j = 0; j < n; j++)
        plat_printf(" %7u", cpus[j].id);
    plat_printf("\n");
    for (uint32_t i = 0; i < n; i++) {
        plat_printf("  %6u ", cpus[i].id);
        for (uint32_t j = 0; j < n; j++) {
            if (i == j)
                plat_printf(" %7s", "-");
            else if (m[i][j] > 0)
                plat_printf(" %7.1f", m[i][j]);
            else
                plat_printf(" %7s", "fail");
        }
        plat_printf("\n");
    }
}

void bench_c2c(void)
{
    uint32_t total = plat_cpu_count();
    struct cache_sizes c;
    cache_sizes_from_cpuid(plat_cpuinfo(), &c);
    uint64_t w = lat_other_core_bytes(&c); /* the same lines as the Table 2 rows with another core */
    size_t rounds, warm;
    lat_placed_rounds(&rounds, &warm);
    if (plat_config()->quick)
        rounds = 3;
    else
        rounds = 11;

    if (total < 2) {
        summary("unavailable", "one CPU: no pair to measure", total, total, false, w, lat_evict_bytes(&c, 2), 0, rounds,
                0, 0);
        plat_printf("c2c: one CPU, nothing to measure\n");
        return;
    }
    uint32_t idx[LAT_C2C_MAX_CPUS];
    uint32_t n = (uint32_t)lat_pick_cpus(total, LAT_C2C_MAX_CPUS, idx);
    for (uint32_t i = 0; i < n; i++) {
        plat_cpu(idx[i], &cpus[i]);
        dead[i] = false;
    }
    bool sampled = n < total;

    struct plat_buf lb = {0}, eb = {0};
    struct lat_scratch scratch = {0};
    struct lat_lines lines;
    uint64_t s = plat_config()->seed ^ 0xc2c, lines_seed = splitmix64_next(&s);
    uint64_t evb = lat_evict_bytes(&c, 2);
    /* A fresh line set per replicate: each replicate's lines in a region of their own, a large page or more
     * apart (lat_placed.lines_buf_bytes; docs/measurement.md "Replicates"). */
    uint64_t lbb = lat_rep_buffer_bytes(w, lat_replicates());
    /* And a window of its own of the eviction buffer (lat_placed.evict_base), as the Table 2 placed rows: the
     * HIT placement's write-back reads other memory in every replicate. R x 2 MiB-aligned windows of
     * lat_evict_bytes (twice L1 + L2, at most L3/4): 9 windows of 2.06 MiB in 34 MiB on a 1 MiB-L2 part, 9 of
     * 4.1 MiB in 52 MiB with a 2 MiB L2, where one window took 2-4 MiB. */
    uint64_t ebb = lat_rep_buffer_bytes(evb, lat_replicates());
    if (plat_alloc(&lb, lbb, PLAT_PAGE_LARGEST, cpus[0].node, "c2c lines") != 0 ||
        plat_alloc(&eb, ebb, PLAT_PAGE_LARGEST, -1, "c2c eviction buffer") != 0 ||
        lat_lines_build(&lines, lb.ptr, w, lines_seed, &scratch) != 0) {
        summary("unavailable", "no memory for the lines", n, total, sampled, w, evb, 0, rounds, 0, 0);
        plat_free(&lb);
        plat_free(&eb);
        lat_scratch_free(&scratch);
        return;
    }
    struct lat_evict ev = {.buf = eb.ptr, .bytes = evb, .chunk = lat_evict_chunk(&c, 2)};
    char bt[24];
    plat_printf("c2c: %u of %u CPUs%s, %zu lines (%s), %zu rounds per cell\n", n, total, sampled ? " (evenly sampled)" : "",
                lines.n, lat_bytes_text(w, bt, sizeof(bt)), rounds);

    uint32_t pairs = 0, failed = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < n; j++) {
            if (i == j)
                continue;
            pairs++;
            uint32_t from = cpus[i].id, to = cpus[j].id;
            struct lat_result hit = {0}, hitm = {0};
            uint32_t bad = UINT32_MAX;
            int rc = -1;
            if (!dead[i] && !dead[j]) {
                /* each replicate a fresh permutation of the lines (lat_placed_run) */
                struct lat_placed pm = {.lines = &lines, .n_steps = 1, .measurer = to, .rounds = rounds, .warm = warm,
                                        .lines_buf = lb.ptr, .lines_bytes = w, .seed = lines_seed, .scratch = &scratch,
                                        .lines_buf_bytes = lbb};
                pm.steps[0] = (struct lat_step){LAT_OP_WRITE, from};
                struct lat_placed ph = {.lines = &lines, .evict = &ev, .n_steps = 3, .measurer = to, .rounds = rounds,
                                        .warm = warm, .lines_buf = lb.ptr, .lines_bytes = w, .seed = lines_seed,
                                        .scratch = &scratch, .lines_buf_bytes = lbb, .evict_base = eb.ptr,
                                        .evict_buf_bytes = ebb};
                ph.steps[0] = (struct lat_step){LAT_OP_WRITE, from};
                ph.steps[1] = (struct lat_step){LAT_OP_EVICT, from};
                ph.steps[2] = (struct lat_step){LAT_OP_READ, from};
                rc = lat_placed_run(&pm, &hitm, &bad);
                if (rc == 0)
                    rc = lat_placed_run(&ph, &hit, &bad);
            }
            if (bad == from)
                dead[i] = true;
            else if (bad == to)
                dead[j] = true;
            struct json *jr = plat_rec_begin("c2c");
            json_kv_uint(jr, "from_cpu", from);
            json_kv_uint(jr, "to_cpu", to);
            json_kv_uint(jr, "from_apic_id", cpus[i].apic_id);
            json_kv_uint(jr, "to_apic_id", cpus[j].apic_id);
            json_kv_bool(jr, "same_package", cpus[i].package == cpus[j].package);
            json_kv_bool(jr, "same_core", cpus[i].package == cpus[j].package && cpus[i].core == cpus[j].core);
            json_kv_int(jr, "from_node", cpus[i].node);
            json_kv_int(jr, "to_node", cpus[j].node);
            if (rc == 0) {
                json_kv_str(jr, "status", "ok");
                /* Two figures: each its own object with the shared latency keys (lat_result_json). */
                json_key(jr, "hit");
                json_obj_begin(jr);
                char name[LEDGER_NAME_MAX];
                fmt_snprintf(name, sizeof(name), "c2c/%u-%u/hit", from, to);
                lat_result_json(jr, name, &hit);
                json_obj_end(jr);
                json_key(jr, "hitm");
                json_obj_begin(jr);
                fmt_snprintf(name, sizeof(name), "c2c/%u-%u/hitm", from, to);
                lat_result_json(jr, name, &hitm);
                json_obj_end(jr);
                hit_ns[i][j] = hit.ns;
                hitm_ns[i][j] = hitm.ns;
            } else {
                failed++;
                char why[96];
                if (bad != UINT32_MAX)
                    fmt_snprintf(why, sizeof(why), "CPU %u did not finish its job in time", bad);
                else
                    fmt_snprintf(why, sizeof(why), "%s", dead[i] || dead[j] ? "a CPU of the pair failed earlier" : "the pass did not close");
                json_kv_str(jr, "status", "failed");
                json_kv_str(jr, "reason", why);
                json_kv_null(jr, "hit");
                json_kv_null(jr, "hitm");
                hit_ns[i][j] = hitm_ns[i][j] = 0;
            }
            json_kv_uint(jr, "lines", lines.n);
            json_kv_uint(jr, "rounds", rounds);
            plat_rec_end();
        }
    }
    plat_free(&lb);
    plat_free(&eb);
    lat_scratch_free(&scratch);
    summary(failed ? "partial" : "ok", failed ? "some pairs failed (see their c2c records)" : NULL, n, total, sampled, w,
            evb, lines.n, rounds, pairs, failed);
    print_matrix("c2c HIT: clean line last read by the other CPU", hit_ns, n);
    print_matrix("c2c HITM: line last written by the other CPU", hitm_ns, n);

    /* The pair the Table 2 rows used (helper -> measuring CPU) measures the same two quantities. */
    uint32_t self, helper;
    if (lat_table2_helper(&self, &helper)) {
        /* The third measurement: PEBS load latency of the row's own loads (latency benchmark, where load-latency
         * PEBS is armed). The matrix's other pairs are no third: they use c2c's own method. */
        char a[LEDGER_NAME_MAX];
        fmt_snprintf(a, sizeof(a), "c2c/%u-%u/hitm", helper, self);
        crosscheck_figures3("line modified in another core (c2c HITM vs Table 2 row)", a,
                            "data_source/L3_modified_other_core", "pebs_latency/L3_modified_other_core.ns",
                            XC_TOL_LATENCY, NULL, NULL);
        fmt_snprintf(a, sizeof(a), "c2c/%u-%u/hit", helper, self);
        crosscheck_figures3("line shared with another core (c2c HIT vs Table 2 row)", a,
                            "data_source/L3_shared_other_core", "pebs_latency/L3_shared_other_core.ns",
                            XC_TOL_LATENCY, NULL, NULL);
    } else {
        plat_printf("  (no c2c cross-check: the Table 2 rows did not run with a helper core)\n");
    }
}
