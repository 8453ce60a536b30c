/* selftest.c - prove the #GP/#PF fixup path with instructions that really fault, even under QEMU TCG
 * (which silently accepts unknown MSRs): a reserved-bit write to IA32_PKRS,
 * XSETBV with XCR0.x87 clear, a load from a non-canonical address and from the unmapped page 0. */
#include "kernel/selftest.h"
#include "kernel/extable.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/msr.h"
#include "kernel/out.h"
#include "kernel/paging.h"
#include "kernel/smp.h"

struct check {
    const char *name;
    const char *status; /* ok | failed | skipped */
    const char *detail;
};

static void expect_fault(struct check *c, const char *name, int rc, const char *detail)
{
    c->name = name;
    c->status = rc == MSR_EFAULT ? "ok" : "failed";
    c->detail = rc == MSR_EFAULT ? detail : "instruction did not fault";
}

int selftest_fixups(void)
{
    struct check c[6];
    int n = 0, failed = 0;
    uint64_t v, before = extable_fixups_taken();

    expect_fault(&c[n++], "noncanonical_load", read_u64_safe(0x8000000000000000ULL, &v), "#GP fixed up");
    expect_fault(&c[n++], "null_page_load", read_u64_safe(0, &v), "#PF fixed up");
    if (K.cpu.feat.xsave && K.xcr0)
        expect_fault(&c[n++], "xsetbv_reserved", xsetbv_safe(0, 0), "#GP fixed up (XCR0.x87 must be 1)");
    else
        c[n++] = (struct check){"xsetbv_reserved", "skipped", "no XSAVE"};
    /* IA32_PKRS with bits 63:32 set #GPs on every CPU: reserved bits where PKS exists (SDM Vol. 4
     * Table 2-2), a non-existent MSR elsewhere; QEMU TCG checks those bits too, so this is a really
     * faulting MSR access on every machine we test on. */
    expect_fault(&c[n++], "wrmsr_pkrs_reserved", wrmsr_safe(MSR_IA32_PKRS, IA32_PKRS_RESERVED_BIT32), "#GP fixed up");
    /* A read of an architecturally valid MSR must not fault. */
    int rc = rdmsr_safe(MSR_IA32_APIC_BASE, &v);
    c[n++] = (struct check){"rdmsr_apic_base", rc == MSR_OK ? "ok" : "failed",
                            rc == MSR_OK ? "no fault" : "valid MSR faulted"};
    uint64_t taken = extable_fixups_taken() - before;

    struct json *j = rec_begin("selftest");
    json_kv_str(j, "name", "exception_fixup");
    json_key(j, "checks");
    json_arr_begin(j);
    for (int i = 0; i < n; i++) {
        if (!strcmp(c[i].status, "failed"))
            failed++;
        json_obj_begin(j);
        json_kv_str(j, "name", c[i].name);
        json_kv_str(j, "status", c[i].status);
        json_kv_str(j, "detail", c[i].detail);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_kv_uint(j, "fixups_taken", taken);
    json_kv_str(j, "status", failed ? "failed" : "ok");
    rec_end();
    kprintf("self-test: exception fixups %s (%lu faults fixed up)\n", failed ? "FAILED" : "ok", taken);
    return failed;
}

/* Remap a freshly allocated 2 MiB-aligned buffer with each page size the CPU offers, write a pattern
 * through the new mapping and read it back: proves the per-region page-size choice works. */
int selftest_paging(void)
{
    static const uint64_t sizes[] = {PAGE_4K, PAGE_2M, PAGE_1G};
    uint64_t base;
    int failed = 0;
    struct json *j;
    bool have_1g = paging_stats()->have_1g;
    uint64_t want = have_1g ? PAGE_1G : PAGE_2M * 2;
    if (pmm_alloc_tagged(K.pmm, want, have_1g ? PAGE_1G : PAGE_2M, -1, "selftest paging", &base) != 0) {
        want = PAGE_2M * 2;
        have_1g = false;
        if (pmm_alloc_tagged(K.pmm, want, PAGE_2M, -1, "selftest paging", &base) != 0) {
            j = rec_begin("selftest");
            json_kv_str(j, "name", "paging");
            json_kv_str(j, "status", "unavailable");
            json_kv_str(j, "reason", "no 4 MiB of free contiguous memory");
            rec_end();
            return 0;
        }
    }
    j = rec_begin("selftest");
    json_kv_str(j, "name", "paging");
    json_key(j, "checks");
    json_arr_begin(j);
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        uint64_t ps = sizes[i];
        bool skip = ps == PAGE_1G && !have_1g;
        bool ok = false;
        if (!skip && paging_map(base, want, ps, CACHE_WB) == 0 && paging_page_size(base) == ps &&
            paging_page_size(base + want - 8) == ps) {
            volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)base;
            size_t n = (size_t)(want / 8);
            for (size_t k = 0; k < n; k += 511)
                p[k] = k * 0x9E3779B97F4A7C15ULL;
            ok = true;
            for (size_t k = 0; k < n; k += 511)
                ok &= p[k] == k * 0x9E3779B97F4A7C15ULL;
        }
        if (!skip && !ok)
            failed++;
        json_obj_begin(j);
        json_kv_uint(j, "page_bytes", ps);
        json_kv_str(j, "status", skip ? "skipped" : ok ? "ok" : "failed");
        json_obj_end(j);
    }
    json_arr_end(j);
    json_kv_hex(j, "buffer", base);
    json_kv_uint(j, "bytes", want);
    json_kv_str(j, "status", failed ? "failed" : "ok");
    rec_end();
    /* Back to the default mapping before the memory is handed out again. */
    paging_map(base, want, have_1g ? PAGE_1G : PAGE_2M, CACHE_WB);
    pmm_free(K.pmm, base, want);
    kprintf("self-test: page sizes 4K/2M%s %s\n", have_1g ? "/1G" : "", failed ? "FAILED" : "ok");
    return failed;
}

struct smp_probe {
    uint32_t apic_id;
    uint64_t cr0, cr4;
    double sum; /* exercises SSE on the AP */
};

static void smp_probe_job(void *arg)
{
    struct smp_probe *p = arg;
    uint32_t r[4];
    cpuid_raw(1, 0, r);
    p->apic_id = r[1] >> 24;
    p->cr0 = read_cr0();
    p->cr4 = read_cr4();
    double s = 0;
    for (int i = 1; i <= 100; i++)
        s += 1.0 / (double)i;
    p->sum = s;
}

/* Dispatch a job to every AP: it must run there (its own APIC ID), with caches on and SSE usable. */
int selftest_smp(void)
{
    int failed = 0;
    struct json *j = rec_begin("selftest");
    json_kv_str(j, "name", "smp");
    json_key(j, "checks");
    json_arr_begin(j);
    for (uint32_t i = 1; i < smp_cpu_count(); i++) {
        const struct smp_cpu *c = smp_online(i);
        struct smp_probe p = {0};
        int rc = smp_run_on(c->index, smp_probe_job, &p, SMP_DEFAULT_TIMEOUT_US);
        bool ok = rc == 0 && (p.apic_id == (c->apic_id & 0xFF)) && !(p.cr0 & (CR0_CD | CR0_NW)) &&
                  (p.cr4 & CR4_OSFXSR) && p.sum > 5.18 && p.sum < 5.19;
        failed += !ok;
        json_obj_begin(j);
        json_kv_uint(j, "cpu", c->index);
        json_kv_uint(j, "apic_id", c->apic_id);
        json_kv_str(j, "status", ok ? "ok" : "failed");
        json_kv_str(j, "detail", rc ? "job did not finish" : ok ? "ran on its own CPU, caches on, SSE on" : "wrong CPU state");
        json_obj_end(j);
    }
    json_arr_end(j);
    json_kv_str(j, "status", failed ? "failed" : "ok");
    rec_end();
    kprintf("self-test: job dispatch to %u AP(s) %s\n", smp_cpu_count() - 1, failed ? "FAILED" : "ok");
    return failed;
}
