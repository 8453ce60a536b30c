/* test_bw_smbios.c - SMBIOS entry points (2.1 and 3.0), type 16/17 decoding from hand-built tables (malformed
 * ones included), the channel parser over vendors' locator strings, and the theoretical peak: channels
 * counted (2 DIMMs per channel are not 2 channels), unknown when the locators name no channel, one DIMM,
 * mixed speeds. */
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
    put32(body + 0x58, 0x80000000u | 64000);       /* bit 31 is reserved: ignored */
    add(&t, 17, 0x5C, 0x13, body, "DIMM_B1");      /* bank locator names string 2, which is missing */
    t17(body, 0xFFFF, 0x8000 | 512, 800, 0, 0x18); /* KB granularity, unknown width */
    add(&t, 17, 0x22, 0x14, body, NULL);           /* 2.7 length, no strings */
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

    /* the 4th populated device has no data width: no peak from a partial list */
    struct smbios_peak pk;
    assert_false(smbios_peak(&m, &pk));
    assert_non_null(strstr(pk.why, "1 of 3 populated devices give no speed or no data width"));
    assert_true(pk.bytes_per_s == 0);
}

static void test_peak_fallbacks(void **state)
{
    (void)state;
    static struct smbios_mem m;
    memset(&m, 0, sizeof(m));
    struct smbios_peak pk;
    assert_false(smbios_peak(&m, &pk));
    assert_non_null(strstr(pk.why, "no memory devices"));
    m.devices = m.kept = 1;
    m.dimm[0] = (struct smbios_dimm){.size_bytes = 0};
    assert_false(smbios_peak(&m, &pk));
    assert_non_null(strstr(pk.why, "no populated"));
    /* QEMU: populated, width 64, speeds 0 (unknown) */
    m.dimm[0] = (struct smbios_dimm){.size_bytes = 1ull << 30, .data_width = 64};
    assert_false(smbios_peak(&m, &pk));
    assert_non_null(strstr(pk.why, "speed and a data width"));
    assert_true(pk.bytes_per_s == 0);
    /* configured speed missing: the maximum speed, and the record says so */
    m.dimm[0].speed_mts = 1333;
    assert_true(smbios_peak(&m, &pk));
    assert_true(pk.bytes_per_s == 1333e6 * 8);
    assert_false(pk.mts_configured);
    assert_false(smbios_peak(NULL, &pk));
    assert_non_null(strstr(pk.why, "no memory devices"));
}

/* ---- channels ---------------------------------------------------------------------------------------------- */

static void expect_channel(const char *bank, const char *loc, const char *ch, int socket, int node, int ctl, int slot,
                           const char *from)
{
    struct smbios_chan_id id;
    assert_true(smbios_channel_parse(bank, loc, &id));
    assert_true(id.ok);
    assert_string_equal(id.channel, ch);
    assert_int_equal(id.socket, socket);
    assert_int_equal(id.node, node);
    assert_int_equal(id.controller, ctl);
    assert_int_equal(id.slot, slot);
    assert_string_equal(id.from, from);
}

static void test_channel_parser(void **state)
{
    (void)state;
    /* Intel clients (Lenovo, Dell, NUC): the channel in the device locator */
    expect_channel("BANK 0", "ChannelA-DIMM0", "A", -1, -1, -1, 0, "device locator");
    expect_channel("BANK 2", "ChannelB-DIMM1", "B", -1, -1, -1, 1, "device locator");
    /* Intel DDR5 / LPDDR: two controllers, each with a channel A */
    expect_channel("BANK 0", "Controller1-ChannelA-DIMM0", "A", -1, -1, 1, 0, "device locator");
    /* AMD desktops and laptops: the channel in the bank locator, the slot in the device locator */
    expect_channel("P0 CHANNEL A", "DIMM 1", "A", 0, -1, -1, 1, "bank locator");
    expect_channel("p0 channel b", "dimm 0", "B", 0, -1, -1, 0, "bank locator"); /* case-insensitive */
    /* AMD EPYC / Supermicro: numbered channel, node, socket; bank wins over the device's DIMM letter */
    expect_channel("P0_Node0_Channel1_Dimm0", "DIMMB1", "1", 0, 0, -1, 0, "bank locator");
    expect_channel("P1_Node0_Channel7_Dimm1", "DIMMH2", "7", 1, 0, -1, 1, "bank locator");
    /* Supermicro Intel: "P1-DIMMA1" is CPU1 channel A slot 1; with an AMI bank string the bank wins */
    expect_channel("", "P1-DIMMA1", "A", 1, -1, -1, 1, "device locator");
    expect_channel("P0_Node0_Channel0_Dimm0", "P1-DIMMA1", "0", 0, 0, -1, 0, "bank locator");
    /* ASUS/MSI/ASRock desktops and Intel/Gigabyte servers: DIMM_<channel letter><slot> */
    expect_channel("BANK 0", "DIMM_A1", "A", -1, -1, -1, 1, "device locator");
    expect_channel("NODE 1", "CPU1_DIMM_B2", "B", 1, 1, -1, 2, "device locator");
    expect_channel("", "DIMM C1", "C", -1, -1, -1, 1, "device locator");

    /* Nothing that names a channel: no guess */
    static const char *none[][2] = {
        {"BANK 0", "DIMM 0"},         /* slot only */
        {"Not Specified", "A1"},      /* Dell PowerEdge: A = CPU 1, not a channel */
        {"", "PROC 1 DIMM 1"},        /* HPE */
        {"Not Specified", "DIMM 12"}, /* Lenovo ThinkSystem */
        {"BANK 2", "SODIMM1"},        /* "DIMM" inside a word */
        {"", "DIMM A"},               /* a letter without a slot number */
        {"SUBCHANNEL A", "Bottom-Slot 1(left)"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        struct smbios_chan_id id;
        assert_false(smbios_channel_parse(none[i][0], none[i][1], &id));
        assert_false(id.ok);
    }
    struct smbios_chan_id id;
    assert_false(smbios_channel_parse(NULL, NULL, &id));
    /* the socket forms */
    assert_true(smbios_channel_parse("SOCKET 3 CHANNEL 2", "", &id) && id.socket == 3 && !strcmp(id.channel, "2"));
    assert_true(smbios_channel_parse("", "PROC 2 DIMM_C1", &id) && id.socket == 2 && !strcmp(id.channel, "C"));
    assert_true(smbios_channel_parse("P2P CHANNEL A", "", &id) && id.socket == -1); /* "P2P" is no socket */
}

// clang-format off: one field per line, as DSP0134 lists them
/* Byte-exact type 16 and SMBIOS 2.8 type 17 (length 28h) structures as firmware writes them: a board with
 * 4 DDR4-3200 DIMMs, two per channel, as dmidecode --dump shows them. */
#define T16_SYSTEM_4_SLOTS                                              \
    0x10, 0x17, 0x00, 0x10,     /* type 16, length 17h, handle 1000h */ \
        0x03,                   /* location: system board */            \
        0x03,                   /* use: system memory */                \
        0x03,                   /* error correction: none */            \
        0x00, 0x00, 0x00, 0x08, /* maximum capacity 128 GiB (in KiB) */ \
        0xFE, 0xFF,             /* no error information */              \
        0x04, 0x00,             /* number of memory devices: 4 */       \
        0, 0, 0, 0, 0, 0, 0, 0, /* extended maximum capacity */         \
        0x00, 0x00              /* no strings */

/* handle, size MB, speed, configured speed; strings 1 "device locator", 2 "bank locator", 3 manufacturer */
#define T17_DDR4(h, size, speed, conf)                                                                        \
    0x11, 0x28, (h)&0xFF, (h) >> 8,        /* type 17, length 28h */                                          \
        0x00, 0x10,                        /* physical memory array handle 1000h */                           \
        0xFE, 0xFF,                        /* no error information */                                         \
        0x48, 0x00,                        /* total width 72 */                                               \
        0x40, 0x00,                        /* data width 64 */                                                \
        (size)&0xFF, (size) >> 8,          /* size, MB */                                                     \
        0x09,                              /* form factor: DIMM */                                            \
        0x00,                              /* device set */                                                   \
        0x01, 0x02,                        /* device locator: string 1, bank locator: string 2 */             \
        0x1A,                              /* memory type: DDR4 */                                            \
        0x80, 0x00,                        /* type detail: synchronous */                                     \
        (speed)&0xFF, (speed) >> 8,        /* speed MT/s */                                                   \
        0x03, 0x00, 0x00, 0x00,            /* manufacturer: string 3; serial, asset tag, part number: none */ \
        0x02,                              /* attributes: 2 ranks */                                          \
        0x00, 0x00, 0x00, 0x00,            /* extended size */                                                \
        (conf)&0xFF, (conf) >> 8,          /* configured memory speed MT/s */                                 \
        0xB0, 0x04, 0xB0, 0x04, 0xB0, 0x04 /* voltages 1.2 V */

static const uint8_t two_per_channel[] = {
    T16_SYSTEM_4_SLOTS,
    T17_DDR4(0x1100, 16384, 3200, 3200),
    'D',
    'I',
    'M',
    'M',
    ' ',
    '0',
    0,
    'P',
    '0',
    ' ',
    'C',
    'H',
    'A',
    'N',
    'N',
    'E',
    'L',
    ' ',
    'A',
    0,
    'S',
    'a',
    'm',
    's',
    'u',
    'n',
    'g',
    0,
    0,
    T17_DDR4(0x1101, 16384, 3200, 3200),
    'D',
    'I',
    'M',
    'M',
    ' ',
    '1',
    0,
    'P',
    '0',
    ' ',
    'C',
    'H',
    'A',
    'N',
    'N',
    'E',
    'L',
    ' ',
    'A',
    0,
    'S',
    'a',
    'm',
    's',
    'u',
    'n',
    'g',
    0,
    0,
    T17_DDR4(0x1102, 16384, 3200, 3200),
    'D',
    'I',
    'M',
    'M',
    ' ',
    '0',
    0,
    'P',
    '0',
    ' ',
    'C',
    'H',
    'A',
    'N',
    'N',
    'E',
    'L',
    ' ',
    'B',
    0,
    'S',
    'a',
    'm',
    's',
    'u',
    'n',
    'g',
    0,
    0,
    T17_DDR4(0x1103, 16384, 3200, 3200),
    'D',
    'I',
    'M',
    'M',
    ' ',
    '1',
    0,
    'P',
    '0',
    ' ',
    'C',
    'H',
    'A',
    'N',
    'N',
    'E',
    'L',
    ' ',
    'B',
    0,
    'S',
    'a',
    'm',
    's',
    'u',
    'n',
    'g',
    0,
    0,
    0x7F,
    0x04,
    0xFF,
    0xFF,
    0,
    0, /* end of table */
};

// clang-format on

static void test_peak_two_dimms_per_channel(void **state)
{
    (void)state;
    static struct smbios_mem m;
    assert_int_equal(smbios_mem_parse(two_per_channel, sizeof(two_per_channel), &m), SMBIOS_OK);
    assert_true(m.ended);
    assert_int_equal(m.devices, 4);
    assert_int_equal(m.populated, 4);
    assert_int_equal(m.arrays, 1);
    assert_int_equal(m.slots, 4);
    assert_int_equal(m.dimm[3].array_handle, 0x1000);
    assert_string_equal(m.dimm[2].locator, "DIMM 0");
    assert_string_equal(m.dimm[2].bank, "P0 CHANNEL B");
    assert_int_equal(m.dimm[1].configured_mts, 3200);
    struct smbios_peak pk;
    assert_true(smbios_peak(&m, &pk));
    /* 4 DIMMs, 2 channels: 2 x 3200 MT/s x 8 B = 51.2 GB/s, not 4 x (102.4) */
    assert_int_equal(pk.dimms, 4);
    assert_int_equal(pk.channels, 2);
    assert_int_equal(pk.max_dimms_per_channel, 2);
    assert_true(pk.bytes_per_s == 2 * 3200e6 * 8);
    assert_int_equal(pk.mts, 3200);
    assert_true(pk.mts_configured);
    assert_int_equal(pk.data_width, 64);
    assert_int_equal(pk.sockets, 1);
    assert_true(pk.per_socket_bytes_per_s == pk.bytes_per_s);
    assert_string_equal(pk.formula, "2 channels x 3200 MT/s x 64 bits / 8");
    assert_non_null(strstr(pk.channel_method, "locator"));
    assert_string_equal(smbios_mem_type_name(pk.type), "ddr4");
}

/* A table of n type 17 devices with the given locators (64-bit, DDR4), speeds per device, and a type 16. */
static void build(struct tb *t, uint16_t slots, size_t n, const char *const *strings, const uint16_t *speed,
                  const uint16_t *conf)
{
    uint8_t body[0x5C];
    t->n = 0;
    uint8_t t16[0x17] = {16, 0x17, 0, 0x10, 0x03, 0x03, 0x03};
    put16(t16 + 0x0D, slots);
    add(t, 16, 0x17, 0x1000, t16, NULL);
    for (size_t i = 0; i < n; i++) {
        t17(body, 64, 8192, speed[i], conf[i], 0x1A);
        add(t, 17, 0x5C, (uint16_t)(0x1100 + i), body, strings[i]);
    }
    add(t, 127, 4, 0xFFFF, NULL, NULL);
}

static void test_peak_unknown_locators(void **state)
{
    (void)state;
    static struct smbios_mem m;
    struct smbios_peak pk;
    struct tb t;
    const uint16_t sp[4] = {2666, 2666, 2666, 2666};
    /* Dell PowerEdge: "A1".."A4" are slots of CPU 1, channel unknown */
    static const char *const dell[] = {"A1|Not Specified", "A2|Not Specified", "A3|Not Specified", "A4|Not Specified"};
    build(&t, 4, 4, dell, sp, sp);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_false(smbios_peak(&m, &pk));
    assert_non_null(strstr(pk.why, "channels unknown"));
    assert_non_null(strstr(pk.why, "\"A1\" / bank locator \"Not Specified\" names no memory channel"));
    assert_non_null(strstr(pk.why, "one DIMM per channel is not assumed"));
    assert_true(pk.bytes_per_s == 0 && pk.channels == 0);
    /* one device of four unparsable is enough to say unknown */
    static const char *const mixed[] = {"DIMM_A1|BANK 0", "DIMM_A2|BANK 1", "DIMM_B1|BANK 2", "DIMM 4|BANK 3"};
    build(&t, 4, 4, mixed, sp, sp);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_false(smbios_peak(&m, &pk));
    assert_non_null(strstr(pk.why, "\"DIMM 4\""));
    /* two sockets whose locators omit the socket: the same channel and slot twice, a contradiction */
    static const char *const twin[] = {"DIMM_A1|BANK 0", "DIMM_B1|BANK 1", "DIMM_A1|BANK 0", "DIMM_B1|BANK 1"};
    build(&t, 8, 4, twin, sp, sp);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_false(smbios_peak(&m, &pk));
    assert_non_null(strstr(pk.why, "same channel and slot"));
    /* more channels than type 16 has slots */
    static const char *const four[] = {"DIMM_A1", "DIMM_B1", "DIMM_C1", "DIMM_D1"};
    build(&t, 2, 4, four, sp, sp);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_false(smbios_peak(&m, &pk));
    assert_non_null(strstr(pk.why, "4 channels, type 16 has 2 slots"));
    /* the same with enough slots: 4 channels */
    build(&t, 4, 4, four, sp, sp);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_true(smbios_peak(&m, &pk));
    assert_int_equal(pk.channels, 4);
    assert_true(pk.bytes_per_s == 4 * 2666e6 * 8);
    assert_int_equal(pk.sockets, 0); /* not named */
    assert_true(pk.per_socket_bytes_per_s == 0);
}

static void test_peak_single_dimm(void **state)
{
    (void)state;
    static struct smbios_mem m;
    struct smbios_peak pk;
    struct tb t;
    uint8_t body[0x5C];
    /* a laptop's one SO-DIMM, locator naming no channel, one empty slot beside it */
    t.n = 0;
    t17(body, 64, 8192, 3200, 2933, 0x1A);
    add(&t, 17, 0x5C, 0x40, body, "SODIMM1|BANK 0");
    t17(body, 64, 0, 0, 0, 0x02);
    add(&t, 17, 0x5C, 0x41, body, "SODIMM2|BANK 2");
    add(&t, 127, 4, 0xFFFF, NULL, NULL);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_true(smbios_peak(&m, &pk));
    assert_int_equal(pk.dimms, 1);
    assert_int_equal(pk.channels, 1);
    assert_true(pk.bytes_per_s == 2933e6 * 8);
    assert_int_equal(pk.mts, 2933);
    assert_string_equal(pk.formula, "1 channels x 2933 MT/s x 64 bits / 8");
    assert_non_null(strstr(pk.channel_method, "one populated device"));
}

static void test_peak_mixed_speeds(void **state)
{
    (void)state;
    static struct smbios_mem m;
    struct smbios_peak pk;
    struct tb t;
    static const char *const loc[] = {"ChannelA-DIMM0|BANK 0", "ChannelB-DIMM0|BANK 2", "ChannelC-DIMM0|BANK 4"};
    /* configured speeds 3200 and 2933 (maximum 3600 and 3200): the slowest configured one, 2933 */
    const uint16_t speed[] = {3600, 3200, 2666}, conf[] = {3200, 2933, 0};
    build(&t, 4, 2, loc, speed, conf);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_true(smbios_peak(&m, &pk));
    assert_int_equal(pk.mts, 2933);
    assert_true(pk.mts_configured);
    assert_true(pk.bytes_per_s == 2 * 2933e6 * 8);
    /* a third device without a configured speed: its maximum speed, 2666, is the slowest */
    build(&t, 4, 3, loc, speed, conf);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_true(smbios_peak(&m, &pk));
    assert_int_equal(pk.channels, 3);
    assert_int_equal(pk.mts, 2666);
    assert_false(pk.mts_configured);
    assert_true(pk.bytes_per_s == 3 * 2666e6 * 8);
}

static void test_peak_per_socket(void **state)
{
    (void)state;
    static struct smbios_mem m;
    struct smbios_peak pk;
    struct tb t;
    static const char *const loc[] = {"CPU0_DIMM_A1|NODE 0", "CPU0_DIMM_B1|NODE 0", "CPU1_DIMM_A1|NODE 1",
                                      "CPU1_DIMM_B1|NODE 1"};
    const uint16_t sp[] = {2400, 2400, 2400, 2400};
    build(&t, 16, 4, loc, sp, sp);
    assert_int_equal(smbios_mem_parse(t.b, t.n, &m), SMBIOS_OK);
    assert_true(smbios_peak(&m, &pk));
    assert_int_equal(pk.channels, 4);
    assert_int_equal(pk.sockets, 2);
    assert_true(pk.bytes_per_s == 4 * 2400e6 * 8);
    assert_true(pk.per_socket_bytes_per_s == 2 * 2400e6 * 8);
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
        cmocka_unit_test(test_channel_parser),
        cmocka_unit_test(test_peak_two_dimms_per_channel),
        cmocka_unit_test(test_peak_unknown_locators),
        cmocka_unit_test(test_peak_single_dimm),
        cmocka_unit_test(test_peak_mixed_speeds),
        cmocka_unit_test(test_peak_per_socket),
        cmocka_unit_test(test_many_devices_kept_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
