/* efi_main.c - the UEFI stage: gather what only firmware can give, leave boot services, enter the kernel.
 * This is the only file that includes gnu-efi headers (see docs/design.md). */
#include <efi.h>
#include <efilib.h>

#include "kernel/boot_info.h"
#include "kernel/io.h"
#include "kernel/serial.h"

#define KERNEL_STACK_BYTES (256 * 1024)
#define SCRATCH_BYTES (16 * 1024 * 1024) /* kernel structures and page tables (kernel/kalloc.c) */
#define TRAMPOLINE_MAX 0x9F000ULL /* below the EBDA; real-mode reachable */
#define EXIT_RETRIES 8

void switch_stack_call(uint64_t stack_top, void (*fn)(void *), void *arg) __attribute__((noreturn));

static struct serial_port early_serial;

static void early_puts(const char *s) { serial_puts(&early_serial, s); }

static void ucs2_to_ascii(const CHAR16 *in, size_t in_chars, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < in_chars && in[i] && o + 1 < cap; i++)
        out[o++] = (in[i] >= 0x20 && in[i] < 0x7F) || in[i] == '\t' ? (char)in[i] : '?';
    out[o] = 0;
}

/* Load options are text only when started from a shell or a boot entry with a text argument; boot
 * manager entries often carry binary optional data, which we must not parse as config. */
static void collect_load_options(EFI_LOADED_IMAGE *li, struct boot_info *bi)
{
    bi->args[0] = 0;
    if (!li->LoadOptions || li->LoadOptionsSize < 2 || (li->LoadOptionsSize & 1))
        return;
    const CHAR16 *w = li->LoadOptions;
    size_t n = li->LoadOptionsSize / 2;
    for (size_t i = 0; i < n; i++) {
        if (w[i] == 0 && i + 1 == n)
            break;
        if (w[i] == 0 || (w[i] < 0x20 && w[i] != '\t') || w[i] >= 0x7F) {
            early_puts("pmubench: load options are not text, ignored\n");
            return;
        }
    }
    ucs2_to_ascii(w, n, bi->args, sizeof(bi->args));
}

static void read_config_file(EFI_HANDLE image, EFI_LOADED_IMAGE *li, struct boot_info *bi)
{
    EFI_FILE_IO_INTERFACE *fs = NULL;
    EFI_FILE_HANDLE root = NULL, f = NULL;
    EFI_STATUS st;

    (void)image;
    bi->cfg_status = 1;
    st = BS->HandleProtocol(li->DeviceHandle, &FileSystemProtocol, (void **)&fs);
    if (EFI_ERROR(st) || !fs)
        return;
    st = fs->OpenVolume(fs, &root);
    if (EFI_ERROR(st))
        return;
    st = root->Open(root, &f, L"pmubench.cfg", EFI_FILE_MODE_READ, 0);
    if (EFI_ERROR(st)) {
        root->Close(root);
        return;
    }
    UINTN len = sizeof(bi->cfg) - 1;
    st = f->Read(f, &len, bi->cfg);
    if (EFI_ERROR(st)) {
        bi->cfg_status = -1;
        len = 0;
    } else {
        bi->cfg_status = 0;
        /* One more read tells whether the file was longer than our buffer. */
        char extra;
        UINTN one = 1;
        if (len == sizeof(bi->cfg) - 1 && !EFI_ERROR(f->Read(f, &one, &extra)) && one == 1)
            bi->cfg_status = -2;
    }
    bi->cfg[len] = 0;
    bi->cfg_len = (uint32_t)len;
    f->Close(f);
    root->Close(root);
}

static void find_config_tables(struct boot_info *bi)
{
    EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
    EFI_GUID smbios = SMBIOS_TABLE_GUID, smbios3 = SMBIOS3_TABLE_GUID;
    for (UINTN i = 0; i < ST->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *t = &ST->ConfigurationTable[i];
        uint64_t p = (uint64_t)(uintptr_t)t->VendorTable;
        if (!CompareGuid(&t->VendorGuid, &acpi20))
            bi->rsdp = p;
        else if (!CompareGuid(&t->VendorGuid, &acpi10))
            bi->rsdp_v1 = p;
        else if (!CompareGuid(&t->VendorGuid, &smbios))
            bi->smbios = p;
        else if (!CompareGuid(&t->VendorGuid, &smbios3))
            bi->smbios3 = p;
    }
}

static EFI_STATUS alloc_pages(EFI_ALLOCATE_TYPE how, uint64_t bytes, uint64_t *addr)
{
    EFI_PHYSICAL_ADDRESS a = *addr;
    EFI_STATUS st = BS->AllocatePages(how, EfiLoaderData, (bytes + 4095) / 4096, &a);
    *addr = EFI_ERROR(st) ? 0 : a;
    return st;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
    uint64_t tsc0 = rdtsc_raw();
    EFI_LOADED_IMAGE *li = NULL;
    struct boot_info *bi;
    uint64_t a;

    InitializeLib(image, systab);
    serial_init(&early_serial, false, 0x3F8, 1, 115200);
    Print(L"pmubench %a: bare-metal PMU and memory-latency calibration\n", PMB_VERSION);
    early_puts("pmubench " PMB_VERSION " (" PMB_GITREV "): UEFI stage, collecting firmware data\n");

    a = 0;
    if (EFI_ERROR(alloc_pages(AllocateAnyPages, sizeof(*bi), &a))) {
        Print(L"pmubench: cannot allocate boot_info\n");
        return EFI_OUT_OF_RESOURCES;
    }
    bi = (struct boot_info *)(uintptr_t)a;
    SetMem(bi, sizeof(*bi), 0);
    bi->magic = BOOT_INFO_MAGIC;
    CopyMem(bi->firmware, "uefi", 5);
    bi->boot_tsc = tsc0;

    if (!EFI_ERROR(BS->HandleProtocol(image, &LoadedImageProtocol, (void **)&li)) && li) {
        bi->image_base = (uint64_t)(uintptr_t)li->ImageBase;
        bi->image_size = li->ImageSize;
        read_config_file(image, li, bi);
        collect_load_options(li, bi);
    }
    find_config_tables(bi);
    bi->runtime_services = (uint64_t)(uintptr_t)ST->RuntimeServices;
    bi->fw_revision = ST->FirmwareRevision;
    if (ST->FirmwareVendor)
        ucs2_to_ascii(ST->FirmwareVendor, 63, bi->fw_vendor, sizeof(bi->fw_vendor));

    a = TRAMPOLINE_MAX;
    if (EFI_ERROR(alloc_pages(AllocateMaxAddress, BOOT_TRAMPOLINE_BYTES, &a)) || a < 0x1000)
        a = 0;
    bi->trampoline = a;
    a = 0;
    if (EFI_ERROR(alloc_pages(AllocateAnyPages, KERNEL_STACK_BYTES, &a))) {
        Print(L"pmubench: cannot allocate the kernel stack\n");
        return EFI_OUT_OF_RESOURCES;
    }
    bi->stack_base = a;
    bi->stack_size = KERNEL_STACK_BYTES;
    a = 0;
    if (EFI_ERROR(alloc_pages(AllocateAnyPages, SCRATCH_BYTES, &a))) {
        Print(L"pmubench: cannot allocate %d MiB of kernel scratch memory\n", SCRATCH_BYTES >> 20);
        return EFI_OUT_OF_RESOURCES;
    }
    bi->scratch_base = a;
    bi->scratch_size = SCRATCH_BYTES;

    /* The map buffer is sized generously now: after a failed ExitBootServices only GetMemoryMap and
     * ExitBootServices may be called again (UEFI spec 7.4), so no reallocation is possible then. */
    UINTN map_size = 0, map_key = 0, desc_size = 0;
    UINT32 desc_ver = 0;
    BS->GetMemoryMap(&map_size, NULL, &map_key, &desc_size, &desc_ver);
    UINTN buf_size = map_size * 2 + 64 * (desc_size ? desc_size : 48);
    uint64_t map_buf = 0;
    if (EFI_ERROR(alloc_pages(AllocateAnyPages, buf_size, &map_buf))) {
        Print(L"pmubench: cannot allocate the memory map buffer\n");
        return EFI_OUT_OF_RESOURCES;
    }
    early_puts("pmubench: leaving boot services\n");

    EFI_STATUS st = EFI_LOAD_ERROR;
    uint32_t tries;
    for (tries = 0; tries < EXIT_RETRIES; tries++) {
        map_size = buf_size;
        st = BS->GetMemoryMap(&map_size, (EFI_MEMORY_DESCRIPTOR *)(uintptr_t)map_buf, &map_key, &desc_size, &desc_ver);
        if (EFI_ERROR(st))
            continue;
        st = BS->ExitBootServices(image, map_key); /* a stale key gives EFI_INVALID_PARAMETER: retry */
        if (!EFI_ERROR(st))
            break;
    }
    if (EFI_ERROR(st)) {
        early_puts("pmubench: ExitBootServices failed after retries\n");
        return st;
    }
    cli();
    bi->exit_retries = tries;

    uint32_t n = 0;
    for (UINTN off = 0; off + desc_size <= map_size && n < BOOT_MAX_MMAP; off += desc_size) {
        EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)(uintptr_t)(map_buf + off);
        bi->mmap[n].type = d->Type;
        bi->mmap[n].phys = d->PhysicalStart;
        bi->mmap[n].pages = d->NumberOfPages;
        bi->mmap[n].attr = d->Attribute;
        n++;
    }
    bi->mmap_count = n;

    switch_stack_call(bi->stack_base + bi->stack_size, (void (*)(void *))kernel_main, bi);
}
