/* power.h - how a run stops: QEMU isa-debug-exit, UEFI ResetSystem, ACPI S5/reset register, or halt. */
#ifndef PMB_POWER_H
#define PMB_POWER_H

#include "kernel/klib.h"

enum run_status { RUN_OK = 0, RUN_ERROR = 1, RUN_CRASHED = 2 };
enum finish_how { HOW_SHUTDOWN, HOW_REBOOT, HOW_HALT };

struct power_info {
    bool hypervisor;          /* try QEMU's isa-debug-exit (port 0xf4) first */
    uint64_t runtime_services; /* EFI_RUNTIME_SERVICES*, physical mode */
    uint32_t pm1a_cnt, pm1b_cnt; /* I/O ports, 0 when absent */
    bool s5_valid;
    uint8_t slp_typa, slp_typb;
    bool reset_reg_io;
    uint64_t reset_reg;
    uint8_t reset_value;
};

void power_setup(const struct power_info *p, enum finish_how how);
enum finish_how power_how(void);
const char *run_status_name(enum run_status s);
/* Never returns. */
void machine_finish(enum run_status s) __attribute__((noreturn));

#endif
