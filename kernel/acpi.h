/* acpi.h - defensive parser for the ACPI tables pmubench uses (MADT, SRAT, SLIT, FADT + DSDT \_S5, HPET, SPCR). */
#ifndef PMB_ACPI_H
#define PMB_ACPI_H

#include "kernel/klib.h"

/*
 * Pure logic: no I/O, no allocation. Every byte of firmware memory is reached through the
 * caller's map function, which says how much is accessible; nothing is read outside what
 * it granted. Section numbers below are ACPI 6.5 unless noted. See docs/acpi.md.
 */

#define ACPI_MAX_TABLES     128  /* tables recorded in acpi_info.tables[] (root + DSDT included) */
#define ACPI_MAX_ROOT_ENTRIES 1024 /* XSDT/RSDT entries looked at; more is hostile */
#define ACPI_MAX_CPUS       512
#define ACPI_MAX_IOAPICS    32
#define ACPI_MAX_MEM_RANGES 64
#define ACPI_MAX_NODES      16   /* NUMA nodes, and SLIT localities */
#define ACPI_MAX_TABLE_LEN  (16u << 20) /* largest table accepted; real DSDTs stay under ~1 MiB */

#define ACPI_HDR_LEN        36   /* System Description Table Header (5.2.6) */
#define ACPI_RSDP_V1_LEN    20   /* RSDP checksum covers these bytes (5.2.5.3) */
#define ACPI_RSDP_V2_LEN    36   /* extended checksum covers these bytes */

/* Local distances used when there is no usable SLIT (5.2.17: 10 = local; Linux uses 20 remote). */
#define ACPI_DIST_LOCAL     10
#define ACPI_DIST_REMOTE    20

/* Returns a pointer to [phys, phys+len) or NULL when that range is not accessible. The pointer
 * must stay valid until acpi_parse() returns (the root table is read while others are mapped). */
typedef const void *(*acpi_map_fn)(uint64_t phys, uint64_t len, void *ctx);

/* acpi_parse() results. Tables that are bad are reported in tables[], not here. */
enum acpi_err {
    ACPI_OK = 0,
    ACPI_E_ARG = -1,            /* NULL ai/map or rsdp_phys 0 */
    ACPI_E_RSDP_UNMAPPED = -2,  /* map() refused the RSDP */
    ACPI_E_RSDP_SIG = -3,       /* not "RSD PTR " */
    ACPI_E_RSDP_CHECKSUM = -4,  /* first 20 bytes do not sum to 0 */
    ACPI_E_RSDP_XCHECKSUM = -5, /* v2 extended checksum bad and no RSDT to fall back to */
    ACPI_E_NO_ROOT = -6,        /* neither XSDT nor RSDT usable (see tables[] for why) */
};

/* Why a table in tables[] was not (fully) used. */
enum acpi_tbl_status {
    ACPI_TBL_OK = 0,        /* valid; parsed if pmubench interprets it, else only listed */
    ACPI_TBL_UNMAPPED,      /* header not accessible through map() */
    ACPI_TBL_BAD_LENGTH,    /* length < 36, > ACPI_MAX_TABLE_LEN, or wraps the address space */
    ACPI_TBL_OVERRUN,       /* header fine but length runs past what map() allows */
    ACPI_TBL_BAD_CHECKSUM,  /* bytes do not sum to 0: not parsed */
    ACPI_TBL_BAD_SIG,       /* reached by a typed pointer (XSDT, RSDT, DSDT) but signature differs */
    ACPI_TBL_MALFORMED,     /* checksum fine, contents inconsistent: see why; parsed part kept if parsed */
    ACPI_TBL_DUPLICATE,     /* second valid copy of a table we interpret: ignored (first one wins) */
};

/* Generic Address Structure (5.2.3.2). */
struct acpi_gas {
    uint8_t space_id;    /* enum acpi_gas_space */
    uint8_t bit_width;   /* register width in bits */
    uint8_t bit_offset;
    uint8_t access_size; /* 0 undefined, 1 byte, 2 word, 3 dword, 4 qword */
    uint64_t address;    /* 0 = not present */
};

/* GAS Address Space ID values (5.2.3.2, Table 5.26). */
enum acpi_gas_space {
    ACPI_GAS_MEMORY = 0x00, ACPI_GAS_IO = 0x01, ACPI_GAS_PCI_CONFIG = 0x02, ACPI_GAS_EC = 0x03,
    ACPI_GAS_SMBUS = 0x04, ACPI_GAS_CMOS = 0x05, ACPI_GAS_PCI_BAR = 0x06, ACPI_GAS_IPMI = 0x07,
    ACPI_GAS_GPIO = 0x08, ACPI_GAS_SERIAL_BUS = 0x09, ACPI_GAS_PCC = 0x0A, ACPI_GAS_PRM = 0x0B,
    ACPI_GAS_FFH = 0x7F,
};

/* One table seen while walking the root table (plus the root itself and the FADT's DSDT). */
struct acpi_table {
    char sig[5];          /* "APIC", ...; "????" when the header could not be read */
    char oem_id[7];       /* trailing blanks trimmed, non-printables replaced by '?' */
    char oem_table_id[9];
    uint8_t revision;
    uint8_t status;       /* enum acpi_tbl_status */
    bool checksum_ok;     /* whole table was mapped and sums to 0 */
    bool parsed;          /* contents were used to fill acpi_info */
    uint32_t length;      /* as the header claims (even when rejected) */
    uint64_t phys;
    const char *why;      /* short static explanation when status != OK, else NULL */
};

/* A processor from the MADT (Processor Local APIC type 0 or Local x2APIC type 9, 5.2.12.2/12). */
struct acpi_cpu {
    uint32_t apic_id;     /* xAPIC id (0..254) or x2APIC id */
    uint32_t acpi_uid;    /* ACPI Processor UID (8-bit in type 0 entries) */
    bool enabled;         /* flags bit 0: usable now */
    bool online_capable;  /* flags bit 1 (ACPI 6.3+): disabled but may be brought online */
    bool x2apic;          /* described by a type 9 entry */
    int16_t node;         /* dense NUMA node (see below); 0 without SRAT, -1 if SRAT omits it */
};

/* An I/O APIC (MADT type 1, 5.2.12.3). */
struct acpi_ioapic {
    uint8_t id;
    uint32_t address;
    uint32_t gsi_base;
};

/* SRAT Processor Local APIC (type 0) / x2APIC (type 2) Affinity, enabled entries only (5.2.16.1/3). */
struct acpi_cpu_affinity {
    uint32_t apic_id;
    uint32_t domain;      /* proximity domain as the firmware numbers it */
    bool x2apic;
};

/* SRAT Memory Affinity (type 1, 5.2.16.2). Disabled entries are kept but never matched. */
struct acpi_mem_range {
    uint64_t base, length;
    uint32_t domain;
    int16_t node;         /* dense node id, -1 when disabled or its domain did not fit */
    bool enabled;         /* flags bit 0 */
    bool hotpluggable;    /* flags bit 1 */
    bool nonvolatile;     /* flags bit 2 */
};

/* FADT flags (5.2.9, Table 5.10) and IA-PC boot architecture flags (Table 5.11) we look at. */
#define ACPI_FADT_WBINVD          (1u << 0)
#define ACPI_FADT_TMR_VAL_EXT     (1u << 8)   /* PM timer is 32 bits wide (else 24) */
#define ACPI_FADT_RESET_REG_SUP   (1u << 10)  /* RESET_REG/RESET_VALUE are valid */
#define ACPI_FADT_HW_REDUCED_ACPI (1u << 20)  /* no fixed hardware: no PM timer, no PM1 blocks */
#define ACPI_IAPC_LEGACY_DEVICES  (1u << 0)
#define ACPI_IAPC_8042            (1u << 1)
#define ACPI_IAPC_VGA_NOT_PRESENT (1u << 2)
#define ACPI_IAPC_MSI_NOT_SUPPORTED (1u << 3)
#define ACPI_IAPC_CMOS_RTC_NOT_PRESENT (1u << 5)

/* PM1 Control register bits (4.8.3.2.1, Table 4.13). To power off: write SLP_TYP and SLP_EN. */
#define ACPI_PM1_CNT_SCI_EN          (1u << 0)
#define ACPI_PM1_CNT_SLP_TYP_SHIFT   10
#define ACPI_PM1_CNT_SLP_TYP_MASK    (7u << 10)
#define ACPI_PM1_CNT_SLP_EN          (1u << 13)

/* FADT (5.2.9). Legacy 32-bit block addresses are turned into System I/O GAS when the X_ GAS is 0. */
struct acpi_fadt {
    bool present;
    uint8_t revision;        /* header revision (1 = ACPI 1.0 116-byte FADT) */
    uint8_t minor_revision;  /* FADT Minor Version (ACPI 5.1+) */
    uint32_t flags;          /* ACPI_FADT_* */
    uint16_t iapc_boot_arch; /* ACPI_IAPC_* */
    uint16_t sci_int;
    uint32_t smi_cmd;        /* port to write acpi_enable to when SCI_EN is clear */
    uint8_t acpi_enable, acpi_disable;
    struct acpi_gas pm_timer;      /* X_PM_TMR_BLK, else PM_TMR_BLK as 32-bit I/O; address 0 = none */
    bool pm_timer_32bit;           /* TMR_VAL_EXT: counter is 32 bits, else 24 (3.579545 MHz either way) */
    struct acpi_gas pm1a_cnt, pm1b_cnt; /* X_PM1x_CNT_BLK, else PM1x_CNT_BLK (PM1_CNT_LEN bytes) */
    struct acpi_gas reset_reg;     /* RESET_REG; meaningful only when reset_supported */
    uint8_t reset_value;
    bool reset_supported;          /* RESET_REG_SUP and the table is long enough to hold it */
    uint64_t dsdt_phys;            /* X_DSDT when non-zero, else DSDT */
};

/* HPET description table (IA-PC HPET spec 1.0a, 3.2.4). */
struct acpi_hpet {
    bool present;
    struct acpi_gas base;     /* Base Address of the event timer block */
    uint8_t hw_rev;           /* Event Timer Block ID bits 7:0 */
    uint8_t num_comparators;  /* bits 12:8 hold the last comparator index; this is that + 1 */
    bool counter_64bit;       /* bit 13 COUNT_SIZE_CAP */
    bool legacy_replacement;  /* bit 15 LEG_RT_CAP */
    uint16_t pci_vendor_id;   /* bits 31:16 */
    uint8_t hpet_number;
    uint16_t min_tick;        /* Main Counter Minimum Clock_tick in Periodic Mode */
    uint8_t page_protection;
};

/* SPCR (Microsoft "Serial Port Console Redirection Table", revisions 1..4). */
struct acpi_spcr {
    bool present;
    bool enabled;             /* base address non-zero (0 means redirection disabled) */
    uint8_t revision;
    uint8_t interface_type;   /* DBG2 serial subtype: 0 = full 16550, 0x12 = 16550 with GAS, ... */
    struct acpi_gas base;     /* I/O or MMIO; bit_width is the register width */
    uint8_t interrupt_type;   /* bit 0 PC-AT 8259 IRQ, bit 1 I/O APIC, bit 2 SAPIC, bit 3 GIC */
    uint8_t irq;              /* PC-AT IRQ */
    uint32_t gsi;             /* global system interrupt */
    uint8_t baud_code;        /* raw Configured Baud Rate byte */
    uint32_t baud;            /* decoded: 3=9600 4=19200 6=57600 7=115200; 0 = keep as configured */
    uint8_t parity;           /* 0 = none (the only value defined) */
    uint8_t stop_bits;        /* 1 = 1 stop bit (the only value defined) */
    uint8_t flow_control;     /* bit 0 DCD, bit 1 RTS/CTS, bit 2 XON/XOFF */
    uint8_t terminal_type;    /* 0 VT100, 1 VT100+, 2 VT-UTF8, 3 ANSI */
    uint32_t uart_clock;      /* rev 3+: UART input clock in Hz, 0 = unknown */
};

struct acpi_info {
    /* Root pointer (5.2.5). */
    uint64_t rsdp_phys;
    uint8_t rsdp_revision;    /* 0 = ACPI 1.0 (RSDT only), 2 = ACPI 2.0+ */
    char rsdp_oem_id[7];
    bool rsdp_xchecksum_ok;   /* extended checksum valid (false too when revision < 2) */
    uint64_t rsdt_phys, xsdt_phys; /* as the RSDP gives them */
    bool root_is_xsdt;        /* which root table the walk used */
    uint64_t root_phys;

    /* Every table seen, in walk order: root table(s), entries, then the DSDT. */
    uint32_t table_count;
    uint32_t tables_dropped;  /* seen (and still used) but not recorded: tables[] was full */
    uint32_t root_entries_ignored; /* entries past ACPI_MAX_ROOT_ENTRIES */
    struct acpi_table tables[ACPI_MAX_TABLES];

    /* MADT (5.2.12). CPUs in MADT order (firmware lists the BSP first by convention). */
    bool madt_present;
    uint64_t lapic_addr;      /* Local Interrupt Controller Address, or the type 5 override */
    bool lapic_addr_overridden;
    uint32_t madt_flags;      /* bit 0 PCAT_COMPAT: dual 8259 present */
    uint32_t cpu_count;       /* entries in cpus[] */
    uint32_t cpus_enabled;    /* of those, enabled */
    uint32_t cpus_dropped;    /* valid CPU entries beyond ACPI_MAX_CPUS */
    uint32_t cpus_ignored;    /* invalid id (0xFF / 0xFFFFFFFF) or apic_id listed twice */
    struct acpi_cpu cpus[ACPI_MAX_CPUS];
    uint32_t ioapic_count;    /* all type 1 entries (ioapics[] holds the first ACPI_MAX_IOAPICS) */
    struct acpi_ioapic ioapics[ACPI_MAX_IOAPICS];
    uint32_t iso_count;       /* Interrupt Source Overrides (type 2) */
    uint32_t nmi_count;       /* Local APIC NMI (type 4) + Local x2APIC NMI (type 10) */

    /* SRAT (5.2.16) and the dense node numbering derived from it. */
    bool srat_present;
    uint32_t cpu_affinity_count;
    uint32_t cpu_affinity_dropped;
    struct acpi_cpu_affinity cpu_affinity[ACPI_MAX_CPUS];
    uint32_t mem_count;
    uint32_t mem_dropped;
    struct acpi_mem_range mem[ACPI_MAX_MEM_RANGES];
    /* numa_nodes: distinct proximity domains among enabled SRAT entries, 1 when there are none.
     * Node n is the n-th smallest domain: node_domain[n]. numa_truncated: more than
     * ACPI_MAX_NODES domains; the largest ones got no node (-1). */
    uint32_t numa_nodes;
    bool numa_from_srat;
    bool numa_truncated;
    uint32_t node_domain[ACPI_MAX_NODES];

    /* SLIT (5.2.17): slit[i][j] = distance from locality (= proximity domain) i to j. */
    bool slit_present;
    uint32_t slit_localities;
    uint8_t slit[ACPI_MAX_NODES][ACPI_MAX_NODES];

    struct acpi_fadt fadt;

    /* \_S5 from the DSDT (7.4.2): SLP_TYPa/SLP_TYPb for soft-off. */
    bool s5_valid;
    uint8_t s5_slp_typ_a, s5_slp_typ_b;

    struct acpi_hpet hpet;
    struct acpi_spcr spcr;
};

/* Parse everything reachable from the RSDP at rsdp_phys. ai is always fully initialised.
 * Returns ACPI_OK when a root table was walked (individual tables may still be bad). */
int acpi_parse(struct acpi_info *ai, uint64_t rsdp_phys, acpi_map_fn map, void *ctx);

/* Dense NUMA node of a CPU / physical address: 0 when there is no SRAT, -1 when the SRAT
 * describes neither (or the domain did not fit in ACPI_MAX_NODES). */
int acpi_node_of_apic(const struct acpi_info *ai, uint32_t apic_id);
int acpi_node_of_addr(const struct acpi_info *ai, uint64_t pa);

/* SLIT distance between two dense nodes; 10/20 without a usable SLIT; -1 for a bad node. */
int acpi_node_distance(const struct acpi_info *ai, int from, int to);

/* Value to write into PM1x_CNT (x = 0 for a, 1 for b) for S5 after clearing SLP_TYP:
 * SLP_TYP << 10 | SLP_EN. Returns 0 when \_S5 was not found. Read-modify-write so SCI_EN stays. */
uint16_t acpi_s5_pm1_cnt(const struct acpi_info *ai, int which);

/* First recorded table with this 4-character signature, or NULL. */
const struct acpi_table *acpi_find_table(const struct acpi_info *ai, const char *sig);

/* Short lowercase names for output. Unknown values give "reserved"/"unknown", never NULL. */
const char *acpi_gas_space_name(uint8_t space_id);
const char *acpi_tbl_status_name(uint8_t status);
const char *acpi_strerror(int err);
const char *acpi_spcr_type_name(uint8_t interface_type);

#endif
