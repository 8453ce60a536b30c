/* bw_smbios.c - SMBIOS entry point validation and the type 17 (Memory Device) walk; pure, host-tested. */
#include "bench/bw_smbios.h"
#include "kernel/fmt.h"

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

/* Type 16 field offsets (DSP0134 7.17, Table 72). */
#define T16_USE 0x05               /* 2.1 */
#define T16_NUMBER_OF_DEVICES 0x0D /* 2.1: slots or sockets for devices in this array */

/* Type 17 field offsets (DSP0134 7.18, Table 75) and the spec version that added each. */
#define T17_ARRAY_HANDLE 0x04 /* 2.1 */
#define T17_TOTAL_WIDTH 0x08  /* 2.1 */
#define T17_DATA_WIDTH 0x0A
#define T17_SIZE 0x0C
#define T17_DEVICE_LOCATOR 0x10
#define T17_BANK_LOCATOR 0x11
#define T17_MEMORY_TYPE 0x12
#define T17_SPEED 0x15                     /* 2.3 */
#define T17_EXTENDED_SIZE 0x1C             /* 2.7 */
#define T17_CONFIGURED_SPEED 0x20          /* 2.7 ("Configured Memory Clock Speed", renamed in 3.2; MT/s) */
#define T17_EXTENDED_SPEED 0x54            /* 3.3 */
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
    if (len >= T17_ARRAY_HANDLE + 2)
        d->array_handle = rd16(s + T17_ARRAY_HANDLE);
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
        if (p[0] == SMBIOS_TYPE_PHYSICAL_MEMORY_ARRAY && p[1] >= T16_NUMBER_OF_DEVICES + 2 &&
            p[T16_USE] == SMBIOS_ARRAY_USE_SYSTEM) {
            out->arrays++;
            out->slots += rd16(p + T16_NUMBER_OF_DEVICES);
        }
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

/* ---- channels from the locator strings (the parser documented in bw_smbios.h) ------------------------------- */

static bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static bool is_sep(char c) { return c == ' ' || c == '_' || c == '-'; }

/* What one locator string names; -1 / "" when not named. */
struct loc_scan {
    char chan_kw[8];   /* CHANNEL<id> */
    char chan_dimm[8]; /* DIMM<L><n>: L */
    int socket, node, controller, slot;
};

/* Keyword kw at u[i], starting a word (not preceded by a letter). */
static bool kw_at(const char *u, size_t i, const char *kw)
{
    return (i == 0 || !is_alpha(u[i - 1])) && !strncmp(u + i, kw, strlen(kw));
}

/* A number at p, after one optional separator; -1 when there is none. */
static int number_at(const char *p)
{
    if (is_sep(*p) && kl_isdigit(p[1]))
        p++;
    if (!kl_isdigit(*p))
        return -1;
    int v = 0;
    for (; kl_isdigit(*p); p++)
        v = v < 100000 ? v * 10 + (*p - '0') : v;
    return v;
}

static void set_once(int *dst, int v)
{
    if (*dst < 0 && v >= 0)
        *dst = v;
}

static void scan_locator(const char *s, struct loc_scan *o)
{
    char u[SMBIOS_STR_MAX];
    size_t n = 0;
    for (; s && s[n] && n + 1 < sizeof(u); n++)
        u[n] = (s[n] >= 'a' && s[n] <= 'z') ? (char)(s[n] - 32) : s[n];
    u[n] = 0;
    *o = (struct loc_scan){.socket = -1, .node = -1, .controller = -1, .slot = -1};
    for (size_t i = 0; i < n; i++) {
        if (kw_at(u, i, "CHANNEL")) {
            const char *p = u + i + 7;
            if (is_sep(*p))
                p++;
            if (o->chan_kw[0])
                continue;
            if (is_alpha(*p) && !is_alpha(p[1])) {
                o->chan_kw[0] = *p;
            } else {
                for (size_t k = 0; kl_isdigit(p[k]) && k + 1 < sizeof(o->chan_kw); k++)
                    o->chan_kw[k] = p[k];
            }
        } else if (kw_at(u, i, "CONTROLLER")) {
            set_once(&o->controller, number_at(u + i + 10));
        } else if (kw_at(u, i, "SOCKET")) {
            set_once(&o->socket, number_at(u + i + 6));
        } else if (kw_at(u, i, "PROCESSOR")) {
            set_once(&o->socket, number_at(u + i + 9));
        } else if (kw_at(u, i, "PROC")) {
            set_once(&o->socket, number_at(u + i + 4));
        } else if (kw_at(u, i, "CPU")) {
            set_once(&o->socket, number_at(u + i + 3));
        } else if (kw_at(u, i, "NODE")) {
            set_once(&o->node, number_at(u + i + 4));
        } else if (kw_at(u, i, "DIMM")) {
            const char *p = u + i + 4;
            if (is_sep(*p) && (is_alpha(p[1]) || kl_isdigit(p[1])))
                p++;
            if (is_alpha(*p) && kl_isdigit(p[1])) {
                if (!o->chan_dimm[0])
                    o->chan_dimm[0] = *p;
                set_once(&o->slot, number_at(p + 1));
            } else {
                set_once(&o->slot, number_at(p));
            }
        } else if (u[i] == 'P' && (i == 0 || !is_alpha(u[i - 1])) && kl_isdigit(u[i + 1])) {
            /* P<n> as a word of its own ("P0_Node0", "P1-DIMMA1", "P0 CHANNEL A"), not "P2P" */
            size_t k = i + 1;
            while (kl_isdigit(u[k]))
                k++;
            if (!is_alpha(u[k]))
                set_once(&o->socket, number_at(u + i + 1));
        }
    }
}

bool smbios_channel_parse(const char *bank, const char *locator, struct smbios_chan_id *out)
{
    struct loc_scan b, l;
    scan_locator(bank, &b);
    scan_locator(locator, &l);
    const struct loc_scan *c = NULL;
    const char *id = NULL;
    *out = (struct smbios_chan_id){.socket = -1, .node = -1, .controller = -1, .slot = -1};
    if (b.chan_kw[0])
        c = &b, id = b.chan_kw;
    else if (l.chan_kw[0])
        c = &l, id = l.chan_kw;
    else if (l.chan_dimm[0])
        c = &l, id = l.chan_dimm;
    else if (b.chan_dimm[0])
        c = &b, id = b.chan_dimm;
    if (!c)
        return false;
    const struct loc_scan *o = c == &b ? &l : &b;
    out->ok = true;
    out->from = c == &b ? "bank locator" : "device locator";
    memcpy(out->channel, id, sizeof(out->channel));
    out->socket = c->socket >= 0 ? c->socket : o->socket;
    out->node = c->node >= 0 ? c->node : o->node;
    out->controller = c->controller >= 0 ? c->controller : o->controller;
    out->slot = c->slot >= 0 ? c->slot : o->slot;
    return true;
}

static bool same_channel(const struct smbios_chan_id *a, const struct smbios_chan_id *b)
{
    return a->socket == b->socket && a->node == b->node && a->controller == b->controller &&
           !strcmp(a->channel, b->channel);
}

/* ---- the peak ---------------------------------------------------------------------------------------------- */

static bool peak_fail(struct smbios_peak *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool peak_fail(struct smbios_peak *out, const char *fmt, ...)
{
    char why[sizeof(out->why)];
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    *out = (struct smbios_peak){0};
    memcpy(out->why, why, sizeof(why));
    return false;
}

static bool populated(const struct smbios_dimm *d) { return d->size_bytes || d->size_unknown; }
static uint32_t dimm_mts(const struct smbios_dimm *d) { return d->configured_mts ? d->configured_mts : d->speed_mts; }

bool smbios_peak(const struct smbios_mem *m, struct smbios_peak *out)
{
    *out = (struct smbios_peak){0};
    if (!m || !m->devices)
        return peak_fail(out, "SMBIOS lists no memory devices (type 17)");
    const struct smbios_dimm *use[SMBIOS_MAX_DIMMS];
    uint32_t n = 0, incomplete = 0, populated_n = 0;
    for (uint32_t i = 0; i < m->kept; i++) {
        const struct smbios_dimm *d = &m->dimm[i];
        if (!populated(d))
            continue;
        populated_n++;
        if (!dimm_mts(d) || !d->data_width)
            incomplete++;
        else
            use[n++] = d;
    }
    if (!populated_n)
        return peak_fail(out, "SMBIOS type 17: no populated memory device");
    if (!n)
        return peak_fail(out, "SMBIOS type 17: no populated device gives both a speed and a data width");
    if (incomplete)
        return peak_fail(out, "SMBIOS type 17: %u of %u populated devices give no speed or no data width", incomplete,
                         populated_n);
    if (m->kept < m->devices)
        return peak_fail(out, "SMBIOS lists %u memory devices, more than the %u this parser keeps", m->devices,
                         m->kept);

    /* Channel of each device: ch[i] indexes chan[]. */
    static struct smbios_chan_id id[SMBIOS_MAX_DIMMS], chan[SMBIOS_MAX_DIMMS]; /* off the (small) kernel stack */
    uint32_t ch[SMBIOS_MAX_DIMMS], per_chan[SMBIOS_MAX_DIMMS] = {0}, width[SMBIOS_MAX_DIMMS] = {0};
    uint32_t nch = 0;
    if (n == 1) {
        id[0] = (struct smbios_chan_id){.ok = true, .socket = -1, .node = -1, .controller = -1, .slot = -1};
        out->channel_method = "one populated device: one channel";
    } else {
        for (uint32_t i = 0; i < n; i++)
            if (!smbios_channel_parse(use[i]->bank, use[i]->locator, &id[i]))
                return peak_fail(out,
                                 "channels unknown: device locator \"%s\" / bank locator \"%s\" names no memory "
                                 "channel (one DIMM per channel is not assumed)",
                                 use[i]->locator, use[i]->bank);
        out->channel_method = "distinct channels named by the type 17 locator strings (bw_smbios.h parser)";
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = 0;
        while (c < nch && !same_channel(&chan[c], &id[i]))
            c++;
        if (c == nch)
            chan[nch++] = id[i];
        for (uint32_t k = 0; k < i; k++)
            if (ch[k] == c && id[i].slot >= 0 && id[k].slot == id[i].slot)
                return peak_fail(out,
                                 "channels unknown: devices \"%s\" / \"%s\" and \"%s\" / \"%s\" name the same channel "
                                 "and slot",
                                 use[k]->locator, use[k]->bank, use[i]->locator, use[i]->bank);
        ch[i] = c;
        per_chan[c]++;
        width[c] = width[c] ? MIN(width[c], use[i]->data_width) : use[i]->data_width;
    }
    if (m->slots && nch > m->slots)
        return peak_fail(out, "channels unknown: the locators name %u channels, type 16 has %u slots", nch, m->slots);

    /* One memory clock: the slowest device's speed. */
    out->mts = UINT32_MAX;
    out->mts_configured = true;
    for (uint32_t i = 0; i < n; i++) {
        out->mts = MIN(out->mts, dimm_mts(use[i]));
        out->mts_configured &= use[i]->configured_mts != 0;
    }
    bool equal_width = true;
    out->data_width = width[0];
    for (uint32_t c = 0; c < nch; c++) {
        out->bytes_per_s += (double)out->mts * 1e6 * (double)width[c] / 8.0;
        out->max_dimms_per_channel = MAX(out->max_dimms_per_channel, per_chan[c]);
        equal_width &= width[c] == width[0];
        out->data_width = MIN(out->data_width, width[c]);
    }
    out->dimms = n;
    out->channels = nch;
    out->type = use[0]->type;

    /* Sockets: only when every device names one; per-socket peak when they are alike. */
    int sock[SMBIOS_MAX_DIMMS];
    double sock_bw[SMBIOS_MAX_DIMMS] = {0};
    uint32_t ns = 0;
    bool named = true;
    for (uint32_t c = 0; c < nch; c++)
        named &= chan[c].socket >= 0;
    for (uint32_t c = 0; named && c < nch; c++) {
        uint32_t s = 0;
        while (s < ns && sock[s] != chan[c].socket)
            s++;
        if (s == ns)
            sock[ns++] = chan[c].socket;
        sock_bw[s] += (double)out->mts * 1e6 * (double)width[c] / 8.0;
    }
    if (named) {
        out->sockets = ns;
        bool alike = true;
        for (uint32_t s = 1; s < ns; s++)
            alike &= sock_bw[s] == sock_bw[0];
        if (alike)
            out->per_socket_bytes_per_s = sock_bw[0];
    }
    if (equal_width)
        fmt_snprintf(out->formula, sizeof(out->formula), "%u channels x %u MT/s x %u bits / 8", nch, out->mts,
                     out->data_width);
    else
        fmt_snprintf(out->formula, sizeof(out->formula),
                     "sum over %u channels of %u MT/s x the channel's data width / 8", nch, out->mts);
    return true;
}
