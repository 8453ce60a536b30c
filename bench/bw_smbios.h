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

#define SMBIOS_TYPE_PHYSICAL_MEMORY_ARRAY 16
#define SMBIOS_TYPE_MEMORY_DEVICE 17
#define SMBIOS_TYPE_END 127
#define SMBIOS_MAX_DIMMS 64
#define SMBIOS_STR_MAX 32
#define SMBIOS_ARRAY_USE_SYSTEM 0x03 /* type 16 Use: system memory (DSP0134 Table 73) */

/* One type 17 structure, decoded. 0 means "unknown/not given" in every numeric field. */
struct smbios_dimm {
    uint16_t handle;
    uint16_t array_handle; /* the type 16 array it belongs to (0xFFFE: none given) */
    uint64_t size_bytes;   /* 0: empty slot (Size 0); size 0xFFFF (unknown) also gives 0 but sets size_unknown */
    bool size_unknown;
    uint16_t total_width;         /* bits, with ECC */
    uint16_t data_width;          /* bits */
    uint32_t speed_mts;           /* Speed (2.3+) or Extended Speed (3.3+) when Speed is 0xFFFF: max capable, MT/s */
    uint32_t configured_mts;      /* Configured Memory Speed (2.7+) or Extended Configured Memory Speed (3.3+) */
    uint8_t type;                 /* Memory Type (0x18 DDR3, 0x1A DDR4, 0x22 DDR5 ...) */
    char locator[SMBIOS_STR_MAX]; /* Device Locator, cut to fit */
    char bank[SMBIOS_STR_MAX];    /* Bank Locator */
};

struct smbios_mem {
    uint32_t structures; /* structures walked (the end marker included) */
    uint32_t devices;    /* type 17 structures seen */
    uint32_t populated;  /* of those, with a device installed (Size != 0) */
    uint32_t kept;       /* stored in dimm[] (at most SMBIOS_MAX_DIMMS) */
    uint32_t arrays;     /* type 16 structures with Use = system memory */
    uint32_t slots;      /* their Number of Memory Devices, summed (0: no type 16) */
    bool ended;          /* the type 127 end marker was found */
    struct smbios_dimm dimm[SMBIOS_MAX_DIMMS];
};

/* Walks the structure table (len bytes) and decodes every type 16 (system memory only) and type 17
 * structure. Stops at the type 127 end marker or at len. Returns SMBIOS_OK, or SMBIOS_ETRUNC when a
 * structure is malformed or cut off (what was decoded before it is kept in out). */
int smbios_mem_parse(const void *table, size_t len, struct smbios_mem *out);

/* String number n (1-based) of the structure at s (formatted length s[1]), copied into dst (cut to dstlen).
 * "" for n == 0 or a missing string. `end` bounds the reads. */
void smbios_string(const uint8_t *s, const uint8_t *end, uint8_t n, char *dst, size_t dstlen);

/* "ddr3", "ddr4", "ddr5", "lpddr4" ... for a Memory Type byte; "other" for the rest. */
const char *smbios_mem_type_name(uint8_t type);

/* ---- memory channels from the locator strings ----------------------------------------------------------------
 * SMBIOS has no channel field: type 17 names a device only by its Device Locator and Bank Locator strings,
 * in the vendor's words. smbios_channel_parse reads the patterns below (case-insensitive; a keyword starts
 * a word, i.e. it is not preceded by a letter) and nothing else:
 *   CHANNEL<sep?><id>       "ChannelA-DIMM0", "P0 CHANNEL A", "P0_Node0_Channel1_Dimm0", "Controller0-ChannelB"
 *                           id: one letter (not followed by a letter) or a number
 *   DIMM<sep?><L><n>        "DIMM_A1", "CPU1_DIMM_B2", "P1-DIMMA1": letter L = channel, n = slot in it
 *   DIMM<sep?><n>           "DIMM 0", "Dimm1": a slot number only, no channel
 *   CPU<n>, PROC<n>, SOCKET<n>, P<n> (a word of its own: "P0_", "P1-")   socket
 *   NODE<n>   CONTROLLER<n>                                                 qualifiers of the channel
 * (<sep?>: an optional ' ', '_' or '-'). The channel comes from a CHANNEL keyword (bank locator first), else
 * from DIMM<L><n> (device locator first); socket, node, controller and slot from the same string, else from
 * the other one. Two devices are on one channel when socket, node, controller and channel id all agree.
 * Dell PowerEdge "A1" (letter = CPU), HPE "PROC 1 DIMM 1", Lenovo "DIMM 1", "BANK 0", "Not Specified" name no
 * channel: such a table gives no channel count. */
struct smbios_chan_id {
    bool ok;                            /* a channel was named */
    int socket, node, controller, slot; /* -1 when not named */
    char channel[8];                    /* as named, upper case: "A", "0" */
    const char *from;                   /* "bank locator" or "device locator" */
};
bool smbios_channel_parse(const char *bank, const char *locator, struct smbios_chan_id *out);

/* Theoretical DRAM peak per DSP0134 data: channels x transfer rate x bus width.
 * - devices: the populated ones (Size != 0); each must give a data width and a speed (else unknown);
 * - speed: per device the Configured Memory Speed (20h / 58h) when given, else the maximum Speed (15h / 54h);
 *   the slowest device's (one memory clock drives every channel);
 * - channels: one populated device is one channel; more are grouped by smbios_channel_parse, and when any
 *   device's locators name no channel, or two devices name the same channel and slot, the peak is unknown
 *   (one DIMM per channel is never assumed); more channels than the type 16 slots is unknown too;
 * - width of a channel: the narrowest data width of its devices (ECC bits excluded);
 * - peak = sum over channels of MT/s x 1e6 x width / 8 bytes/s; per socket when the locators name the socket
 *   of every device and each socket has the same peak.
 * Returns false with out->why set when unknown. */
struct smbios_peak {
    double bytes_per_s;
    double per_socket_bytes_per_s; /* 0: not known (sockets not named, or unequal) */
    uint32_t dimms;                /* populated devices counted */
    uint32_t channels;
    uint32_t max_dimms_per_channel;
    uint32_t sockets;           /* distinct sockets named (0: not named) */
    uint32_t mts;               /* the slowest device's speed, MT/s */
    bool mts_configured;        /* every device gave its configured speed */
    uint32_t data_width;        /* narrowest channel width, bits */
    uint8_t type;               /* memory type of the first device counted */
    const char *channel_method; /* how the channels were counted */
    char formula[128];          /* the arithmetic, with the numbers */
    char why[192];              /* when unknown */
};
bool smbios_peak(const struct smbios_mem *m, struct smbios_peak *out);

#endif
