/* test_bw_smbios.c - SMBIOS entry points (2.1 and 3.0) and type 17 decoding from hand-built tables, including
 * malformed ones, and the theoretical peak. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "bench/bw_smbios.h"

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v), put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v), put32(p + 4, (uint32_t)(v >> 32)); }

static void fix_checksum(uint8_t *p, size_t n, size_t at)
{
    uint8_t s = 0;
    p[at] = 0;
    for (size_t i = 0; i < n; i++)
        s = (uint8_t)(s + p[i]);
    p[at] = (uint8_t)(0x100 - s);
}

static void test_entry_points(void **state)
{
    (void)state;
    struct smbios_entry e;
    /* 3.0: "_SM3_", length 0x18, version 3.3, table max 0x1234 at 0x7f000000 */
    uint8_t v3[0x18] = {'_', 'S', 'M', '3', '_', 0, 0x18, 3, 3, 0, 1};
    put32(v3 + 0x0C, 0x1234);
    put64(v3 + 0x10, 0x7f000000);
    fix_checksum(v3, sizeof(v3), 5);
    assert_int_equal(smbios_entry_parse(v3, sizeof(v3), &e), SMBIOS_OK);
    assert_true(e.v3 && e.major == 3 && e.minor == 3);
    assert_true(e.table_phys == 0x7f000000 && e.table_len == 0x1234);
    v3[0x10] ^= 1; /* checksum no longer holds */
    assert_int_equal(smbios_entry_parse(v3, sizeof(v3), &e), SMBIOS_ECHECKSUM);
    v3[0x10] ^= 1;
    assert_int_equal(smbios_entry_parse(v3, 0x10, &e), SMBIOS_ELEN); /* fewer bytes than it claims */

    /* 2.1: "_SM_", length 0x1F, 2.8, "_DMI_", table 0x200 bytes at 0xE0000 */
    uint8_t v2[0x1F] = {'_', 'S', 'M', '_', 0, 0x1F, 2, 8};
    memcpy(v2 + 0x10, "_DMI_", 5);
    put16(v2 + 0x16, 0x200);
    put32(v2 + 0x18, 0xE0000);
    fix_checksum(v2 + 0x10, 0x0F, 5);
    fix_checksum(v2, sizeof(v2), 4);
    assert_int_equal(smbios_entry_parse(v2, sizeof(v2), &e), SMBIOS_OK);
    assert_true(!e.v3 && e.major == 2 && e.minor == 8 && e.table_phys == 0xE0000 && e.table_len == 0x200);
    v2[0x12] = 'X'; /* intermediate anchor broken; fix the outer checksum so only the anchor is wrong */
    fix_checksum(v2, sizeof(v2), 4);
    assert_int_equal(smbios_entry_parse(v2, sizeof(v2), &e), SMBIOS_EANCHOR);

    uint8_t junk[32] = "_SX3_ not an entry point";
    assert_int_equal(smbios_entry_parse(junk, sizeof(junk), &e), SMBIOS_EANCHOR);
    assert_int_equal(smbios_entry_parse(NULL, 32, &e), SMBIOS_EINVAL);
    uint8_t tiny[6] = {'_', 'S', 'M', '3', '_', 0};
    assert_int_equal(smbios_entry_parse(tiny, sizeof(tiny), &e), SMBIOS_ELEN);
}

/* Table builder. */
struct tb {
    uint8_t b[2048];
    size_t n;
};

static void add(struct tb *t, uint8_t type, uint8_t len, uint16_t handle, const uint8_t *body, const char *strings)
{
    uint8_t *s = t->b + t->n;
    memset(s, 0, len);
    s[0] = type, s[1] = len;
    put16(s + 2, handle);
    if (body)
        memcpy(s + 4, body + 4, len - 4);
    t->n += len;
    if (strings && *strings) {
        /* strings: "A\0B\0" given as "A|B" */
        for (const char *p = strings; *p; p++)
            t->b[t->n++] = *p == '|' ? 0 : (uint8_t)*p;
        t->b[t->n++] = 0;
    } else {
        t->b[t->n++] = 0;
    }
    t->b[t->n++] = 0;
}

/* A 3.3-size type 17 (0x5C bytes). */
static void t17(uint8_t *s, uint16_t data_width, uint16_t size, uint16_t speed, uint16_t conf, uint8_t type)
{
    memset(s, 0, 0x5C);
    put16(s + 0x08, 72);
    put16(s + 0x0A, data_width);
    put16(s + 0x0C, size);
    s[0x10] = 1; /* device locator: string 1 */
    s[0x11] = 2; /* bank locator: string 2 */
    s[0x12] = type;
    put16(s + 0x15, speed);
    put16(s + 0x20, conf);
}

static void test_type17_walk(void **state)
{
    (void)state;
    struct tb t = {.n = 0};
    uint8_t body[0x5C];
    add(&t, 0, 0x18, 0, NULL, "vendor|1.0"); /* BIOS info, skipped */
    t17(body, 64, 16384, 3200, 2933, 0x1A);
    add(&t, 17, 0x5C, 0x11, body, "DIMM_A1|BANK 0");
    t17(body, 64, 0, 0, 0, 0x02); /* empty slot */
    add(&t, 17, 0x5C, 0x12, body, "DIMM_A2|BANK 1");
    t17(body, 64, 0x7FFF, 0xFFFF, 0xFFFF, 0x22); /* extended size and speeds */
    put32(body + 0x1C, 65536);
    put32(body + 0x54, 70000);
    put32(body + 0x58, 0x80000000u | 64000); /* bit 31 is reserved: ignored */
    add(&t, 17, 0x5C, 0x13, body, "DIMM_B1"); /* bank locator names string 2, which is missing */
    t17(body, 0xFFFF, 0x8000 | 512, 800, 0, 0x18); /* KB granularity, unknown width */
    add(&t, 17, 0x22, 0x14, body, NULL); /* 2.7 length, no strings */
    add(&t, 127, 4, 0xFFFF, NULL, NULL);
    add(&t, 17, 0x5C, 0x15, body, "after the end");

    struct smbios_mem m;
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_true(m.ended);
    assert_int_equal(m.structures, 6);
    assert_int_equal(m.devices, 4);
    assert_int_equal(m.populated, 3);
    assert_int_equal(m.kept, 4);
    assert_true(m.dimm[0].size_bytes == 16384ull << 20);
    assert_int_equal(m.dimm[0].data_width, 64);
    assert_int_equal(m.dimm[0].speed_mts, 3200);
    assert_int_equal(m.dimm[0].configured_mts, 2933);
    assert_string_equal(m.dimm[0].locator, "DIMM_A1");
    assert_string_equal(m.dimm[0].bank, "BANK 0");
    assert_string_equal(smbios_mem_type_name(m.dimm[0].type), "ddr4");
    assert_true(m.dimm[1].size_bytes == 0 && !m.dimm[1].size_unknown);
    assert_true(m.dimm[2].size_bytes == 65536ull << 20);
    assert_int_equal(m.dimm[2].speed_mts, 70000);
    assert_int_equal(m.dimm[2].configured_mts, 64000);
    assert_string_equal(m.dimm[2].bank, "");
    assert_true(m.dimm[3].size_bytes == 512ull << 10);
    assert_int_equal(m.dimm[3].data_width, 0);
    assert_int_equal(m.dimm[3].speed_mts, 800);
    assert_string_equal(m.dimm[3].locator, "");

    struct smbios_peak pk;
    const char *why;
    assert_true(smbios_peak(&m, &pk, &why));
    /* 2933 MT/s x 8 B + 64000 MT/s x 8 B; the 4th has no width */
    assert_true(pk.bytes_per_s == (2933.0 + 64000.0) * 1e6 * 8);
    assert_int_equal(pk.dimms, 2);
    assert_int_equal(pk.mts, 2933);
    assert_non_null(strstr(pk.method, "configured"));
}

static void test_peak_fallbacks(void **state)
{
    (void)state;
    struct smbios_mem m = {0};
    struct smbios_peak pk;
    const char *why;
    assert_false(smbios_peak(&m, &pk, &why));
    assert_non_null(strstr(why, "no memory devices"));
    m.devices = m.kept = 1;
    m.dimm[0] = (struct smbios_dimm){.size_bytes = 0};
    assert_false(smbios_peak(&m, &pk, &why));
    assert_non_null(strstr(why, "no populated"));
    /* QEMU: populated, width 64, speeds 0 (unknown) */
    m.dimm[0] = (struct smbios_dimm){.size_bytes = 1ull << 30, .data_width = 64};
    assert_false(smbios_peak(&m, &pk, &why));
    assert_non_null(strstr(why, "speed and a data width"));
    assert_true(pk.bytes_per_s == 0);
    /* configured speed missing: the maximum speed, and the method says so */
    m.dimm[0].speed_mts = 1333;
    assert_true(smbios_peak(&m, &pk, &why));
    assert_true(pk.bytes_per_s == 1333e6 * 8);
    assert_non_null(strstr(pk.method, "max-capable"));
    assert_false(smbios_peak(NULL, &pk, &why));
}

static void test_malformed_tables(void **state)
{
    (void)state;
    struct smbios_mem m;
    uint8_t body[0x5C];
    struct tb t = {.n = 0};
    t17(body, 64, 1024, 1600, 1600, 0x18);
    add(&t, 17, 0x5C, 1, body, "X|Y");
    /* cut inside the string set: decoded nothing after the cut, error */
    assert_int_equal(smbios_mem_parse(t.b, t.n - 2, &m), SMBIOS_ETRUNC);
    assert_int_equal(m.devices, 0);
    /* cut inside the formatted area */
    assert_int_equal(smbios_mem_parse(t.b, 0x30, &m), SMBIOS_ETRUNC);
    /* a header claiming length 2 */
    uint8_t bad[8] = {17, 2, 0, 0, 0, 0, 0, 0};
    assert_int_equal(smbios_mem_parse(bad, sizeof(bad), &m), SMBIOS_ETRUNC);
    /* no end marker: walks to len and says so */
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_false(m.ended);
    assert_int_equal(m.devices, 1);
    /* a good device, then garbage: the good one is kept */
    memset(t.b + t.n, 0xFF, 3);
    assert_int_equal(smbios_mem_parse(t.b, t.n + 3, &m), SMBIOS_ETRUNC);
    assert_int_equal(m.devices, 1);
    assert_int_equal(smbios_mem_parse(t.b, 0, &m), SMBIOS_OK);
    assert_int_equal(smbios_mem_parse(NULL, 10, &m), SMBIOS_EINVAL);
    /* a short (2.1-size, 0x15) type 17 has no speed: unknown, not garbage */
    struct tb s = {.n = 0};
    t17(body, 64, 1024, 1600, 1600, 0x18);
    add(&s, 17, 0x15, 2, body, "L|B");
    assert_int_equal(smbios_mem_parse(s.b, s.n, &m), SMBIOS_OK);
    assert_int_equal(m.dimm[0].speed_mts, 0);
    assert_int_equal(m.dimm[0].configured_mts, 0);
    assert_string_equal(m.dimm[0].locator, "L");

    /* strings with control bytes are made printable, long ones cut */
    char dst[8];
    uint8_t st[] = {17, 4, 0, 0, 'a', 1, 'b', 'c', 'd', 'e', 'f', 'g', 'h', 0, 0};
    smbios_string(st, st + sizeof(st), 1, dst, sizeof(dst));
    assert_string_equal(dst, "a?bcdef");
    smbios_string(st, st + sizeof(st), 2, dst, sizeof(dst));
    assert_string_equal(dst, "");
}

static void test_many_devices_kept_bounded(void **state)
{
    (void)state;
    static uint8_t big[(SMBIOS_MAX_DIMMS + 10) * 0x20];
    size_t n = 0;
    for (int i = 0; i < SMBIOS_MAX_DIMMS + 10; i++) {
        uint8_t *s = big + n;
        memset(s, 0, 0x1E);
        s[0] = 17, s[1] = 0x1C;
        put16(s + 0x0A, 64);
        put16(s + 0x0C, 1024);
        put16(s + 0x15, 2400);
        n += 0x1C + 2;
    }
    struct smbios_mem m;
    assert_int_equal(smbios_mem_parse(big, n, &m), SMBIOS_OK);
    assert_int_equal(m.devices, SMBIOS_MAX_DIMMS + 10);
    assert_int_equal(m.kept, SMBIOS_MAX_DIMMS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_points),
        cmocka_unit_test(test_type17_walk),
        cmocka_unit_test(test_peak_fallbacks),
        cmocka_unit_test(test_malformed_tables),
        cmocka_unit_test(test_many_devices_kept_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
