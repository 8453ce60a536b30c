/* mb2_parse.h - Multiboot2 boot information (MBI) into struct boot_info: pure C, no firmware calls, host-tested
 * (tests/unit/test_mb2.c). Used only by the BIOS stage (boot/mb2_main.c); never part of the UEFI image. */
#ifndef PMB_MB2_PARSE_H
#define PMB_MB2_PARSE_H

#include "kernel/boot_info.h"

/* Multiboot2 specification 2.0, section 3.6: EAX on entry, and the tag types read here. */
#define MB2_BOOTLOADER_MAGIC 0x36D76289u
#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_LOADER_NAME 2
#define MB2_TAG_MODULE 3
#define MB2_TAG_MMAP 6
#define MB2_TAG_SMBIOS 13
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15

/* Memory map entry types (3.6.8, the E820 values). */
#define MB2_MEM_AVAILABLE 1
#define MB2_MEM_RESERVED 2
#define MB2_MEM_ACPI_RECLAIMABLE 3
#define MB2_MEM_NVS 4
#define MB2_MEM_BADRAM 5

/* The module whose command line names this file becomes boot_info.cfg (grub.cfg: module2 /pmubench.cfg pmubench.cfg). */
#define MB2_CONFIG_MODULE "pmubench.cfg"
#define MB2_MAX_MODULES 16

enum {
    MB2_OK = 0,
    MB2_NO_RSDP = 1,     /* parsed, but the loader gave no ACPI RSDP tag (the kernel runs without ACPI) */
    MB2_EMALFORMED = -1, /* truncated or malformed MBI: nothing in boot_info is to be trusted */
    MB2_ENOMMAP = -2,    /* no usable memory map tag */
    MB2_EMMAPFULL = -3,  /* more memory map entries than BOOT_MAX_MMAP */
};

/* Physical address -> readable pointer for len bytes, NULL when it cannot be read (the module's contents live
 * outside the MBI). The BIOS stage identity-maps; the tests translate into their own buffers. */
typedef const void *(*mb2_map_fn)(uint64_t phys, size_t len, void *ctx);

struct mb2_range {
    uint64_t base, end; /* [base, end) */
};

/* What the parse found besides boot_info: what the memory allocator must step around. */
struct mb2_result {
    uint32_t total_size;
    uint32_t nmods; /* modules seen (the first MB2_MAX_MODULES kept in mods) */
    struct mb2_range mods[MB2_MAX_MODULES];
};

/* Parses the MBI at mbi, of which avail bytes may be read (the host buffer's size; UINT32_MAX in the kernel),
 * into bi: memory map (converted to UEFI types), ACPI RSDP (tag 15, else 14; copied into bi->rsdp_copy),
 * SMBIOS entry point (tag 13, copied into bi->smbios_copy), command line (tag 1, into bi->args, a leading
 * kernel path dropped), the pmubench.cfg module (into bi->cfg, with cfg_status as on UEFI), loader name (tag 2,
 * into bi->fw_vendor). The other boot_info fields are left alone. Returns MB2_OK, MB2_NO_RSDP, or a negative
 * MB2_E*; err gets one line for anything but MB2_OK. */
int mb2_parse(const void *mbi, size_t avail, mb2_map_fn map, void *ctx, struct boot_info *bi, struct mb2_result *r,
              char *err, size_t errlen);

/* Marks [base, base + len) as taken (a BOOT_MEM_LOADER_DATA entry on top of the map, which pmm_add_from_uefi
 * honours over any usable entry it overlaps). -1 when the map is full. */
int mb2_mmap_claim(struct boot_info *bi, uint64_t base, uint64_t len);

/* The lowest page-aligned bytes-long range within [min, max) that lies in usable memory and overlaps no other
 * entry; claimed before returning it. 0 when none fits. */
uint64_t mb2_mmap_alloc(struct boot_info *bi, uint64_t bytes, uint64_t min, uint64_t max);

#endif
