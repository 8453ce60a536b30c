/* mb2_parse.c - Multiboot2 boot information into struct boot_info (see mb2_parse.h). Pure C: every read of the
 * MBI is bounds-checked against its total_size and goes through memcpy (the tags promise 8-byte alignment, a
 * broken loader may not keep it), so a truncated or malformed MBI is one error line, never a wild read. */
#include "boot/mb2_parse.h"
#include "kernel/fmt.h"

#define PAGE 4096ULL
#define MB2_MMAP_ENTRY_MIN 24 /* u64 base_addr, u64 length, u32 type, u32 reserved (3.6.8) */

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static bool has_nul(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i])
            return true;
    return false;
}

/* E820 type -> the UEFI type the kernel's allocator reads (pmm.c: only CONVENTIONAL is handed out). */
static uint32_t mb2_to_uefi_type(uint32_t t)
{
    switch (t) {
    case MB2_MEM_AVAILABLE: return BOOT_MEM_CONVENTIONAL;
    case MB2_MEM_ACPI_RECLAIMABLE: return BOOT_MEM_ACPI_RECLAIM;
    case MB2_MEM_NVS: return BOOT_MEM_ACPI_NVS;
    case MB2_MEM_BADRAM: return BOOT_MEM_UNUSABLE;
    default: return BOOT_MEM_RESERVED;
    }
}

static uint64_t entry_end(const struct boot_mmap_entry *e) { return e->phys + e->pages * PAGE; }

/* Usable memory rounds inward, everything else outward: a partial page is never handed out. */
static int add_region(struct boot_info *bi, uint32_t type, uint64_t base, uint64_t len)
{
    uint64_t end = len > UINT64_MAX - base ? UINT64_MAX : base + len;
    uint64_t b, e;
    if (type == BOOT_MEM_CONVENTIONAL) {
        b = ALIGN_UP(base, PAGE);
        e = ALIGN_DOWN(end, PAGE);
    } else {
        b = ALIGN_DOWN(base, PAGE);
        e = end > UINT64_MAX - (PAGE - 1) ? ALIGN_DOWN(UINT64_MAX, PAGE) : ALIGN_UP(end, PAGE);
    }
    if (b >= e || len == 0)
        return 0;
    if (bi->mmap_count >= BOOT_MAX_MMAP)
        return -1;
    struct boot_mmap_entry *m = &bi->mmap[bi->mmap_count++];
    m->type = type;
    m->phys = b;
    m->pages = (e - b) / PAGE;
    m->attr = 0;
    return 0;
}

/* Printable ASCII only, as efi_main.c does with load options. */
static void copy_text(char *dst, size_t cap, const char *src, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && src[i] && o + 1 < cap; i++)
        dst[o++] = (src[i] >= 0x20 && src[i] < 0x7F) || src[i] == '\t' ? src[i] : '?';
    dst[o] = 0;
}

/* GRUB puts the arguments after the kernel's path in tag 1; other loaders put the path first. A first word
 * that looks like a path ("/boot/pmubench.elf", "(hd0,gpt2)/...") is the kernel's name, not an option. */
static const char *skip_kernel_path(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s != '/' && *s != '(')
        return s;
    while (*s && *s != ' ' && *s != '\t')
        s++;
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Whether a module's string names the config file: its first word, path stripped, is MB2_CONFIG_MODULE. */
static bool is_config_module(const char *s, size_t n)
{
    size_t i = 0, word = 0, len;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    for (word = i; i < n && s[i] && s[i] != ' ' && s[i] != '\t'; i++)
        if (s[i] == '/' || s[i] == ')')
            word = i + 1;
    len = i - word;
    return len == sizeof(MB2_CONFIG_MODULE) - 1 && !memcmp(s + word, MB2_CONFIG_MODULE, len);
}

static void read_config(struct boot_info *bi, uint64_t start, uint64_t end, mb2_map_fn map, void *ctx)
{
    uint64_t len = end - start;
    size_t n = len < sizeof(bi->cfg) - 1 ? (size_t)len : sizeof(bi->cfg) - 1;
    const void *p = n ? (map ? map(start, n, ctx) : NULL) : bi->cfg;
    if (!p) {
        bi->cfg_status = -1;
        bi->cfg_len = 0;
        bi->cfg[0] = 0;
        return;
    }
    memcpy(bi->cfg, p, n);
    bi->cfg[n] = 0;
    bi->cfg_len = (uint32_t)n;
    bi->cfg_status = len > n ? -2 : 0; /* -2: longer than the buffer, as on UEFI */
}

#define FAIL(code, ...)                                   \
    do {                                                  \
        if (err && errlen)                                \
            fmt_snprintf(err, errlen, __VA_ARGS__);       \
        return (code);                                    \
    } while (0)

int mb2_parse(const void *mbi, size_t avail, mb2_map_fn map, void *ctx, struct boot_info *bi, struct mb2_result *r,
              char *err, size_t errlen)
{
    const uint8_t *p = mbi;
    bool have_end = false, have_mmap = false, have_new = false, have_old = false;

    if (err && errlen)
        err[0] = 0;
    memset(r, 0, sizeof(*r));
    bi->mmap_count = 0;
    bi->cfg_status = 1;
    bi->cfg_len = 0;
    bi->cfg[0] = 0;
    bi->args[0] = 0;
    if (!p)
        FAIL(MB2_EMALFORMED, "multiboot2: no boot information (EBX = 0)");
    if ((uintptr_t)p & 7)
        FAIL(MB2_EMALFORMED, "multiboot2: boot information at 0x%llx is not 8-byte aligned",
             (unsigned long long)(uintptr_t)p);
    if (avail < 16)
        FAIL(MB2_EMALFORMED, "multiboot2: boot information truncated (%zu bytes, 16 at least)", avail);
    uint32_t total = rd32(p);
    r->total_size = total;
    if (total < 16)
        FAIL(MB2_EMALFORMED, "multiboot2: total_size %u is smaller than header + end tag (16)", total);
    if (total > avail)
        FAIL(MB2_EMALFORMED, "multiboot2: total_size %u runs past the %zu bytes there are", total, avail);

    for (uint32_t off = 8; off + 8 <= total;) {
        uint32_t type = rd32(p + off), size = rd32(p + off + 4);
        const uint8_t *t = p + off;
        if (size < 8)
            FAIL(MB2_EMALFORMED, "multiboot2: tag type %u at offset %u has size %u (< 8)", type, off, size);
        if (size > total - off)
            FAIL(MB2_EMALFORMED, "multiboot2: tag type %u at offset %u (size %u) runs past total_size %u", type, off,
                 size, total);
        switch (type) {
        case MB2_TAG_END:
            if (size != 8)
                FAIL(MB2_EMALFORMED, "multiboot2: end tag at offset %u has size %u (not 8)", off, size);
            have_end = true;
            break;
        case MB2_TAG_CMDLINE:
        case MB2_TAG_LOADER_NAME: {
            const char *s = (const char *)t + 8;
            if (!has_nul(s, size - 8))
                FAIL(MB2_EMALFORMED, "multiboot2: string tag type %u at offset %u is not NUL-terminated", type, off);
            if (type == MB2_TAG_CMDLINE) {
                const char *a = skip_kernel_path(s);
                copy_text(bi->args, sizeof(bi->args), a, strlen(a));
            } else {
                copy_text(bi->fw_vendor, sizeof(bi->fw_vendor), s, strlen(s));
            }
            break;
        }
        case MB2_TAG_MODULE: {
            if (size < 17 || !has_nul((const char *)t + 16, size - 16))
                FAIL(MB2_EMALFORMED, "multiboot2: module tag at offset %u is too short or its string unterminated",
                     off);
            uint32_t start = rd32(t + 8), end = rd32(t + 12);
            if (end < start)
                FAIL(MB2_EMALFORMED, "multiboot2: module at offset %u ends (0x%x) before it starts (0x%x)", off, end,
                     start);
            if (r->nmods < MB2_MAX_MODULES)
                r->mods[r->nmods] = (struct mb2_range){start, end};
            r->nmods++;
            if (bi->cfg_status == 1 && is_config_module((const char *)t + 16, size - 16))
                read_config(bi, start, end, map, ctx);
            break;
        }
        case MB2_TAG_MMAP: {
            if (size < 16)
                FAIL(MB2_EMALFORMED, "multiboot2: memory map tag at offset %u is too short (%u)", off, size);
            uint32_t esize = rd32(t + 8);
            if (esize < MB2_MMAP_ENTRY_MIN || (esize & 7))
                FAIL(MB2_EMALFORMED, "multiboot2: memory map entry_size %u (24 or more, a multiple of 8)", esize);
            if (have_mmap)
                break; /* the first map wins */
            have_mmap = true;
            for (uint32_t e = 16; e + esize <= size; e += esize)
                if (add_region(bi, mb2_to_uefi_type(rd32(t + e + 16)), rd64(t + e), rd64(t + e + 8)))
                    FAIL(MB2_EMMAPFULL, "multiboot2: memory map has more than %u entries", BOOT_MAX_MMAP);
            break;
        }
        case MB2_TAG_SMBIOS: {
            if (size < 16 + 4)
                FAIL(MB2_EMALFORMED, "multiboot2: SMBIOS tag at offset %u is too short (%u)", off, size);
            size_t n = size - 16 < sizeof(bi->smbios_copy) ? size - 16 : sizeof(bi->smbios_copy);
            memset(bi->smbios_copy, 0, sizeof(bi->smbios_copy));
            memcpy(bi->smbios_copy, t + 16, n);
            /* The anchor says which entry point it is (SMBIOS 3.x "_SM3_", 2.x "_SM_"), whatever major says. */
            if (n >= 5 && !memcmp(bi->smbios_copy, "_SM3_", 5))
                bi->smbios3 = (uint64_t)(uintptr_t)bi->smbios_copy;
            else if (!memcmp(bi->smbios_copy, "_SM_", 4))
                bi->smbios = (uint64_t)(uintptr_t)bi->smbios_copy;
            break;
        }
        case MB2_TAG_ACPI_OLD:
        case MB2_TAG_ACPI_NEW: {
            uint32_t need = type == MB2_TAG_ACPI_NEW ? 36 : 20; /* ACPI 6.x 5.2.5.3: RSDP length by revision */
            if (size - 8 < need)
                FAIL(MB2_EMALFORMED, "multiboot2: ACPI RSDP tag type %u at offset %u holds %u bytes (%u needed)",
                     type, off, size - 8, need);
            /* One copy: the new tag's RSDP wins; its first 20 bytes are the old one (same checksum). */
            if (type == MB2_TAG_ACPI_NEW || !have_new) {
                size_t n = size - 8 < sizeof(bi->rsdp_copy) ? size - 8 : sizeof(bi->rsdp_copy);
                memset(bi->rsdp_copy, 0, sizeof(bi->rsdp_copy));
                memcpy(bi->rsdp_copy, t + 8, n);
            }
            if (type == MB2_TAG_ACPI_NEW) {
                have_new = true;
                bi->rsdp = (uint64_t)(uintptr_t)bi->rsdp_copy;
            } else {
                have_old = true;
            }
            if (have_old)
                bi->rsdp_v1 = (uint64_t)(uintptr_t)bi->rsdp_copy;
            break;
        }
        default:
            break; /* framebuffer, ELF sections, APM, EFI tags, ...: not ours */
        }
        if (have_end)
            break;
        off += (uint32_t)ALIGN_UP(size, 8);
    }
    if (!have_end)
        FAIL(MB2_EMALFORMED, "multiboot2: boot information truncated: no end tag within total_size %u", total);
    if (!have_mmap)
        FAIL(MB2_ENOMMAP, "multiboot2: no memory map tag (type 6)");
    if (!have_new && !have_old)
        FAIL(MB2_NO_RSDP, "multiboot2: no ACPI RSDP tag (type 14 or 15): running without ACPI");
    return MB2_OK;
}

int mb2_mmap_claim(struct boot_info *bi, uint64_t base, uint64_t len)
{
    return add_region(bi, BOOT_MEM_LOADER_DATA, base, len);
}

static bool overlaps_claim(const struct boot_info *bi, uint64_t b, uint64_t e, uint64_t *skip_to)
{
    for (uint32_t i = 0; i < bi->mmap_count; i++) {
        const struct boot_mmap_entry *m = &bi->mmap[i];
        if (m->type != BOOT_MEM_CONVENTIONAL && m->phys < e && entry_end(m) > b) {
            *skip_to = entry_end(m);
            return true;
        }
    }
    return false;
}

uint64_t mb2_mmap_alloc(struct boot_info *bi, uint64_t bytes, uint64_t min, uint64_t max)
{
    uint64_t best = 0;
    bool found = false;
    bytes = ALIGN_UP(bytes, PAGE);
    if (!bytes)
        return 0;
    for (uint32_t i = 0; i < bi->mmap_count; i++) {
        const struct boot_mmap_entry *m = &bi->mmap[i];
        if (m->type != BOOT_MEM_CONVENTIONAL)
            continue;
        uint64_t lo = ALIGN_UP(m->phys > min ? m->phys : min, PAGE);
        uint64_t hi = entry_end(m) < max ? entry_end(m) : max;
        for (uint64_t s = lo, skip; s < hi && bytes <= hi - s; s = ALIGN_UP(skip, PAGE)) {
            if (!overlaps_claim(bi, s, s + bytes, &skip)) {
                if (!found || s < best)
                    best = s;
                found = true;
                break;
            }
        }
    }
    if (!found || mb2_mmap_claim(bi, best, bytes))
        return 0;
    return best;
}
