/* pci.h - PCI configuration space reads through configuration mechanism #1 (ports 0CF8H/0CFCH). */
#ifndef PMB_PCI_H
#define PMB_PCI_H

#include "kernel/klib.h"

/* CONFIG_ADDRESS (0CF8H) for bus/device/function/register: enable bit 31, bus 23:16, device 15:11,
 * function 10:8, dword-aligned register 7:2 (PCI Local Bus Specification 3.0, 3.2.2.3.2); on AMD
 * family 10h and later also register bits 11:8 in 27:24, which the northbridge honours while
 * MSRC001_001F (NB_CFG)[46] EnableCf8ExtCfg is set (BKDG 31116, "Configuration Space"). */
static inline uint32_t pci_cfg_address(unsigned bus, unsigned dev, unsigned fn, unsigned reg)
{
    return 0x80000000u | (((reg >> 8) & 0xfu) << 24) | ((bus & 0xffu) << 16) | ((dev & 0x1fu) << 11) |
           ((fn & 0x7u) << 8) | (reg & 0xfcu);
}

#define MSR_AMD64_NB_CFG 0xC001001F
#define AMD64_NB_CFG_ENABLE_CF8_EXT_CFG (1ULL << 46)

/* The dword at reg (00H-FCH) of bus/dev/fn: 0, or -1 when no device answers there (vendor ID FFFFH) or
 * reg is beyond FCH. Boot CPU only (the 0CF8H/0CFCH pair is not atomic). */
int pci_cfg_read32(unsigned bus, unsigned dev, unsigned fn, unsigned reg, uint32_t *out);
/* The same for an AMD northbridge register 000H-FFCH (family 10h F2x110, ...): with NB_CFG[46] set for
 * the read when it was clear (read-modify-write, restored after). -1 when no device answers, or NB_CFG
 * cannot be read or written. */
int pci_cfg_read32_amd_ext(unsigned bus, unsigned dev, unsigned fn, unsigned reg, uint32_t *out);

#endif
