/* boot_info.h - everything boot/ gathers from firmware (UEFI, or BIOS through a Multiboot2 loader), handed to
 * kernel_main. */
#ifndef PMB_BOOT_INFO_H
#define PMB_BOOT_INFO_H

#include "kernel/klib.h"
#include "kernel/config.h"

#define BOOT_INFO_MAGIC 0x504d424e4348424fULL /* "OBHCNBMP" */
#define BOOT_MAX_MMAP 512
#define BOOT_CFG_MAX (CFG_FILE_MAX + 1) /* pmubench.cfg and its NUL */
#define BOOT_ARGS_MAX 2048
/* Below 1 MiB for the AP trampoline: page 0 real-mode code + data, page 1 a PML4 copy that a
 * 32-bit CR3 load can reach. */
#define BOOT_TRAMPOLINE_BYTES 8192

/* One UEFI memory descriptor, with the UEFI type kept as is (EfiConventionalMemory = 7, ...). The Multiboot2
 * stage converts its E820-style map into these types (boot/mb2_parse.c). */
struct boot_mmap_entry {
    uint32_t type;
    uint64_t phys;
    uint64_t pages; /* 4 KiB pages */
    uint64_t attr;
};

/* UEFI memory types we care about (UEFI spec 2.x, EFI_MEMORY_TYPE). */
enum {
    BOOT_MEM_RESERVED = 0, BOOT_MEM_LOADER_CODE = 1, BOOT_MEM_LOADER_DATA = 2,
    BOOT_MEM_BS_CODE = 3, BOOT_MEM_BS_DATA = 4, BOOT_MEM_RT_CODE = 5, BOOT_MEM_RT_DATA = 6,
    BOOT_MEM_CONVENTIONAL = 7, BOOT_MEM_UNUSABLE = 8, BOOT_MEM_ACPI_RECLAIM = 9,
    BOOT_MEM_ACPI_NVS = 10, BOOT_MEM_MMIO = 11, BOOT_MEM_MMIO_PORT = 12, BOOT_MEM_PAL = 13,
    BOOT_MEM_PERSISTENT = 14,
};

struct boot_info {
    uint64_t magic;
    /* Memory map as of the successful ExitBootServices. */
    uint32_t mmap_count;
    struct boot_mmap_entry mmap[BOOT_MAX_MMAP];
    /* ACPI 2.0+ RSDP (0 if firmware gave only 1.0, then rsdp_v1 is set) */
    uint64_t rsdp;
    uint64_t rsdp_v1;
    /* SMBIOS entry points, for memory speed later (0 when absent). */
    uint64_t smbios, smbios3;
    /* Where a loader hands over copies rather than addresses (Multiboot2 tags 13-15), boot/ keeps the copies
     * here and points rsdp/rsdp_v1/smbios/smbios3 at them. Unused on UEFI. */
    uint8_t rsdp_copy[64];
    uint8_t smbios_copy[64];
    /* pmubench.cfg from the root of the boot volume, NUL-terminated; cfg_len 0 when absent. */
    uint32_t cfg_len;
    int32_t cfg_status; /* 0 read, 1 absent, <0 read error */
    char cfg[BOOT_CFG_MAX];
    /* UEFI load options converted from UCS-2 to ASCII (non-ASCII becomes '?'). */
    char args[BOOT_ARGS_MAX];
    /* BOOT_TRAMPOLINE_BYTES below 1 MiB reserved for the AP trampoline (0 if none could be had). */
    uint64_t trampoline;
    /* Where this image lives, and the kernel stack boot/ allocated and switched to. */
    uint64_t image_base, image_size;
    uint64_t stack_base, stack_size;
    /* Scratch pages reserved for the kernel before exit (page tables, etc.). */
    uint64_t scratch_base, scratch_size;
    /* UEFI runtime services table (ResetSystem for shutdown), physical mode; 0 on BIOS. */
    uint64_t runtime_services;
    /* Firmware identity: "uefi" or "bios" (the run record's firmware.kind); fw_vendor is the UEFI vendor
     * string, or the Multiboot2 boot loader's name on BIOS. */
    char firmware[8];
    char fw_vendor[64];
    uint32_t fw_revision;
    uint32_t exit_retries; /* how many times ExitBootServices had to be retried */
    uint64_t boot_tsc;     /* TSC at efi_main entry */
};

/* The kernel's entry point: never returns. */
void kernel_main(struct boot_info *bi) __attribute__((noreturn));

#endif
