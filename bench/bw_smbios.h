/* bw_smbios.h - SMBIOS entry points and memory devices (type 17): the DIMMs' speed and width, for the theoretical DRAM bandwidth. */
#ifndef PMB_BENCH_BW_SMBIOS_H
#define PMB_BENCH_BW_SMBIOS_H

#include "kernel/klib.h"

/* Sources: DMTF DSP0134 (SMBIOS Reference Specification) 3.x: 5.2.1 "SMBIOS 2.1 (32-bit) Entry Point",
 * 5.2.2 "SMBIOS 3.0 (64-bit) Entry Point", 6.1.2 "Structure header format", 6.1.3 "Text strings",
 * 7.18 "Memory Device (Type 17)". */

enum {
    SMBIOS_OK = 0,
    SMBIOS_EANCHOR = -1,   /* no "_SM_"/"_SM3_" anchor (or "_DMI_" intermediate anchor) */
    SMBIOS_ECHECKSUM = -2, /* entry point bytes do not sum to 0 */
    SMBIOS_ELEN = -3,      /* entry point length field impossible, or fewer bytes available than it says */
    SMBIOS_ETRUNC = -4,    /* a structure or its string set runs past the table's end */
    SMBIOS_EINVAL = -5,    /* NULL argument */
};

struct smbios_entry {
    uint8_t major, minor, docrev; /* docrev: 3.x entry points only */
    bool v3;                      /* "_SM3_" (64-bit) vs "_SM_" */
    uint64_t table_phys;          /* structure table address */
    uint32_t table_len;           /* 2.1: exact length; 3.0: maximum size (the walk stops at type 127) */
};

/* Validates a 2.1 or 3.0 entry point of `avail` readable bytes (anchor, length, checksums) and returns where
 * the structure table is. */
int smbios_entry_parse(const void *ep, size_t avail, struct smbios_entry *out);

#define SMBIOS_TYPE_MEMORY_DEVICE 17
#define SMBIOS_TYPE_END 127
#define SMBIOS_MAX_DIMMS 64
#define SMBIOS_STR_MAX 32

/* One type 17 structure, decoded. 0 means "unknown/not given" in every numeric field. */
struct smbios_dimm {
    uint16_t handle;
    uint64_t size_bytes;     /* 0: empty slot (Size 0); size 0xFFFF (unknown) also gives 0 but sets size_unknown */
    bool size_unknown;
    uint16_t total_width;    /* bits, with ECC */
    uint16_t data_width;     /* bits */
    uint32_t speed_mts;      /* Speed (2.3+) or Extended Speed (3.3+) when Speed is 0xFFFF: max capable, MT/s */
    uint32_t configured_mts; /* Configured Memory Speed (2.7+) or Extended Configured Memory Speed (3.3+) */
    uint8_t type;            /* Memory Type (0x18 DDR3, 0x1A DDR4, 0x22 DDR5 ...) */
    char locator[SMBIOS_STR_MAX]; /* Device Locator, cut to fit */
    char bank[SMBIOS_STR_MAX];    /* Bank Locator */
};

struct smbios_mem {
    uint32_t structures; /* structures walked (the end marker included) */
    uint32_t devices;    /* type 17 structures seen */
    uint32_t populated;  /* of those, with a device installed (Size != 0) */
    uint32_t kept;       /* stored in dimm[] (at most SMBIOS_MAX_DIMMS) */
    bool ended;          /* the type 127 end marker was found */
    struct smbios_dimm dimm[SMBIOS_MAX_DIMMS];
};

/* Walks the structure table (len bytes) and decodes every type 17 structure. Stops at the type 127 end
 * marker or at len. Returns SMBIOS_OK, or SMBIOS_ETRUNC when a structure is malformed or cut off (what was
 * decoded before it is kept in out). */
int smbios_mem_parse(const void *table, size_t len, struct smbios_mem *out);

/* String number n (1-based) of the structure at s (formatted length s[1]), copied into dst (cut to dstlen).
 * "" for n == 0 or a missing string. `end` bounds the reads. */
void smbios_string(const uint8_t *s, const uint8_t *end, uint8_t n, char *dst, size_t dstlen);

/* "ddr3", "ddr4", "ddr5", "lpddr4" ... for a Memory Type byte; "other" for the rest. */
const char *smbios_mem_type_name(uint8_t type);

/* Theoretical DRAM peak from the populated devices: sum over DIMMs of speed (MT/s) x data width / 8. It
 * assumes each DIMM has a channel to itself: with two DIMMs per channel it is an upper bound (the type 17
 * locator strings are too vendor-specific to tell channels apart reliably).
 * Speed is the configured speed, else the maximum capable speed (then *method says so). Returns false with
 * *why set when no populated device gives both a speed and a data width. */
struct smbios_peak {
    double bytes_per_s;
    uint32_t dimms;      /* DIMMs counted */
    uint32_t mts;        /* speed of the first counted DIMM (for the text) */
    uint32_t data_width; /* its data width, bits */
    uint8_t type;
    const char *method;
};
bool smbios_peak(const struct smbios_mem *m, struct smbios_peak *out, const char **why);

#endif
