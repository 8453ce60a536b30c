/* bw_smbios.c - SMBIOS entry point validation and the type 17 (Memory Device) walk; pure, host-tested. */
#include "bench/bw_smbios.h"

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | ((uint32_t)rd16(p + 2) << 16); }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32); }

static uint8_t sum8(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s = (uint8_t)(s + *p++);
    return s;
}

int smbios_entry_parse(const void *ep, size_t avail, struct smbios_entry *out)
{
    if (!ep || !out)
        return SMBIOS_EINVAL;
    const uint8_t *p = ep;
    *out = (struct smbios_entry){0};
    if (avail >= 5 && !memcmp(p, "_SM3_", 5)) {
        /* 3.0: 05h checksum, 06h length (18h), 07h major, 08h minor, 09h docrev, 0Ah EP revision,
         * 0Ch structure table maximum size (DWORD), 10h structure table address (QWORD). */
        if (avail < 7 || p[6] < 0x18 || p[6] > avail)
            return SMBIOS_ELEN;
        if (sum8(p, p[6]))
            return SMBIOS_ECHECKSUM;
        out->v3 = true;
        out->major = p[7];
        out->minor = p[8];
        out->docrev = p[9];
        out->table_len = rd32(p + 0x0C);
        out->table_phys = rd64(p + 0x10);
        return SMBIOS_OK;
    }
    if (avail >= 4 && !memcmp(p, "_SM_", 4)) {
        /* 2.1: 04h checksum, 05h length (1Fh; 1Eh in the 2.1 spec's erratum), 06h major, 07h minor,
         * 10h "_DMI_", 15h intermediate checksum (over 0Fh bytes from 10h), 16h table length (WORD),
         * 18h table address (DWORD), 1Ch structure count. */
        if (avail < 6 || p[5] < 0x1E || p[5] > avail)
            return SMBIOS_ELEN;
        if (sum8(p, p[5]))
            return SMBIOS_ECHECKSUM;
        if (memcmp(p + 0x10, "_DMI_", 5))
            return SMBIOS_EANCHOR;
        if (sum8(p + 0x10, 0x0F))
            return SMBIOS_ECHECKSUM;
        out->major = p[6];
        out->minor = p[7];
        out->table_len = rd16(p + 0x16);
        out->table_phys = rd32(p + 0x18);
        return SMBIOS_OK;
    }
    return SMBIOS_EANCHOR;
}

void smbios_string(const uint8_t *s, const uint8_t *end, uint8_t n, char *dst, size_t dstlen)
{
    if (!dstlen)
        return;
    dst[0] = 0;
    if (!n || s + 4 > end || s + s[1] > end)
        return;
    const uint8_t *p = s + s[1];
    for (uint8_t i = 1; p < end && *p; i++) {
        const uint8_t *q = p;
        while (q < end && *q)
            q++;
        if (i == n) {
            size_t k = 0;
            for (; p < q && k + 1 < dstlen; p++)
                dst[k++] = (*p >= 0x20 && *p < 0x7F) ? (char)*p : '?';
            dst[k] = 0;
            return;
        }
        p = q + 1;
    }
}

/* Type 17 field offsets (DSP0134 7.18, Table 75) and the spec version that added each. */
#define T17_TOTAL_WIDTH 0x08 /* 2.1 */
#define T17_DATA_WIDTH 0x0A
#define T17_SIZE 0x0C
#define T17_DEVICE_LOCATOR 0x10
#define T17_BANK_LOCATOR 0x11
#define T17_MEMORY_TYPE 0x12
#define T17_SPEED 0x15           /* 2.3 */
#define T17_EXTENDED_SIZE 0x1C   /* 2.7 */
#define T17_CONFIGURED_SPEED 0x20 /* 2.7 ("Configured Memory Clock Speed", renamed in 3.2; MT/s) */
#define T17_EXTENDED_SPEED 0x54  /* 3.3 */
#define T17_EXTENDED_CONFIGURED_SPEED 0x58 /* 3.3 */

static uint16_t width(uint16_t w) { return w == 0xFFFF ? 0 : w; }

/* Speed WORD: 0 unknown, 0xFFFF "see the extended DWORD" (whose bit 31 is reserved). */
static uint32_t speed(const uint8_t *s, uint8_t len, unsigned off, unsigned ext_off)
{
    if (len < off + 2)
        return 0;
    uint16_t v = rd16(s + off);
    if (v != 0xFFFF)
        return v;
    return len >= ext_off + 4 ? rd32(s + ext_off) & 0x7FFFFFFFu : 0;
}

static void decode_t17(const uint8_t *s, const uint8_t *end, struct smbios_dimm *d)
{
    uint8_t len = s[1];
    *d = (struct smbios_dimm){0};
    d->handle = rd16(s + 2);
    if (len >= T17_DATA_WIDTH + 2) {
        d->total_width = width(rd16(s + T17_TOTAL_WIDTH));
        d->data_width = width(rd16(s + T17_DATA_WIDTH));
    }
    if (len >= T17_SIZE + 2) {
        uint16_t sz = rd16(s + T17_SIZE);
        if (sz == 0xFFFF)
            d->size_unknown = true;
        else if (sz == 0x7FFF && len >= T17_EXTENDED_SIZE + 4)
            d->size_bytes = (uint64_t)(rd32(s + T17_EXTENDED_SIZE) & 0x7FFFFFFFu) << 20; /* MB */
        else if (sz & 0x8000)
            d->size_bytes = (uint64_t)(sz & 0x7FFF) << 10; /* KB granularity */
        else
            d->size_bytes = (uint64_t)sz << 20;
    }
    if (len > T17_BANK_LOCATOR) {
        smbios_string(s, end, s[T17_DEVICE_LOCATOR], d->locator, sizeof(d->locator));
        smbios_string(s, end, s[T17_BANK_LOCATOR], d->bank, sizeof(d->bank));
    }
    if (len > T17_MEMORY_TYPE)
        d->type = s[T17_MEMORY_TYPE];
    d->speed_mts = speed(s, len, T17_SPEED, T17_EXTENDED_SPEED);
    d->configured_mts = speed(s, len, T17_CONFIGURED_SPEED, T17_EXTENDED_CONFIGURED_SPEED);
}

int smbios_mem_parse(const void *table, size_t len, struct smbios_mem *out)
{
    if (!table || !out)
        return SMBIOS_EINVAL;
    *out = (struct smbios_mem){0};
    const uint8_t *p = table, *end = p + len;
    while (p < end) {
        /* Header: type, formatted length (>= 4), handle; then strings, the set ending in two NULs. */
        if ((size_t)(end - p) < 4 || p[1] < 4 || p[1] > (size_t)(end - p))
            return SMBIOS_ETRUNC;
        const uint8_t *q = p + p[1];
        while (q + 1 < end && (q[0] || q[1]))
            q++;
        if (q + 1 >= end)
            return SMBIOS_ETRUNC;
        const uint8_t *next = q + 2;
        out->structures++;
        if (p[0] == SMBIOS_TYPE_MEMORY_DEVICE) {
            struct smbios_dimm d;
            decode_t17(p, next, &d);
            out->devices++;
            if (d.size_bytes || d.size_unknown)
                out->populated++;
            if (out->kept < SMBIOS_MAX_DIMMS)
                out->dimm[out->kept++] = d;
        }
        if (p[0] == SMBIOS_TYPE_END) {
            out->ended = true;
            break;
        }
        p = next;
    }
    return SMBIOS_OK;
}

const char *smbios_mem_type_name(uint8_t type)
{
    /* DSP0134 Table 77 "Memory Device: Type". */
    switch (type) {
    case 0x12: return "ddr";
    case 0x13: return "ddr2";
    case 0x18: return "ddr3";
    case 0x1A: return "ddr4";
    case 0x1B: return "lpddr";
    case 0x1C: return "lpddr2";
    case 0x1D: return "lpddr3";
    case 0x1E: return "lpddr4";
    case 0x20: return "hbm";
    case 0x21: return "hbm2";
    case 0x22: return "ddr5";
    case 0x23: return "lpddr5";
    case 0x24: return "hbm3";
    default: return "other";
    }
}

bool smbios_peak(const struct smbios_mem *m, struct smbios_peak *out, const char **why)
{
    const char *w = NULL;
    *out = (struct smbios_peak){0};
    if (!m || !m->devices)
        w = "SMBIOS lists no memory devices (type 17)";
    bool any_populated = false, used_max = false;
    for (uint32_t i = 0; !w && i < m->kept; i++) {
        const struct smbios_dimm *d = &m->dimm[i];
        if (!d->size_bytes && !d->size_unknown)
            continue;
        any_populated = true;
        uint32_t mts = d->configured_mts ? d->configured_mts : d->speed_mts;
        if (!mts || !d->data_width)
            continue;
        used_max |= !d->configured_mts;
        out->bytes_per_s += (double)mts * 1e6 * (double)d->data_width / 8.0;
        if (!out->dimms++) {
            out->mts = mts;
            out->data_width = d->data_width;
            out->type = d->type;
        }
    }
    if (!w && !any_populated)
        w = "SMBIOS type 17: no populated memory device";
    else if (!w && !out->dimms)
        w = "SMBIOS type 17: no populated device gives both a speed and a data width";
    if (w) {
        *out = (struct smbios_peak){0};
        if (why)
            *why = w;
        return false;
    }
    out->method = used_max ? "smbios17: sum of max-capable speed x data width (configured speed not given), "
                             "one DIMM per channel assumed"
                           : "smbios17: sum of configured speed x data width, one DIMM per channel assumed";
    if (why)
        *why = "";
    return true;
}
