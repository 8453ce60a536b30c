/* test_run_desc.c - the run record's machine description: the keys the image and the hosted runner each write, in order, through one writer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kernel/run_desc.h"

static struct cpu_info cpu;
static struct config cfg;
static char buf[16384];

static void fill_cpu(void)
{
    memset(&cpu, 0, sizeof(cpu));
    snprintf(cpu.vendor_str, sizeof(cpu.vendor_str), "GenuineIntel");
    cpu.family = 6;
    cpu.model = 0x1A;
    cpu.stepping = 5;
    cpu.signature = 0x106a5;
    snprintf(cpu.brand, sizeof(cpu.brand), "Test CPU");
    cpu.uarch = "Nehalem";
    cpu.n_caches = 1;
    cpu.caches[0] = (struct cpu_cache){.level = 2, .type = CPU_CACHE_UNIFIED, .bytes = 262144, .ways = 8,
                                       .line = 64, .sets = 512, .shared_by = 2};
}

/* Writes the record as the program would: head, its own "pmu" object, tail. */
static const char *write(const struct run_desc *d)
{
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    run_desc_json_head(&j, d);
    json_kv_str(&j, "pmu", "here");
    run_desc_json_tail(&j, d);
    json_close_all(&j);
    assert_false(j.overflow);
    return buf;
}

/* The keys of the top-level object, in order, joined by ','. */
static const char *keys(const char *s, char *out, size_t len)
{
    int depth = 0;
    size_t o = 0;
    bool in_str = false, want_key = false;
    const char *key = NULL;
    out[0] = 0;
    for (const char *p = s; *p; p++) {
        if (in_str) {
            if (*p == '\\')
                p++;
            else if (*p == '"') {
                in_str = false;
                if (key && p[1] == ':' && depth == 1)
                    o += (size_t)snprintf(out + o, len - o, "%s%.*s", o ? "," : "", (int)(p - key), key);
                key = NULL;
            }
            continue;
        }
        if (*p == '"') {
            in_str = true;
            key = want_key ? p + 1 : NULL;
            want_key = false;
        } else if (*p == '{' || *p == '[') {
            depth++;
            want_key = *p == '{';
        } else if (*p == '}' || *p == ']') {
            depth--;
        } else if (*p == ',') {
            want_key = true;
        }
    }
    return out;
}

static void test_image_keys(void **state)
{
    (void)state;
    fill_cpu();
    config_defaults(&cfg);
    struct run_desc d = {.version = "1.2.3", .git = "abc", .cpu = &cpu, .tsc_hz = 2000000000, .tsc_method = "cpuid",
                         .tsc_measured_ref = "hpet", .tsc_measured_hz = 1999999000, .tsc_spread = 1e-5,
                         .invariant_tsc = true, .core_tsc_ratio = 1.5, .core_tsc_method = "aperf_mperf",
                         .memory_bytes = 1 << 30, .cpus = 2, .cpus_madt = 2, .cpus_note = "answered SIPI",
                         .numa_nodes = 1, .quick = true, .profile_why = "auto",
                         .minimal_samples = true, .minimal_samples_why = "QEMU TCG", .cfg = &cfg};
    char k[1024];
    const char *s = write(&d);
    assert_string_equal(keys(s, k, sizeof(k)),
                        "version,git,cpu,tsc_hz,tsc_method,tsc_measured_hz,tsc_measured_ref,tsc_spread,invariant_tsc,"
                        "core_tsc_ratio,core_tsc_method,memory_bytes,cpus,cpus_madt,cpus_note,numa_nodes,caches,pmu,"
                        "profile,profile_why,minimal_samples,minimal_samples_why,config");
    assert_non_null(strstr(s, "\"minimal_samples\":true,\"minimal_samples_why\":\"QEMU TCG\""));
    assert_non_null(strstr(s, "\"cpu\":{\"vendor\":\"GenuineIntel\",\"family\":6,\"model\":26,\"stepping\":5,"
                              "\"signature\":\"0x106a5\",\"brand\":\"Test CPU\",\"uarch\":\"Nehalem\",\"hypervisor\":\"\"}"));
    assert_non_null(strstr(s, "\"caches\":[{\"level\":2,\"type\":\"unified\",\"bytes\":262144,\"ways\":8,\"line\":64,"
                              "\"sets\":512,\"shared_by\":2}]"));
    assert_non_null(strstr(s, "\"profile\":\"quick\""));
    assert_non_null(strstr(s, "\"config\":{\""));
    assert_null(strstr(s, "\"hosted\""));
}

static void test_hosted_keys_and_config_error(void **state)
{
    (void)state;
    fill_cpu();
    struct run_desc d = {.version = "1.2.3", .git = "abc", .platform = "linux", .os = "Linux 6.1", .cpu = &cpu,
                         .tsc_hz = 2000000000, .tsc_method = "clock_monotonic_raw", .core_tsc_ratio = 1,
                         .core_tsc_method = "crc32_chain", .cpus = 4, .cpus_allowed = 8, .numa_nodes = 2,
                         .profile_why = "config", .cfg_error = "bad value for 'bench'"};
    char k[1024];
    const char *s = write(&d);
    assert_string_equal(keys(s, k, sizeof(k)),
                        "version,git,platform,hosted,os,cpu,tsc_hz,tsc_method,tsc_spread,invariant_tsc,core_tsc_ratio,"
                        "core_tsc_method,memory_bytes,cpus,cpus_allowed,numa_nodes,caches,pmu,profile,profile_why,minimal_samples,"
                        "config");
    assert_non_null(strstr(s, "\"minimal_samples\":false,\"config\""));
    /* samples=normal: not minimal, and the why is written all the same (it says the user chose) */
    d.minimal_samples_why = "config: samples=normal";
    s = write(&d);
    assert_non_null(strstr(s, "\"minimal_samples\":false,\"minimal_samples_why\":\"config: samples=normal\",\"config\""));
    d.minimal_samples_why = "";
    s = write(&d);
    assert_non_null(strstr(s, "\"minimal_samples\":false,\"config\""));
    assert_non_null(strstr(s, "\"platform\":\"linux\",\"hosted\":true,\"os\":\"Linux 6.1\""));
    assert_non_null(strstr(s, "\"profile\":\"full\""));
    assert_non_null(strstr(s, "\"config\":{\"error\":\"bad value for 'bench'\"}"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_image_keys),
        cmocka_unit_test(test_hosted_keys_and_config_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
