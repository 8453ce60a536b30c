/* pci.c - PCI configuration space reads (mechanism #1, AMD's extended registers), for the northbridge registers pmubench reads. */
#include "kernel/pci.h"
#include "kernel/io.h"
#include "kernel/msr.h"

#define PCI_CONFIG_ADDRESS 0xCF8
#define PCI_CONFIG_DATA 0xCFC

static bool present(unsigned bus, unsigned dev, unsigned fn)
{
    outl(PCI_CONFIG_ADDRESS, pci_cfg_address(bus, dev, fn, 0));
    return (inl(PCI_CONFIG_DATA) & 0xffffu) != 0xffffu;
}

int pci_cfg_read32(unsigned bus, unsigned dev, unsigned fn, unsigned reg, uint32_t *out)
{
    if (reg > 0xfc || !present(bus, dev, fn))
        return -1;
    outl(PCI_CONFIG_ADDRESS, pci_cfg_address(bus, dev, fn, reg));
    *out = inl(PCI_CONFIG_DATA);
    return 0;
}

int pci_cfg_read32_amd_ext(unsigned bus, unsigned dev, unsigned fn, unsigned reg, uint32_t *out)
{
    uint64_t nb;
    if (reg > 0xffc || !present(bus, dev, fn))
        return -1;
    if (reg <= 0xfc)
        return pci_cfg_read32(bus, dev, fn, reg, out);
    if (rdmsr_safe(MSR_AMD64_NB_CFG, &nb) != MSR_OK)
        return -1;
    bool set = !(nb & AMD64_NB_CFG_ENABLE_CF8_EXT_CFG);
    if (set && wrmsr_safe(MSR_AMD64_NB_CFG, nb | AMD64_NB_CFG_ENABLE_CF8_EXT_CFG) != MSR_OK)
        return -1;
    outl(PCI_CONFIG_ADDRESS, pci_cfg_address(bus, dev, fn, reg));
    *out = inl(PCI_CONFIG_DATA);
    if (set)
        wrmsr_safe(MSR_AMD64_NB_CFG, nb);
    return 0;
}
