/* power.c - end of a run: make the exit status visible to whoever started us, then stop. */
#include "kernel/power.h"
#include "kernel/io.h"
#include "kernel/out.h"

#define QEMU_DEBUG_EXIT_PORT 0xF4 /* -device isa-debug-exit,iobase=0xf4: QEMU exits with (v << 1) | 1 */
#define EFI_RT_RESET_SYSTEM_OFFSET 104 /* EFI_TABLE_HEADER (24) + 10 function pointers before ResetSystem */
#define EFI_RESET_COLD 0
#define EFI_RESET_SHUTDOWN 2
#define PM1_SLP_EN (1u << 13)

static struct power_info pinfo;
static enum finish_how finish_how = HOW_SHUTDOWN;

void power_setup(const struct power_info *p, enum finish_how how)
{
    pinfo = *p;
    finish_how = how;
}

enum finish_how power_how(void) { return finish_how; }

const char *run_status_name(enum run_status s)
{
    return s == RUN_OK ? "ok" : s == RUN_ERROR ? "error" : "crashed";
}

typedef void (__attribute__((ms_abi)) *efi_reset_fn)(uint32_t type, uint64_t status, uint64_t size, void *data);

static void efi_reset(uint32_t type, enum run_status s)
{
    if (!pinfo.runtime_services)
        return;
    efi_reset_fn fn = *(efi_reset_fn *)(uintptr_t)(pinfo.runtime_services + EFI_RT_RESET_SYSTEM_OFFSET);
    if (fn)
        fn(type, s == RUN_OK ? 0 : 0x8000000000000001ULL, 0, NULL);
}

void machine_finish(enum run_status s)
{
    cli();
    if (finish_how != HOW_HALT) {
        if (pinfo.hypervisor)
            outl(QEMU_DEBUG_EXIT_PORT, (uint32_t)s);
        if (finish_how == HOW_REBOOT) {
            if (pinfo.reset_reg && pinfo.reset_reg_io)
                outb((uint16_t)pinfo.reset_reg, pinfo.reset_value);
            efi_reset(EFI_RESET_COLD, s);
            outb(0xCF9, 0x0E); /* PCI reset control: full reset */
        } else {
            if (pinfo.s5_valid && pinfo.pm1a_cnt) {
                outw((uint16_t)pinfo.pm1a_cnt, (uint16_t)(pinfo.slp_typa << 10 | PM1_SLP_EN));
                if (pinfo.pm1b_cnt)
                    outw((uint16_t)pinfo.pm1b_cnt, (uint16_t)(pinfo.slp_typb << 10 | PM1_SLP_EN));
            }
            efi_reset(EFI_RESET_SHUTDOWN, s);
        }
    }
    /* Still here: nothing stopped the machine (or on_finish=halt). Say so as the last line, then halt. */
    if (finish_how == HOW_HALT)
        kprintf("pmubench: halted (on_finish=halt)\n");
    else
        kprintf("pmubench: %s did not stop the machine (tried:%s%s%s): halted\n",
                finish_how == HOW_REBOOT ? "reboot" : "power-off", pinfo.hypervisor ? " isa-debug-exit" : "",
                finish_how == HOW_REBOOT ? " FADT reset register, port 0xCF9" : pinfo.s5_valid ? " ACPI S5" : "",
                pinfo.runtime_services ? " UEFI ResetSystem" : "");
    for (;;)
        hlt();
}
