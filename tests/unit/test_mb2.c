/* test_mb2.c - host tests for the Multiboot2 boot-information parser (boot/mb2_parse.c), over tag bytes laid
 * out byte for byte as GRUB 2 writes them (Multiboot2 specification 2.0, 3.6): good, truncated, malformed,
 * misaligned, without RSDP; and the allocator the BIOS stage carves its pages with. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "boot/mb2_parse.h"

/* ---- an MBI builder: little-endian fields, tags padded to 8 as the spec requires ---------------------------- */
static _Alignas(8) uint8_t g_mbi[4096 + 8];
static size_t g_len;
static bool g_no_pad; /* leave out the padding after the next tag (a broken loader) */

static void put32(size_t off, uint32_t v) { for (int i = 0; i < 4; i++) g_mbi[off + i] = (uint8_t)(v >> (8 * i)); }
static void put64(size_t off, uint64_t v) { put32(off, (uint32_t)v); put32(off + 4, (uint32_t)(v >> 32)); }

static void mbi_begin(void)
{
    memset(g_mbi, 0xEE, sizeof(g_mbi)); /* garbage wherever the builder writes nothing */
    g_len = 8;
    g_no_pad = false;
}

/* A tag with a payload of n bytes; returns the payload's offset. */
static size_t tag(uint32_t type, const void *payload, size_t n)
{
    size_t off = g_len;
    put32(off, type);
    put32(off + 4, (uint32_t)(8 + n));
    if (payload)
        memcpy(g_mbi + off + 8, payload, n);
    g_len = off + 8 + n;
    if (!g_no_pad)
        while (g_len & 7)
            g_mbi[g_len++] = 0;
    return off + 8;
}

static void tag_str(uint32_t type, const char *s) { tag(type, s, strlen(s) + 1); }

static void tag_module(uint32_t start, uint32_t end, const char *s)
{
    uint8_t b[64];
    memset(b, 0, sizeof(b));
    memcpy(b + 8, s, strlen(s) + 1);
    size_t p = tag(MB2_TAG_MODULE, b, 8 + strlen(s) + 1);
    put32(p, start);
    put32(p + 4, end);
}

struct e820 { uint64_t base, len; uint32_t type; };

static void tag_mmap(const struct e820 *e, size_t n)
{
    size_t p = tag(MB2_TAG_MMAP, NULL, 8 + 24 * n);
    put32(p, 24); /* entry_size */
    put32(p + 4, 0); /* entry_version */
    for (size_t i = 0; i < n; i++) {
        put64(p + 8 + 24 * i, e[i].base);
        put64(p + 8 + 24 * i + 8, e[i].len);
        put32(p + 8 + 24 * i + 16, e[i].type);
        put32(p + 8 + 24 * i + 20, 0);
    }
}

static size_t mbi_end(void)
{
    tag(MB2_TAG_END, NULL, 0);
    put32(0, (uint32_t)g_len);
    put32(4, 0);
    return g_len;
}

/* QEMU q35 + SeaBIOS, 1 GiB, as GRUB reports it. */
static const struct e820 k_e820[] = {
    {0x0, 0x9fc00, 1}, {0x9fc00, 0x400, 2}, {0xf0000, 0x10000, 2}, {0x100000, 0x3fee0000, 1},
    {0x3ffe0000, 0x20000, 2}, {0xb0000000, 0x10000000, 2}, {0xfed1c000, 0x4000, 2}, {0xfffc0000, 0x40000, 2},
};

/* RSDP 2.0 as SeaBIOS builds it: "RSD PTR ", checksum, OEM "BOCHS ", revision 2, RSDT, length 36, XSDT. */
static void rsdp(uint8_t *b, uint8_t rev)
{
    memset(b, 0, 36);
    memcpy(b, "RSD PTR ", 8);
    memcpy(b + 9, "BOCHS ", 6);
    b[15] = rev;
    b[16] = 0x34; b[17] = 0x12; b[18] = 0xfe; b[19] = 0x3f;
    b[20] = 36;
}

static const char k_cfg[] = "bench=latency\nprofile=quick\n";
#define CFG_PHYS 0x1c4000u
#define OTHER_PHYS 0x1c6000u

/* The module's bytes live outside the MBI: a "physical" window onto a host buffer. */
struct phys_window { uint64_t phys; const void *buf; size_t len; int calls; };

static const void *win_map(uint64_t phys, size_t len, void *ctx)
{
    struct phys_window *w = ctx;
    w->calls++;
    if (!w->buf || phys < w->phys || phys + len > w->phys + w->len)
        return NULL;
    return (const uint8_t *)w->buf + (phys - w->phys);
}

static struct boot_info g_bi;
static struct mb2_result g_r;
static char g_err[160];

static int parse_with(size_t avail, struct phys_window *w)
{
    memset(&g_bi, 0, sizeof(g_bi));
    return mb2_parse(g_mbi, avail, w ? win_map : NULL, w, &g_bi, &g_r, g_err, sizeof(g_err));
}

/* GRUB 2.06's order: cmdline, loader name, modules, basic meminfo, bootdev, mmap, framebuffer, ACPI old, new. */
static size_t build_good(bool with_rsdp)
{
    uint8_t b[64];
    mbi_begin();
    tag_str(MB2_TAG_CMDLINE, "/boot/pmubench.elf profile=quick"); /* 33 bytes: padded to 8 */
    tag_str(MB2_TAG_LOADER_NAME, "GRUB 2.06-13+deb12u1");
    tag_module(CFG_PHYS, CFG_PHYS + sizeof(k_cfg) - 1, "pmubench.cfg");
    tag_module(OTHER_PHYS, OTHER_PHYS + 100, "/boot/other.bin");
    uint32_t meminfo[2] = {639, 1047424};
    tag(4, meminfo, sizeof(meminfo));
    tag_mmap(k_e820, sizeof(k_e820) / sizeof(k_e820[0]));
    memset(b, 0, 24);
    tag(8, b, 24); /* framebuffer (EGA text): ignored */
    uint8_t smb[8 + 31];
    memset(smb, 0, sizeof(smb));
    smb[0] = 2; smb[1] = 8;
    memcpy(smb + 8, "_SM_", 4);
    tag(MB2_TAG_SMBIOS, smb, sizeof(smb));
    if (with_rsdp) {
        rsdp(b, 0);
        tag(MB2_TAG_ACPI_OLD, b, 20);
        rsdp(b, 2);
        tag(MB2_TAG_ACPI_NEW, b, 36);
    }
    return mbi_end();
}

static struct phys_window cfg_window(void) { return (struct phys_window){CFG_PHYS, k_cfg, sizeof(k_cfg) - 1, 0}; }

static void test_good(void **state)
{
    (void)state;
    size_t n = build_good(true);
    struct phys_window w = cfg_window();
    assert_int_equal(parse_with(n, &w), MB2_OK);
    assert_string_equal(g_err, "");
    assert_int_equal(g_r.total_size, n);

    /* Memory map: E820 -> UEFI types, usable rounded in, reserved rounded out. */
    assert_int_equal(g_bi.mmap_count, 8);
    assert_int_equal(g_bi.mmap[0].type, BOOT_MEM_CONVENTIONAL);
    assert_int_equal(g_bi.mmap[0].phys, 0);
    assert_int_equal(g_bi.mmap[0].pages, 0x9f); /* 0x9fc00 rounds down to 0x9f000 */
    assert_int_equal(g_bi.mmap[1].type, BOOT_MEM_RESERVED);
    assert_int_equal(g_bi.mmap[1].phys, 0x9f000);
    assert_int_equal(g_bi.mmap[1].pages, 1);
    assert_int_equal(g_bi.mmap[3].type, BOOT_MEM_CONVENTIONAL);
    assert_int_equal(g_bi.mmap[3].phys, 0x100000);
    assert_int_equal(g_bi.mmap[3].pages, 0x3fee0000 / 4096);
    assert_int_equal(g_bi.mmap[7].phys, 0xfffc0000);

    /* ACPI: both pointers at the one copy, holding the 2.0 RSDP byte for byte. */
    assert_true(g_bi.rsdp == (uint64_t)(uintptr_t)g_bi.rsdp_copy);
    assert_true(g_bi.rsdp_v1 == g_bi.rsdp);
    assert_memory_equal(g_bi.rsdp_copy, "RSD PTR ", 8);
    assert_int_equal(g_bi.rsdp_copy[15], 2);
    assert_int_equal(g_bi.rsdp_copy[20], 36);
    /* SMBIOS 2.x entry point, by its anchor. */
    assert_true(g_bi.smbios == (uint64_t)(uintptr_t)g_bi.smbios_copy);
    assert_true(g_bi.smbios3 == 0);
    assert_memory_equal(g_bi.smbios_copy, "_SM_", 4);

    /* Command line without the kernel's path; loader name as the firmware vendor. */
    assert_string_equal(g_bi.args, "profile=quick");
    assert_string_equal(g_bi.fw_vendor, "GRUB 2.06-13+deb12u1");
    /* Config from the module named pmubench.cfg, read through the map function. */
    assert_int_equal(g_bi.cfg_status, 0);
    assert_int_equal(g_bi.cfg_len, sizeof(k_cfg) - 1);
    assert_string_equal(g_bi.cfg, k_cfg);
    assert_int_equal(w.calls, 1);
    /* Both modules' ranges, for the allocator to step around. */
    assert_int_equal(g_r.nmods, 2);
    assert_int_equal(g_r.mods[0].base, CFG_PHYS);
    assert_int_equal(g_r.mods[1].end, OTHER_PHYS + 100);
}

static void test_old_rsdp_only(void **state)
{
    (void)state;
    uint8_t b[36];
    mbi_begin();
    tag_mmap(k_e820, 2);
    rsdp(b, 0);
    tag(MB2_TAG_ACPI_OLD, b, 20);
    size_t n = mbi_end();
    assert_int_equal(parse_with(n, NULL), MB2_OK);
    assert_true(g_bi.rsdp == 0);
    assert_true(g_bi.rsdp_v1 == (uint64_t)(uintptr_t)g_bi.rsdp_copy);
    assert_int_equal(g_bi.cfg_status, 1); /* no module: config absent, as on UEFI */
    assert_string_equal(g_bi.args, "");
}

static void test_missing_rsdp(void **state)
{
    (void)state;
    size_t n = build_good(false);
    struct phys_window w = cfg_window();
    assert_int_equal(parse_with(n, &w), MB2_NO_RSDP);
    assert_non_null(strstr(g_err, "no ACPI RSDP tag"));
    assert_true(g_bi.rsdp == 0 && g_bi.rsdp_v1 == 0);
    /* Everything else is still there. */
    assert_int_equal(g_bi.mmap_count, 8);
    assert_int_equal(g_bi.cfg_status, 0);
}

static void test_truncated(void **state)
{
    (void)state;
    size_t n = build_good(true);
    /* Fewer bytes readable than total_size says. */
    assert_int_equal(parse_with(n - 8, NULL), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "runs past"));
    /* total_size cut short: the end tag is outside it. */
    put32(0, (uint32_t)(n - 8));
    assert_int_equal(parse_with(n, NULL), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "no end tag"));
    /* A tag whose size runs past total_size. */
    n = build_good(true);
    put32(8 + 4, (uint32_t)n);
    assert_int_equal(parse_with(n, NULL), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "runs past total_size"));
    /* Shorter than the fixed part. */
    assert_int_equal(parse_with(12, NULL), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "truncated"));
}

static void test_malformed(void **state)
{
    (void)state;
    uint8_t b[36];
    /* A tag of size < 8. */
    size_t n = build_good(true);
    put32(8 + 4, 4);
    assert_int_equal(parse_with(n, NULL), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "size 4"));
    /* An unterminated command line. */
    mbi_begin();
    tag(MB2_TAG_CMDLINE, "abcdefgh", 8);
    n = mbi_end();
    assert_int_equal(parse_with(n, NULL), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "NUL"));
    /* An RSDP tag too short for a 2.0 RSDP. */
    mbi_begin();
    tag_mmap(k_e820, 1);
    rsdp(b, 2);
    tag(MB2_TAG_ACPI_NEW, b, 20);
    n = mbi_end();
    assert_int_equal(parse_with(n, NULL), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "RSDP"));
    /* Memory map entries of a size the spec does not allow. */
    mbi_begin();
    tag_mmap(k_e820, 1);
    put32(8 + 8, 20);
    n = mbi_end();
    assert_int_equal(parse_with(n, NULL), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "entry_size 20"));
    /* No memory map at all. */
    mbi_begin();
    rsdp(b, 2);
    tag(MB2_TAG_ACPI_NEW, b, 36);
    n = mbi_end();
    assert_int_equal(parse_with(n, NULL), MB2_ENOMMAP);
    assert_non_null(strstr(g_err, "no memory map"));
}

static void test_bad_alignment(void **state)
{
    (void)state;
    /* The MBI itself not 8-byte aligned. */
    size_t n = build_good(true);
    memmove(g_mbi + 4, g_mbi, n);
    memset(&g_bi, 0, sizeof(g_bi));
    assert_int_equal(mb2_parse(g_mbi + 4, n, NULL, NULL, &g_bi, &g_r, g_err, sizeof(g_err)), MB2_EMALFORMED);
    assert_non_null(strstr(g_err, "not 8-byte aligned"));
    /* A tag not padded to 8: the next tag's header is read at the aligned offset, which is garbage. */
    uint8_t b[36];
    mbi_begin();
    g_no_pad = true;
    tag_str(MB2_TAG_CMDLINE, "quick"); /* size 14 */
    g_no_pad = false;
    tag_mmap(k_e820, 2);
    rsdp(b, 2);
    tag(MB2_TAG_ACPI_NEW, b, 36);
    n = mbi_end();
    assert_int_equal(parse_with(n, NULL), MB2_EMALFORMED);
}

static void test_config_module(void **state)
{
    (void)state;
    /* Unreadable module: read error. */
    size_t n = build_good(true);
    struct phys_window none = {0, NULL, 0, 0};
    assert_int_equal(parse_with(n, &none), MB2_OK);
    assert_int_equal(g_bi.cfg_status, -1);
    assert_int_equal(g_bi.cfg_len, 0);
    /* Longer than the buffer: truncated and said so (-2), as on UEFI. */
    static char big[BOOT_CFG_MAX + 100];
    memset(big, 'x', sizeof(big));
    mbi_begin();
    tag_module(0x200000, 0x200000 + sizeof(big), "(hd0,gpt2)/pmubench.cfg");
    tag_mmap(k_e820, 1);
    n = mbi_end();
    struct phys_window w = {0x200000, big, sizeof(big), 0};
    assert_int_equal(parse_with(n, &w), MB2_NO_RSDP);
    assert_int_equal(g_bi.cfg_status, -2);
    assert_int_equal(g_bi.cfg_len, BOOT_CFG_MAX - 1);
    /* A module named otherwise is not the config. */
    mbi_begin();
    tag_module(CFG_PHYS, CFG_PHYS + 4, "pmubench.cfg.bak");
    tag_mmap(k_e820, 1);
    n = mbi_end();
    w = cfg_window();
    parse_with(n, &w);
    assert_int_equal(g_bi.cfg_status, 1);
    assert_int_equal(w.calls, 0);
}

static void test_alloc(void **state)
{
    (void)state;
    size_t n = build_good(true);
    assert_int_equal(parse_with(n, NULL), MB2_OK);
    /* The image at 1 MiB and the MBI/modules around 0x1c4000 are taken. */
    assert_int_equal(mb2_mmap_claim(&g_bi, 0x100000, 0x80000), 0);
    assert_int_equal(mb2_mmap_claim(&g_bi, 0x1c4000, 0x2100), 0); /* rounds out to 3 pages */
    /* Trampoline below 0x9f000, never page 0. */
    uint64_t t = mb2_mmap_alloc(&g_bi, BOOT_TRAMPOLINE_BYTES, 0x1000, 0x9f000);
    assert_int_equal(t, 0x1000);
    assert_int_equal(mb2_mmap_alloc(&g_bi, BOOT_TRAMPOLINE_BYTES, 0x1000, 0x9f000), 0x3000);
    /* Above 1 MiB: after the image, in the gap before the module, then after the module. */
    assert_int_equal(mb2_mmap_alloc(&g_bi, 0x40000, 0x100000, 1ULL << 32), 0x180000);
    assert_int_equal(mb2_mmap_alloc(&g_bi, 0x40000, 0x100000, 1ULL << 32), 0x1c7000);
    /* Too big for any usable range: none. */
    assert_int_equal(mb2_mmap_alloc(&g_bi, 2ULL << 30, 0x100000, 1ULL << 32), 0);
    /* Nothing fits below 1 MiB in 1 MiB. */
    assert_int_equal(mb2_mmap_alloc(&g_bi, 0x100000, 0x1000, 0x9f000), 0);
    /* Every claim is a LOADER_DATA entry, which the kernel's allocator never hands out. */
    assert_int_equal(g_bi.mmap[g_bi.mmap_count - 1].type, BOOT_MEM_LOADER_DATA);
    assert_int_equal(g_bi.mmap[g_bi.mmap_count - 1].phys, 0x1c7000);
    assert_int_equal(g_bi.mmap[9].pages, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),        cmocka_unit_test(test_old_rsdp_only), cmocka_unit_test(test_missing_rsdp),
        cmocka_unit_test(test_truncated),   cmocka_unit_test(test_malformed),     cmocka_unit_test(test_bad_alignment),
        cmocka_unit_test(test_config_module), cmocka_unit_test(test_alloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
