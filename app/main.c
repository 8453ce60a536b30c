/* main.c - app_main, the composition root: wires the PMU and the benchmarks to the machine kernel_main took over, in the run's order. */
#include "kernel/kernel.h"
#include "kernel/fmt.h"
#include "kernel/out.h"
#include "kernel/paging.h"
#include "kernel/report.h"
#include "kernel/selftest.h"
#include "bench/bandwidth.h"
#include "bench/bench.h"
#include "bench/bw_smbios.h"
#include "pmu/pmu.h"
#include "pmu/pmu_init.h"

/*
 * app/ is the only folder that sees every other one (docs/design.md, scripts/check_layers.py): kernel/ knows
 * nothing above it, pmu/ never includes bench/, and bench/ calls pmu/ through pmu/pmu_bench_api.h at link
 * time. What needs more than one layer at start-up (the run record's PMU part, the SMBIOS table the kernel's
 * boot info points at) is done here, once.
 */

/* The SMBIOS entry points boot/ found (UEFI: the configuration table; BIOS: the Multiboot2 tag or the legacy
 * 0xF0000 scan; K.bi->smbios3, then K.bi->smbios),
 * read through the identity map when what they point to lies inside it, handed to the bandwidth benchmark
 * for its theoretical peak. */
static bool identity_mapped(uint64_t phys, uint64_t len)
{
    return phys >= PAGE_4K && len && phys + len > phys && phys + len <= paging_stats()->mapped_top;
}

static void smbios_handover(void)
{
    const uint64_t eps[2] = {K.bi->smbios3, K.bi->smbios};
    for (int i = 0; i < 2; i++) {
        struct smbios_entry e;
        if (!eps[i] || !identity_mapped(eps[i], 32) || smbios_entry_parse((const void *)(uintptr_t)eps[i], 32, &e))
            continue;
        if (!identity_mapped(e.table_phys, e.table_len))
            continue;
        static char source[48]; /* kept by the benchmark */
        fmt_snprintf(source, sizeof(source), "%s: SMBIOS %s entry point", K.bi->firmware[0] ? K.bi->firmware : "uefi",
                     e.v3 ? "3.x" : "2.x");
        bandwidth_set_smbios((const void *)(uintptr_t)e.table_phys, e.table_len, source);
        return;
    }
}

enum run_status app_main(void)
{
    /* PMU detection before the run record, which carries its summary. */
    pmu_probe();
    struct json *j = report_run_begin();
    json_key(j, "pmu");
    pmu_summary_json(j);
    report_run_end(j);

    if (K.cfg_error) {
        kprintf("pmubench: config error: %s\n", K.cfg_err);
        rec_message("error", "config", "%s", K.cfg_err);
        return RUN_ERROR;
    }
    char err[320];
    int bad = bench_select(K.cfg.bench, err, sizeof(err));
    if (bad)
        config_blame(&K.cfg, CFG_KEY_BENCH, err, sizeof(err)); /* "pmubench.cfg:2: ..." or "load options: ..." */
    if (bad || bench_configure(K.cfg.sections, K.cfg.sections_len, K.cfg.sections_line, "pmubench.cfg", err,
                               sizeof(err)) != 0) {
        kprintf("pmubench: config error: %s\n", err);
        rec_message("error", "config", "%s", err);
        return RUN_ERROR;
    }
    report_machine();
    selftest_fixups();
    selftest_paging();
    selftest_smp();
    kernel_crash_test(K.cfg.crash_test);
    smbios_handover();
    /* The PMU self-test, once, before any benchmark counts: counting, PEBS and LBR only read its verdicts. */
    pmu_init();
    bench_run_selected();
    return RUN_OK;
}
