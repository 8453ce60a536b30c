/* mb2_main.c - the BIOS stage: entered in long mode from boot/mb2_entry.S after a Multiboot2 loader (GRUB on a
 * BIOS machine) started the kernel ELF. It fills the same struct boot_info as boot/efi_main.c, from the loader's
 * boot information (boot/mb2_parse.c), takes the pages efi_main.c allocates from UEFI out of the memory map
 * instead, and enters kernel_main. With efi_main.c, the only code that knows which firmware it came from; only
 * build/pmubench.mb2.elf links it (Makefile: MB2_ONLY_SRCS). */
#include "boot/mb2_parse.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#include "kernel/serial.h"

/* The same sizes as efi_main.c. */
#define KERNEL_STACK_BYTES (256 * 1024)
#define SCRATCH_BYTES (16 * 1024 * 1024)
#define TRAMPOLINE_MIN 0x1000ULL  /* page 0 holds the real-mode IVT */
#define TRAMPOLINE_MAX 0x9F000ULL /* below the EBDA; real-mode reachable */
#define IDENTITY_LIMIT (4ULL << 30) /* what mb2_entry.S maps */
#define QEMU_DEBUG_EXIT_PORT 0xF4

extern char __mb2_image_start[], __mb2_image_end[];
void switch_stack_call(uint64_t stack_top, void (*fn)(void *), void *arg) __attribute__((noreturn));
void mb2_main(uint32_t magic, uint32_t mbi, uint64_t tsc0) __attribute__((noreturn));

static struct boot_info boot_info_storage __attribute__((aligned(4096)));
static struct serial_port early_serial;

static void early_puts(const char *s) { serial_puts(&early_serial, s); }

/* Before kernel_main nothing can power off (no ACPI yet): say why on COM1 and halt; under a hypervisor, leave
 * through QEMU's isa-debug-exit (status 1, error) so that a test sees the failure at once. */
static void __attribute__((noreturn)) stop(const char *why)
{
    uint32_t r[4];
    early_puts(why);
    early_puts("\npmubench: BIOS stage stopped\n");
    cpuid_raw(1, 0, r);
    if (r[2] & (1u << 31)) /* CPUID.1:ECX.hypervisor */
        outl(QEMU_DEBUG_EXIT_PORT, 1);
    for (;;) {
        cli();
        hlt();
    }
}

static const void *identity(uint64_t phys, size_t len, void *ctx)
{
    (void)ctx;
    return phys && phys <= IDENTITY_LIMIT && len <= IDENTITY_LIMIT - phys ? (const void *)(uintptr_t)phys : NULL;
}

/* Without an ACPI tag, the legacy search (ACPI 6.x 5.2.5.1): the first KiB of the EBDA, then 0xE0000-0xFFFFF,
 * on 16-byte boundaries, for "RSD PTR " with a valid 20-byte checksum. */
static uint64_t scan_rsdp(uint64_t base, uint64_t len)
{
    for (uint64_t a = ALIGN_UP(base, 16); a + 20 <= base + len; a += 16) {
        const uint8_t *p = (const uint8_t *)(uintptr_t)a;
        if (memcmp(p, "RSD PTR ", 8))
            continue;
        uint8_t sum = 0;
        for (int i = 0; i < 20; i++)
            sum = (uint8_t)(sum + p[i]);
        if (!sum)
            return a;
    }
    return 0;
}

static void legacy_rsdp(struct boot_info *bi)
{
    uintptr_t bda_ebda = 0x40E; /* BDA word: the EBDA's segment */
    __asm__("" : "+r"(bda_ebda)); /* an address gcc cannot see as a null-page constant (-Warray-bounds) */
    uint64_t ebda = (uint64_t)*(const volatile uint16_t *)bda_ebda << 4;
    uint64_t a = ebda >= 0x80000 && ebda < 0xA0000 ? scan_rsdp(ebda, 1024) : 0;
    if (!a)
        a = scan_rsdp(0xE0000, 0x20000);
    if (!a)
        return;
    if (((const uint8_t *)(uintptr_t)a)[15] >= 2)
        bi->rsdp = a;
    else
        bi->rsdp_v1 = a;
}

/* Without an SMBIOS tag (GRUB's i386-pc loader gives none), the legacy search (SMBIOS 3.x 5.2.1/5.2.2):
 * 0xF0000-0xFFFFF on 16-byte boundaries for "_SM3_" (24-byte entry point) or "_SM_" (its length at offset 5),
 * each with a zero byte sum. The 3.x anchor wins, as on UEFI. */
static bool smbios_sum_ok(const uint8_t *p, unsigned len)
{
    uint8_t sum = 0;
    for (unsigned i = 0; i < len; i++)
        sum = (uint8_t)(sum + p[i]);
    return sum == 0;
}

static void legacy_smbios(struct boot_info *bi)
{
    uintptr_t lo = 0xF0000;
    __asm__("" : "+r"(lo)); /* a low address gcc must not treat as a constant object (-Warray-bounds) */
    for (uintptr_t a = lo; a + 32 <= 0x100000; a += 16) {
        const uint8_t *p = (const uint8_t *)a;
        if (!bi->smbios3 && !memcmp(p, "_SM3_", 5) && p[6] >= 24 && smbios_sum_ok(p, 24))
            bi->smbios3 = a;
        else if (!bi->smbios && !memcmp(p, "_SM_", 4) && p[5] >= 0x1F && p[5] <= 32 && smbios_sum_ok(p, p[5]))
            bi->smbios = a;
    }
}

static uint64_t must_alloc(struct boot_info *bi, uint64_t bytes, uint64_t min, uint64_t max, const char *what)
{
    uint64_t a = mb2_mmap_alloc(bi, bytes, min, max);
    if (!a) {
        char line[128];
        fmt_snprintf(line, sizeof(line), "pmubench: no free memory for the %s (%llu KiB)", what,
                     (unsigned long long)(bytes >> 10));
        stop(line);
    }
    return a;
}

void mb2_main(uint32_t magic, uint32_t mbi, uint64_t tsc0)
{
    struct boot_info *bi = &boot_info_storage;
    struct mb2_result r;
    char err[160];

    serial_init(&early_serial, false, 0x3F8, 1, 115200);
    early_puts("pmubench " PMB_VERSION " (" PMB_GITREV "): BIOS stage (Multiboot2), collecting loader data\n");
    if (magic != MB2_BOOTLOADER_MAGIC) {
        fmt_snprintf(err, sizeof(err), "pmubench: not started by a Multiboot2 loader (EAX = 0x%x)", magic);
        stop(err);
    }

    memset(bi, 0, sizeof(*bi));
    bi->magic = BOOT_INFO_MAGIC;
    bi->boot_tsc = tsc0;
    memcpy(bi->firmware, "bios", 5);
    int rc = mb2_parse((const void *)(uintptr_t)mbi, UINT32_MAX, identity, NULL, bi, &r, err, sizeof(err));
    if (rc < 0)
        stop(err);
    if (rc == MB2_NO_RSDP) {
        early_puts(err);
        early_puts("; searching the BIOS areas\n");
        legacy_rsdp(bi);
    }
    if (!bi->smbios && !bi->smbios3)
        legacy_smbios(bi);

    /* Everything still in use is taken out of the map before anything is carved from it. */
    bi->image_base = (uint64_t)(uintptr_t)__mb2_image_start;
    bi->image_size = (uint64_t)(uintptr_t)__mb2_image_end - bi->image_base;
    bool full = mb2_mmap_claim(bi, bi->image_base, bi->image_size) != 0;
    full |= mb2_mmap_claim(bi, mbi, r.total_size) != 0;
    for (uint32_t i = 0; i < r.nmods && i < MB2_MAX_MODULES; i++)
        full |= mb2_mmap_claim(bi, r.mods[i].base, r.mods[i].end - r.mods[i].base) != 0;
    if (full)
        stop("pmubench: memory map full");

    bi->trampoline = mb2_mmap_alloc(bi, BOOT_TRAMPOLINE_BYTES, TRAMPOLINE_MIN, TRAMPOLINE_MAX);
    bi->stack_base = must_alloc(bi, KERNEL_STACK_BYTES, 1ULL << 20, IDENTITY_LIMIT, "kernel stack");
    bi->stack_size = KERNEL_STACK_BYTES;
    bi->scratch_base = must_alloc(bi, SCRATCH_BYTES, 1ULL << 20, IDENTITY_LIMIT, "kernel scratch region");
    bi->scratch_size = SCRATCH_BYTES;

    early_puts("pmubench: entering the kernel\n");
    switch_stack_call(bi->stack_base + bi->stack_size, (void (*)(void *))kernel_main, bi);
}
