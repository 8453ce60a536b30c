/* echo.c - tiny UEFI app standing in for pmubench.efi in the host-tool QEMU tests. */
/*
 * It proves the QEMU command line pmb.qemu builds: load options reach the image (via the
 * startup.nsh path), raw COM1 output reaches the host, and the isa-debug-exit code comes back.
 * It writes \echo.log (if present on its own volume) byte for byte to COM1, then the line
 * "PMB-ECHO args=<load options>", then writes N from "exit=N" (default 0) to port 0xf4.
 */
#include <efi.h>
#include <efilib.h>

#define COM1 0x3f8
#define COM_LSR 5          /* line status register; bit 5 = THR empty (16550 datasheet) */
#define DEBUG_EXIT_PORT 0xf4

static inline void outb(UINT16 port, UINT8 v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static inline UINT8 inb(UINT16 port) { UINT8 v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static void com_putc(UINT8 c)
{
    for (UINTN i = 0; i < 1000000 && !(inb(COM1 + COM_LSR) & 0x20); i++)
        ;
    outb(COM1, c);
}

static void com_puts(const char *s) { while (*s) com_putc((UINT8)*s++); }

static void dump_file(EFI_HANDLE dev)
{
    EFI_FILE_HANDLE root = LibOpenRoot(dev), f;
    if (!root)
        return;
    if (EFI_ERROR(uefi_call_wrapper(root->Open, 5, root, &f, L"echo.log", EFI_FILE_MODE_READ, 0)))
        return;
    static UINT8 buf[4096];
    for (;;) {
        UINTN n = sizeof(buf);
        if (EFI_ERROR(uefi_call_wrapper(f->Read, 3, f, &n, buf)) || n == 0)
            break;
        for (UINTN i = 0; i < n; i++)
            com_putc(buf[i]);
    }
    uefi_call_wrapper(f->Close, 1, f);
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    EFI_LOADED_IMAGE *li = NULL;
    InitializeLib(image, st);
    uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol, (void **)&li);
    if (li)
        dump_file(li->DeviceHandle);
    com_puts("PMB-ECHO args=");
    int code = 0;
    if (li && li->LoadOptions) {
        CHAR16 *o = li->LoadOptions;
        UINTN n = li->LoadOptionsSize / sizeof(CHAR16);
        for (UINTN i = 0; i < n && o[i]; i++) {
            com_putc(o[i] < 0x80 ? (UINT8)o[i] : '?');
            if (i + 5 < n && o[i] == 'e' && o[i + 1] == 'x' && o[i + 2] == 'i' && o[i + 3] == 't' &&
                o[i + 4] == '=' && o[i + 5] >= '0' && o[i + 5] <= '9')
                code = o[i + 5] - '0';
        }
    }
    com_puts("\r\n");
    outb(DEBUG_EXIT_PORT, (UINT8)code);
    return EFI_SUCCESS;
}
