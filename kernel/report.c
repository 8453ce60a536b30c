/* report.c - the image's run record (around the part the layer above adds) and the machine-description records, each with a human-readable table. */
#include "kernel/report.h"
#include "kernel/kalloc.h"
#include "kernel/kernel.h"
#include "kernel/out.h"
#include "kernel/paging.h"
#include "kernel/run_desc.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "kernel/turbo.h"

/* The run record's description, filled by report_run_begin and finished by report_run_end. */
static struct run_desc run;

struct json *report_run_begin(void)
{
    run = (struct run_desc){
        .version = PMB_VERSION,
        .git = PMB_GITREV,
        .cpu = &K.cpu,
        .tsc_hz = K.time.tsc_hz,
        .tsc_method = K.time.tsc_method,
        .tsc_measured_ref = K.time.measured_ref ? K.time.measured_ref : "none",
        .tsc_measured_hz = K.time.measured_tsc_hz,
        .tsc_spread = K.time.spread,
        .invariant_tsc = K.time.invariant_tsc,
        .core_tsc_ratio = K.time.core_tsc_ratio,
        .core_tsc_method = K.time.core_tsc_method,
        .memory_bytes = K.memory_bytes,
        .cpus = K.cpus,
        .cpus_madt = K.cpus_madt,
        .cpus_note = K.cpus_note ? K.cpus_note : "",
        .numa_nodes = K.acpi_ok ? K.acpi->numa_nodes : 1,
        .quick = K.profile == PROFILE_QUICK,
        .profile_why = K.profile_why,
        .minimal_samples = K.minimal,
        .minimal_samples_why = K.minimal_why,
        .cfg = &K.cfg,
        .cfg_error = K.cfg_error ? K.cfg_err : NULL,
    };
    struct json *j = rec_begin("run");
    run_desc_json_head(j, &run);
    return j;
}

void report_run_end(struct json *j)
{
    time_json(j, &K.time); /* every TSC reference and both core-clock chains (docs/measurement.md) */
    turbo_json(j);         /* "turbo" and "cstates" */
    run_desc_json_tail(j, &run);
    json_key(j, "firmware");
    json_obj_begin(j);
    json_kv_str(j, "kind", K.bi->firmware);
    json_kv_str(j, "vendor", K.bi->fw_vendor);
    json_kv_hex(j, "revision", K.bi->fw_revision);
    json_kv_uint(j, "exit_boot_services_retries", K.bi->exit_retries);
    json_kv_bool(j, "config_file", K.bi->cfg_status == 0);
    json_kv_str(j, "load_options", K.bi->args);
    json_obj_end(j);
    json_key(j, "serial");
    json_obj_begin(j);
    json_kv_str(j, "source", K.serial_source);
    json_kv_str(j, "kind", K.serial.mmio ? "mmio" : "io");
    json_kv_hex(j, "base", K.serial.base);
    json_kv_uint(j, "baud", K.serial.baud);
    json_obj_end(j);
    rec_end();

    kprintf("\nCPU      %s %s (family 0x%x model 0x%x stepping %u) \"%s\"%s%s\n", K.cpu.vendor_str, K.cpu.uarch,
            K.cpu.family, K.cpu.model, K.cpu.stepping, K.cpu.brand, K.cpu.hv_vendor[0] ? " under " : "",
            K.cpu.hv_vendor);
    kprintf("TSC      %.6f GHz via %s (reference %s: %.6f GHz, spread %.2e over %u runs), invariant %s\n",
            (double)K.time.tsc_hz * 1e-9, K.time.tsc_method, K.time.measured_ref,
            (double)K.time.measured_tsc_hz * 1e-9, K.time.spread, K.time.runs, K.time.invariant_tsc ? "yes" : "no");
    kprintf("Clock    core/TSC ratio %.3f via %s\n", K.time.core_tsc_ratio, K.time.core_tsc_method);
    char tl[2 * TURBO_TEXT_MAX];
    turbo_line(tl, sizeof(tl));
    kprintf("Power    %s\n", tl);
    kprintf("Memory   %lu MiB usable, %u NUMA node(s)\n", K.memory_bytes >> 20, K.acpi_ok ? K.acpi->numa_nodes : 1);
    kprintf("CPUs     %u running (MADT lists %u enabled)\n", K.cpus, K.cpus_madt);
    kprintf("Profile  %s (%s)\n", K.profile == PROFILE_QUICK ? "quick" : "full", K.profile_why);
    if (K.minimal)
        kprintf("Samples  minimum only, no convergence loops (%s)\n", K.minimal_why);
    else if (K.minimal_why[0])
        kprintf("Samples  as on hardware (%s)\n", K.minimal_why);
}

static void report_cpu(void)
{
    struct json *j = rec_begin("cpu");
    json_key(j, "identity");
    run_desc_cpu_json(j, &K.cpu);
    json_kv_uint(j, "max_basic_leaf", K.cpu.max_basic);
    json_kv_hex(j, "max_ext_leaf", K.cpu.max_ext);
    json_kv_uint(j, "phys_addr_bits", K.cpu.phys_addr_bits);
    json_kv_str(j, "cache_source", K.cpu.cache_source);
    json_key(j, "features");
    json_arr_begin(j);
    const struct cpu_features *f = &K.cpu.feat;
    const struct {
        const char *n;
        bool v;
    } fl[] = {
        {"sse2", f->sse2}, {"sse4_2", f->sse4_2}, {"avx", f->avx}, {"avx2", f->avx2}, {"avx512f", f->avx512f},
        {"xsave", f->xsave}, {"x2apic", f->x2apic}, {"pdpe1gb", f->pdpe1gb}, {"invariant_tsc", f->invariant_tsc},
        {"aperfmperf", f->aperfmperf}, {"pdcm", f->pdcm}, {"ds", f->ds}, {"dtes64", f->dtes64},
        {"rdtscp", f->rdtscp}, {"hypervisor", f->hypervisor}, {"perfctr_core", f->perfctr_core},
    };
    for (size_t i = 0; i < ARRAY_SIZE(fl); i++)
        if (fl[i].v)
            json_str(j, fl[i].n);
    json_arr_end(j);
    json_kv_hex(j, "xcr0", K.xcr0);
    json_kv_uint(j, "tsc_hz_cpuid", K.cpu.tsc_hz);
    json_kv_str(j, "tsc_hz_cpuid_source", K.cpu.tsc_hz_source);
    json_key(j, "tsc_runs_hz");
    json_arr_begin(j);
    for (uint32_t i = 0; i < K.time.runs; i++)
        json_double(j, K.time.run_hz[i]);
    json_arr_end(j);
    json_kv_double(j, "tsc_window_ms", K.time.window_ms);
    json_kv_double(j, "core_ratio_spread", K.time.core_ratio_spread);
    json_key(j, "caches");
    run_desc_caches_json(j, &K.cpu);
    rec_end();

    kprintf("\nCaches (%s)\n  level type         size KiB  ways  line  sets  shared by\n", K.cpu.cache_source);
    for (uint32_t i = 0; i < K.cpu.n_caches; i++) {
        const struct cpu_cache *c = &K.cpu.caches[i];
        kprintf("  L%-4u %-12s %8lu  %4u  %4u  %4u  %u\n", c->level, cpu_cache_type_name(c->type), c->bytes >> 10,
                c->ways, c->line, c->sets, c->shared_by);
    }
}

static void report_topology(void)
{
    struct json *j = rec_begin("topology");
    json_kv_str(j, "source", K.cpu.topo.source);
    json_kv_uint(j, "smt_bits", K.cpu.topo.smt_bits);
    json_kv_uint(j, "core_bits", K.cpu.topo.core_bits);
    json_kv_uint(j, "threads_per_core", K.cpu.topo.threads_per_core);
    json_kv_uint(j, "cores_per_package", K.cpu.topo.cores_per_package);
    json_kv_uint(j, "bsp_apic_id", K.apic.bsp_id);
    json_kv_str(j, "apic_mode", !K.apic.present ? "none" : K.apic.x2apic ? "x2apic" : "xapic");
    json_key(j, "cpus");
    json_arr_begin(j);
    kprintf("\nTopology (%s): %u thread(s)/core, %u core(s)/package\n  apic_id  package core smt node enabled\n",
            K.cpu.topo.source, K.cpu.topo.threads_per_core, K.cpu.topo.cores_per_package);
    for (uint32_t i = 0; K.acpi_ok && i < K.acpi->cpu_count; i++) {
        const struct acpi_cpu *c = &K.acpi->cpus[i];
        uint32_t pkg, core, smt;
        cpu_topology_split(&K.cpu, c->apic_id, &pkg, &core, &smt);
        json_obj_begin(j);
        json_kv_uint(j, "apic_id", c->apic_id);
        json_kv_uint(j, "package", pkg);
        json_kv_uint(j, "core", core);
        json_kv_uint(j, "smt", smt);
        json_kv_int(j, "node", c->node);
        json_kv_bool(j, "enabled", c->enabled);
        json_kv_bool(j, "x2apic_entry", c->x2apic);
        json_obj_end(j);
        kprintf("  %7u  %7u %4u %3u %4d %s\n", c->apic_id, pkg, core, smt, c->node, c->enabled ? "yes" : "no");
    }
    json_arr_end(j);
    json_kv_uint(j, "numa_nodes", K.acpi_ok ? K.acpi->numa_nodes : 1);
    json_kv_bool(j, "numa_from_srat", K.acpi_ok && K.acpi->numa_from_srat);
    if (K.acpi_ok && K.acpi->slit_present) {
        json_key(j, "slit");
        json_arr_begin(j);
        for (uint32_t a = 0; a < K.acpi->slit_localities; a++) {
            json_arr_begin(j);
            for (uint32_t b = 0; b < K.acpi->slit_localities; b++)
                json_uint(j, K.acpi->slit[a][b]);
            json_arr_end(j);
        }
        json_arr_end(j);
    }
    rec_end();
}

static void report_memory(void)
{
    const struct paging_stats *ps = paging_stats();
    uint32_t nodes = K.acpi_ok ? K.acpi->numa_nodes : 1;
    struct json *j = rec_begin("memory");
    json_kv_uint(j, "usable_bytes", K.memory_bytes);
    json_kv_uint(j, "free_bytes", pmm_free_bytes(K.pmm, -1));
    json_kv_uint(j, "largest_free_2m", pmm_largest_free(K.pmm, -1, PAGE_2M));
    json_key(j, "nodes");
    json_arr_begin(j);
    kprintf("\nMemory\n  node   total MiB    free MiB\n");
    for (uint32_t n = 0; n < nodes; n++) {
        json_obj_begin(j);
        json_kv_uint(j, "node", n);
        json_kv_uint(j, "bytes", pmm_total_bytes(K.pmm, (int)n));
        json_kv_uint(j, "free_bytes", pmm_free_bytes(K.pmm, (int)n));
        json_obj_end(j);
        kprintf("  %4u  %10lu  %10lu\n", n, pmm_total_bytes(K.pmm, (int)n) >> 20, pmm_free_bytes(K.pmm, (int)n) >> 20);
    }
    json_arr_end(j);
    json_kv_uint(j, "uefi_map_entries", K.bi->mmap_count);
    json_key(j, "paging");
    json_obj_begin(j);
    json_kv_hex(j, "mapped_top", ps->mapped_top);
    json_kv_uint(j, "default_page_bytes", ps->default_page);
    json_kv_bool(j, "pages_1g_supported", ps->have_1g);
    json_kv_uint(j, "pages_1g", ps->pages_1g);
    json_kv_uint(j, "pages_2m", ps->pages_2m);
    json_kv_uint(j, "pages_4k", ps->pages_4k);
    json_kv_uint(j, "table_pages", ps->table_pages);
    json_kv_hex(j, "pat", ps->pat);
    json_obj_end(j);
    json_kv_uint(j, "kernel_scratch_used", kalloc_used());
    json_kv_hex(j, "trampoline", K.bi->trampoline);
    rec_end();
    kprintf("  paging: identity map to 0x%lx, default %s pages, PAT 0x%016lx\n", ps->mapped_top,
            ps->default_page == PAGE_1G ? "1 GiB" : "2 MiB", ps->pat);
}

static void report_acpi(void)
{
    struct json *j = rec_begin("acpi");
    json_kv_bool(j, "ok", K.acpi_ok);
    json_kv_uint(j, "rsdp_revision", K.acpi->rsdp_revision);
    json_kv_str(j, "root", K.acpi->root_is_xsdt ? "XSDT" : "RSDT");
    json_key(j, "tables");
    json_arr_begin(j);
    for (uint32_t i = 0; i < K.acpi->table_count; i++) {
        const struct acpi_table *t = &K.acpi->tables[i];
        json_obj_begin(j);
        json_kv_str(j, "sig", t->sig);
        json_kv_hex(j, "phys", t->phys);
        json_kv_uint(j, "length", t->length);
        json_kv_bool(j, "checksum_ok", t->checksum_ok);
        json_kv_bool(j, "parsed", t->parsed);
        if (t->why)
            json_kv_str(j, "problem", t->why);
        json_obj_end(j);
        if (!t->checksum_ok || t->why)
            kprintf("ACPI: table %s at 0x%lx rejected: %s\n", t->sig, t->phys, t->why ? t->why : "bad checksum");
    }
    json_arr_end(j);
    json_kv_bool(j, "pm_timer", K.acpi->fadt.pm_timer.address != 0);
    json_kv_bool(j, "hpet", K.acpi->hpet.present);
    json_kv_bool(j, "spcr", K.acpi->spcr.present);
    json_kv_bool(j, "s5", K.acpi->s5_valid);
    rec_end();
}

/* acpi_dump=1: every table's raw bytes as hex, in chunks that fit a record, so host tests can use the
 * tables of any machine as fixtures (scripts/capture_acpi.py reassembles them). */
#define ACPI_DUMP_CHUNK 4096
static void dump_acpi_tables(void)
{
    static const char hexd[] = "0123456789abcdef";
    static char hex[ACPI_DUMP_CHUNK * 2 + 1];
    for (uint32_t i = 0; i < K.acpi->table_count; i++) {
        const struct acpi_table *t = &K.acpi->tables[i];
        if (!t->checksum_ok || t->length == 0)
            continue;
        const uint8_t *p = (const uint8_t *)(uintptr_t)t->phys;
        for (uint32_t off = 0; off < t->length; off += ACPI_DUMP_CHUNK) {
            uint32_t n = MIN(ACPI_DUMP_CHUNK, t->length - off);
            for (uint32_t k = 0; k < n; k++) {
                hex[2 * k] = hexd[p[off + k] >> 4];
                hex[2 * k + 1] = hexd[p[off + k] & 15];
            }
            hex[2 * n] = 0;
            struct json *j = rec_begin("acpi_table");
            json_kv_str(j, "sig", t->sig);
            json_kv_hex(j, "phys", t->phys);
            json_kv_uint(j, "length", t->length);
            json_kv_uint(j, "offset", off);
            json_kv_str(j, "hex", hex);
            rec_end();
        }
    }
}

static void report_smp(void)
{
    struct json *j = rec_begin("smp");
    json_kv_uint(j, "cpus_listed", smp_cpu_total());
    json_kv_uint(j, "cpus_online", smp_cpu_count());
    json_kv_str(j, "method", "INIT-SIPI-SIPI");
    json_kv_str(j, "apic_mode", K.apic.x2apic ? "x2apic" : "xapic");
    json_kv_hex(j, "trampoline", K.bi->trampoline);
    json_key(j, "cpus");
    json_arr_begin(j);
    for (uint32_t i = 0; i < smp_cpu_total(); i++) {
        const struct smp_cpu *c = smp_cpu(i);
        json_obj_begin(j);
        json_kv_uint(j, "index", c->index);
        json_kv_uint(j, "apic_id", c->apic_id);
        json_kv_int(j, "node", c->node);
        json_kv_uint(j, "package", c->package);
        json_kv_uint(j, "core", c->core);
        json_kv_uint(j, "smt", c->smt);
        json_kv_bool(j, "online", c->online);
        if (c->fail_reason)
            json_kv_str(j, "reason", c->fail_reason);
        json_obj_end(j);
        if (!c->online)
            kprintf("smp: CPU %u (APIC ID %u) not used: %s\n", i, c->apic_id, c->fail_reason);
    }
    json_arr_end(j);
    rec_end();
}

void report_machine(void)
{
    report_cpu();
    report_smp();
    report_topology();
    report_memory();
    if (K.acpi_ok)
        report_acpi();
    if (K.acpi_ok && K.cfg.acpi_dump)
        dump_acpi_tables();
}
