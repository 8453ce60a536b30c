/* test_pmu_pebs.c - DS save area and PEBS records built byte-for-byte from the documented layouts.
 *
 * Offsets are typed in from [NHM] Table 15 / Figure 11 (and the SDM's format 2/3 extensions), not
 * taken from pmu/pebs.h, so a wrong constant there fails here. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pmu/ds.h"
#include "pmu/pebs.h"

static void put64(uint8_t *buf, size_t off, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        buf[off + i] = (uint8_t)(v >> (8 * i)); /* little-endian, as the hardware writes it */
}

static uint64_t get64(const uint8_t *buf, size_t off)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)buf[off + i] << (8 * i);
    return v;
}

/* A Nehalem (format 1) record: [NHM] Table 15. */
static void build_fmt1(uint8_t *r, uint64_t ip, uint64_t dla, uint64_t dse, uint64_t lat)
{
    memset(r, 0xee, 0xb0);
    put64(r, 0x00, 0x246);          /* R/EFLAGS */
    put64(r, 0x08, ip);             /* R/EIP */
    for (unsigned i = 0; i < 16; i++) /* RAX at 0x10 ... R15 at 0x88 */
        put64(r, 0x10 + 8 * i, 0x1000 + i);
    put64(r, 0x90, 0x1);            /* IA32_PERF_GLOBAL_STATUS: PMC0 overflowed */
    put64(r, 0x98, dla);            /* Data Linear Address */
    put64(r, 0xa0, dse);            /* Data Source Encoding */
    put64(r, 0xa8, lat);            /* Latency Value (core cycles) */
}

static void test_ds_area_layout(void **state)
{
    (void)state;
    uint8_t raw[0xa0];
    struct ds_area ds;
    /* [NHM] Figure 11 / 3.8.2, 64-bit DS area: each field 8 bytes, in this order */
    static const uint64_t vals[] = {0x1000, 0x1018, 0x2000, 0x1f00, 0x3000, 0x30b0, 0x4000, 0x3800,
                                    0xfffffffffc18ULL, 0xffff00000000ULL, 0x2, 0x3};
    memset(raw, 0, sizeof(raw));
    for (unsigned i = 0; i < 12; i++)
        put64(raw, 8 * i, vals[i]);
    memcpy(&ds, raw, sizeof(ds));
    assert_int_equal(ds.bts_buffer_base, 0x1000);
    assert_int_equal(ds.bts_index, 0x1018);
    assert_int_equal(ds.bts_absolute_maximum, 0x2000);
    assert_int_equal(ds.bts_interrupt_threshold, 0x1f00);
    assert_int_equal(ds.pebs_buffer_base, 0x3000);
    assert_int_equal(ds.pebs_index, 0x30b0);
    assert_int_equal(ds.pebs_absolute_maximum, 0x4000);
    assert_int_equal(ds.pebs_interrupt_threshold, 0x3800);
    assert_int_equal(ds.pebs_counter_reset[0], 0xfffffffffc18ULL); /* 0x40 */
    assert_int_equal(ds.pebs_counter_reset[1], 0xffff00000000ULL); /* 0x48 */
    assert_int_equal(ds.pebs_counter_reset[2], 0x2);               /* 0x50 */
    assert_int_equal(ds.pebs_counter_reset[3], 0x3);               /* 0x58 */
    assert_int_equal(sizeof(struct ds_area), 0xa0);
}

static void test_ds_setup(void **state)
{
    (void)state;
    struct ds_area ds;
    uint8_t raw[sizeof(ds)];
    memset(&ds, 0xa5, sizeof(ds));
    /* 10 whole records and 5 spare bytes: the maximum is the first byte past record 10 */
    assert_int_equal(ds_setup_pebs(&ds, 0x100000, 10 * 0xb0 + 5, 0xb0, 4), 0);
    memcpy(raw, &ds, sizeof(ds));
    assert_int_equal(get64(raw, 0x20), 0x100000);              /* PEBS Buffer Base */
    assert_int_equal(get64(raw, 0x28), 0x100000);              /* PEBS Index = base */
    assert_int_equal(get64(raw, 0x30), 0x100000 + 10 * 0xb0);  /* PEBS Abs Max */
    assert_int_equal(get64(raw, 0x38), 0x100000 + 4 * 0xb0);   /* PEBS Int Thresh */
    assert_int_equal(get64(raw, 0x40), 0);                     /* resets cleared */
    assert_true(ds.pebs_interrupt_threshold <= ds.pebs_absolute_maximum);
    /* threshold 0 or beyond the buffer: the maximum (never past it) */
    assert_int_equal(ds_setup_pebs(&ds, 0x100000, 10 * 0xb0, 0xb0, 0), 0);
    assert_int_equal(ds.pebs_interrupt_threshold, ds.pebs_absolute_maximum);
    assert_int_equal(ds_setup_pebs(&ds, 0x100000, 10 * 0xb0, 0xb0, 11), 0);
    assert_int_equal(ds.pebs_interrupt_threshold, ds.pebs_absolute_maximum);
    /* interrupt per record ([NHM] 3.5.3: threshold = the second record) */
    assert_int_equal(ds_setup_pebs(&ds, 0x100000, 10 * 0xb0, 0xb0, 1), 0);
    assert_int_equal(ds.pebs_interrupt_threshold, 0x100000 + 0xb0);
    /* hostile */
    assert_int_equal(ds_setup_pebs(&ds, 0x100004, 0x1000, 0xb0, 0), -1);  /* misaligned */
    assert_int_equal(ds_setup_pebs(&ds, 0x100000, 0xaf, 0xb0, 0), -1);    /* no whole record */
    assert_int_equal(ds_setup_pebs(&ds, 0x100000, 0x1000, 0, 0), -1);
    assert_int_equal(ds_setup_pebs(&ds, 0x100000, 0x1000, 0xb1, 0), -1);
    assert_int_equal(ds_setup_pebs(&ds, UINT64_MAX - 0xf, 0x1000, 0xb0, 0), -1); /* wraps */
    assert_int_equal(ds_setup_pebs(NULL, 0x1000, 0x1000, 0xb0, 0), -1);

    /* BTS: 24-byte records ([NHM] Figure 16), same rules */
    assert_int_equal(ds_setup_bts(&ds, 0x200000, 100 * 24 + 20, 90), 0);
    memcpy(raw, &ds, sizeof(ds));
    assert_int_equal(get64(raw, 0x00), 0x200000);
    assert_int_equal(get64(raw, 0x08), 0x200000);
    assert_int_equal(get64(raw, 0x10), 0x200000 + 100 * 24);
    assert_int_equal(get64(raw, 0x18), 0x200000 + 90 * 24);
}

static void test_counter_reset(void **state)
{
    (void)state;
    struct ds_area ds;
    memset(&ds, 0, sizeof(ds));
    /* sample every 1000 events on a 48-bit counter: 2^48 - 1000, all 48 bits, no sign extension */
    assert_int_equal(ds_set_pebs_reset(&ds, 0, 48, 1000), 0);
    assert_int_equal(ds.pebs_counter_reset[0], 0xfffffffffc18ULL);
    assert_int_equal(ds_set_pebs_reset(&ds, 3, 40, 1), 0);
    assert_int_equal(ds.pebs_counter_reset[3], 0xffffffffffULL);
    assert_int_equal(ds_set_pebs_reset(&ds, 0, 48, 0), -1);
    assert_int_equal(ds_set_pebs_reset(&ds, 0, 48, 1ULL << 47), -1);
    assert_int_equal(ds_set_pebs_reset(&ds, 8, 48, 100), -1);
    assert_int_equal(ds_set_pebs_reset(&ds, 0, 16, 100), -1);
    assert_int_equal(ds_set_pebs_reset(&ds, 0, 65, 100), -1);
}

static void test_decode_formats(void **state)
{
    (void)state;
    uint8_t buf[0xc8];
    struct pebs_record r;

    build_fmt1(buf, 0xffffffff81000123ULL, 0x7fff12345678ULL, 0xa, 250);
    put64(buf, 0xb0, 0xffffffff81000120ULL); /* format 2: Eventing IP */
    put64(buf, 0xb8, 0x100000000ULL);        /* format 2: TX abort information */
    put64(buf, 0xc0, 0x123456789aULL);       /* format 3: TSC */

    assert_int_equal(pebs_decode(buf, 0xb0, 1, &r), 0);
    assert_int_equal(r.flags, 0x246);
    assert_int_equal(r.ip, 0xffffffff81000123ULL);
    assert_int_equal(r.gpr[PEBS_RAX], 0x1000);
    assert_int_equal(r.gpr[PEBS_RSP], 0x1007);
    assert_int_equal(r.gpr[PEBS_R15], 0x100f);
    assert_true(r.has_status);
    assert_int_equal(r.global_status, 1);
    assert_int_equal(r.dla, 0x7fff12345678ULL);
    assert_int_equal(r.dse, 0xa);
    assert_int_equal(r.latency, 250);
    assert_false(r.has_eventing_ip);
    assert_false(r.has_tsc);

    assert_int_equal(pebs_decode(buf, 0x90, 0, &r), 0);
    assert_false(r.has_status);
    assert_int_equal(r.gpr[PEBS_R8], 0x1008);
    assert_int_equal(r.latency, 0);

    assert_int_equal(pebs_decode(buf, 0xc0, 2, &r), 0);
    assert_true(r.has_eventing_ip);
    assert_int_equal(r.eventing_ip, 0xffffffff81000120ULL);
    assert_int_equal(r.tsx, 0x100000000ULL);
    assert_false(r.has_tsc);

    assert_int_equal(pebs_decode(buf, 0xc8, 3, &r), 0);
    assert_true(r.has_tsc);
    assert_int_equal(r.tsc, 0x123456789aULL);

    /* unaligned source buffer is fine */
    uint8_t *odd = malloc(0xb0 + 1);
    memcpy(odd + 1, buf, 0xb0);
    assert_int_equal(pebs_decode(odd + 1, 0xb0, 1, &r), 0);
    assert_int_equal(r.latency, 250);
    free(odd);

    /* hostile: short buffer, unknown formats, NULLs */
    assert_int_equal(pebs_decode(buf, 0xaf, 1, &r), -1);
    assert_int_equal(pebs_decode(buf, 0xc7, 3, &r), -1);
    assert_int_equal(pebs_decode(buf, sizeof(buf), 4, &r), -1);
    assert_int_equal(pebs_decode(NULL, 0xb0, 1, &r), -1);
    assert_int_equal(pebs_decode(buf, 0xb0, 1, NULL), -1);
}

static void test_data_sources(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 16; i++)
        assert_int_equal(pebs_dse_table[i].code, i);
    /* [NHM] Table 16 against Table 2 of the analysis guide */
    assert_int_equal(pebs_dse(0x4)->table2_row, PEBS_T2_L3_UNSHARED);
    assert_int_equal(pebs_dse(0x5)->table2_row, PEBS_T2_L3_SHARED);
    assert_int_equal(pebs_dse(0x6)->table2_row, PEBS_T2_L3_MODIFIED);
    assert_int_equal(pebs_dse(0x8)->table2_row, PEBS_T2_REMOTE_L3);
    assert_int_equal(pebs_dse(0xa)->table2_row, PEBS_T2_LOCAL_DRAM);
    assert_int_equal(pebs_dse(0xc)->table2_row, PEBS_T2_LOCAL_DRAM);
    assert_int_equal(pebs_dse(0xb)->table2_row, PEBS_T2_REMOTE_DRAM);
    assert_int_equal(pebs_dse(0xd)->table2_row, PEBS_T2_REMOTE_DRAM);
    assert_int_equal(pebs_dse(0x1)->table2_row, PEBS_T2_NONE);
    assert_int_equal(pebs_dse(0x3)->table2_row, PEBS_T2_NONE);
    /* rows by the data_source records' names: the reference latencies live in bench/lat_plan.c alone */
    assert_string_equal(pebs_t2_table[PEBS_T2_L3_UNSHARED].row, "L3_unshared");
    assert_string_equal(pebs_t2_table[PEBS_T2_L3_MODIFIED].row, "L3_modified_other_core");
    assert_string_equal(pebs_t2_table[PEBS_T2_REMOTE_DRAM].row, "remote_DRAM");
    /* the encodings the documents disagree on are flagged */
    assert_true(pebs_dse(0x7)->doc_reserved);
    assert_true(pebs_dse(0x9)->doc_reserved);
    assert_true(pebs_dse(0xe)->doc_reserved);
    assert_false(pebs_dse(0x4)->doc_reserved);
    assert_true(pebs_dse(0x0)->l3_miss && pebs_dse(0xd)->l3_miss);
    assert_false(pebs_dse(0x6)->l3_miss);
    /* only bits 3:0 index the table */
    assert_int_equal(pebs_dse(0x1a)->code, 0xa);
    assert_int_equal(pebs_dse(~0ULL)->code, 0xf);
}

/* Data source 07H per model (SDM Vol. 3B Table 18-24 note 1): "LLC Snoop HitM" on 06_2E, reserved on the Xeon
 * 5500/5600 and client parts; every other code the same on all of them. */
static void test_data_sources_per_model(void **state)
{
    (void)state;
    static const unsigned reserved_7[] = {0x1a, 0x1e, 0x1f, 0x25, 0x2c, 0x2f};
    for (size_t m = 0; m < sizeof(reserved_7) / sizeof(reserved_7[0]); m++) {
        const struct pebs_dse_info *d = pebs_dse_model(6, reserved_7[m], 0x7);
        assert_int_equal(d->code, 0x7);
        assert_true(d->doc_reserved);
        assert_int_equal(d->table2_row, PEBS_T2_NONE);
        assert_string_equal(d->name, "reserved_7");
    }
    const struct pebs_dse_info *ex = pebs_dse_model(6, 0x2e, 0x7);
    assert_int_equal(ex->code, 0x7);
    assert_false(ex->doc_reserved);
    assert_false(ex->l3_miss);
    assert_int_equal(ex->table2_row, PEBS_T2_L3_MODIFIED); /* classified as the L3 HITM row, like 06H */
    assert_string_equal(ex->name, "l3_hit_snoop_hitm");
    assert_int_equal(pebs_dse_model(6, 0x2e, 0x17)->code, 0x7); /* bits 3:0 */
    /* Not family 6 model 2EH: the generic table. */
    assert_ptr_equal(pebs_dse_model(0xf, 0x2e, 0x7), pebs_dse(0x7));
    for (unsigned code = 0; code < 16; code++) {
        if (code == 0x7)
            continue;
        for (size_t m = 0; m < sizeof(reserved_7) / sizeof(reserved_7[0]); m++)
            assert_ptr_equal(pebs_dse_model(6, reserved_7[m], code), pebs_dse(code));
        assert_ptr_equal(pebs_dse_model(6, 0x2e, code), pebs_dse(code));
    }
}

static void test_latency_histogram(void **state)
{
    (void)state;
    struct pebs_lat_hist h;
    struct ds_area ds;
    uint8_t buf[3 * 0xb0];

    build_fmt1(buf + 0 * 0xb0, 0x400100, 0x600000, 0x3, 10);
    build_fmt1(buf + 1 * 0xb0, 0x400110, 0x700000, 0xa, 200);
    build_fmt1(buf + 2 * 0xb0, 0x400120, 0x800000, 0xa, 300);
    assert_int_equal(ds_setup_pebs(&ds, 0x10000, sizeof(buf) + 0xb0, 0xb0, 0), 0);
    ds.pebs_index = 0x10000 + 3 * 0xb0; /* as the hardware leaves it after three records */
    assert_int_equal(ds_pebs_count(&ds, 0xb0), 3);

    pebs_hist_init(&h);
    assert_int_equal(pebs_hist_add_buffer(&h, &ds, buf, 1), 3);
    assert_int_equal(h.total, 3);
    assert_int_equal(h.count[0x3], 1);
    assert_int_equal(h.count[0xa], 2);
    assert_int_equal(h.min[0xa], 200);
    assert_int_equal(h.max[0xa], 300);
    assert_true(pebs_hist_mean(&h, 0xa) == 250.0);
    assert_true(pebs_hist_mean(&h, 0x4) == 0.0);
    assert_true(pebs_hist_mean(&h, 16) == 0.0);
    assert_int_equal(h.bucket[0xa][8], 1); /* 200 in [128, 256) */
    assert_int_equal(h.bucket[0xa][9], 1); /* 300 in [256, 512) */
    assert_int_equal(h.bucket[0x3][4], 1); /* 10 in [8, 16) */
    assert_int_equal(pebs_hist_bucket(0), 0);
    assert_int_equal(pebs_hist_bucket(1), 1);
    assert_int_equal(pebs_hist_bucket(UINT64_MAX), PEBS_HIST_BUCKETS - 1);
    pebs_hist_add(&h, 0x1f, 5); /* high bits of dse ignored */
    assert_int_equal(h.count[0xf], 1);

    /* index not on a record boundary / past the maximum / below base */
    ds.pebs_index = 0x10000 + 0xb0 + 8;
    assert_int_equal(ds_pebs_count(&ds, 0xb0), -1);
    assert_int_equal(pebs_hist_add_buffer(&h, &ds, buf, 1), -1);
    ds.pebs_index = ds.pebs_absolute_maximum + 0xb0;
    assert_int_equal(ds_pebs_count(&ds, 0xb0), -1);
    ds.pebs_index = 0x100;
    assert_int_equal(ds_pebs_count(&ds, 0xb0), -1);
    ds.pebs_index = ds.pebs_buffer_base;
    assert_int_equal(pebs_hist_add_buffer(&h, &ds, buf, 1), 0);
    assert_int_equal(pebs_hist_add_buffer(&h, &ds, buf, 0), -1); /* format 0 has no latency */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ds_area_layout),  cmocka_unit_test(test_ds_setup),
        cmocka_unit_test(test_counter_reset),   cmocka_unit_test(test_decode_formats),
        cmocka_unit_test(test_data_sources),    cmocka_unit_test(test_latency_histogram),
        cmocka_unit_test(test_data_sources_per_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
