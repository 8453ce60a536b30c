/* acpi.c - defensive parser for the ACPI tables pmubench uses; see kernel/acpi.h and docs/acpi.md. */
#include "kernel/acpi.h"

/*
 * Rules that keep hostile tables harmless:
 *  - a table body is only touched through the pointer map() returned for exactly its
 *    header-claimed length, and only after that length was checked against the header and
 *    ACPI_MAX_TABLE_LEN and the checksum over all of it was verified;
 *  - every multi-byte field is read with memcpy (firmware tables are byte-packed and
 *    often unaligned) and through bounds-checked helpers;
 *  - every subtable walk advances by at least 2 bytes or stops.
 */

/* ---- little-endian, alignment-free reads ---------------------------------------------- */

static uint16_t ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* A validated table body: reads past len give 0 (FADT fields a short table lacks are 0). */
struct span {
    const uint8_t *p;
    uint32_t len;
};

static bool sp_has(const struct span *s, uint32_t off, uint32_t n) { return n <= s->len && off <= s->len - n; }
static uint8_t sp8(const struct span *s, uint32_t off) { return sp_has(s, off, 1) ? s->p[off] : 0; }
static uint16_t sp16(const struct span *s, uint32_t off) { return sp_has(s, off, 2) ? ld16(s->p + off) : 0; }
static uint32_t sp32(const struct span *s, uint32_t off) { return sp_has(s, off, 4) ? ld32(s->p + off) : 0; }
static uint64_t sp64(const struct span *s, uint32_t off) { return sp_has(s, off, 8) ? ld64(s->p + off) : 0; }

/* Fields are stored one by one (no struct copy) so acpi_info's padding stays as memset left
 * it and two parses of the same tables compare equal byte for byte. */
static void sp_gas(struct acpi_gas *g, const struct span *s, uint32_t off)
{
    bool ok = sp_has(s, off, 12);
    g->space_id = ok ? s->p[off] : 0;
    g->bit_width = ok ? s->p[off + 1] : 0;
    g->bit_offset = ok ? s->p[off + 2] : 0;
    g->access_size = ok ? s->p[off + 3] : 0;
    g->address = ok ? ld64(s->p + off + 4) : 0;
}

static uint8_t checksum(const uint8_t *p, uint32_t n)
{
    uint8_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum = (uint8_t)(sum + p[i]);
    return sum;
}

/* Copy an identifier for output: non-printables and JSON-special characters become '?',
 * trailing blanks/NULs are trimmed. dst has n + 1 bytes. */
static void copy_id(char *dst, const uint8_t *src, size_t n)
{
    size_t end = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = src[i];
        dst[i] = (c < 0x20 || c > 0x7e || c == '"' || c == '\\') ? '?' : (char)c;
        if (c != ' ' && c != 0)
            end = i + 1;
    }
    dst[end] = 0;
}

/* ---- table registry ------------------------------------------------------------------- */

/* Offsets in the common header (5.2.6, Table 5.4). */
#define HDR_SIG      0
#define HDR_LENGTH   4
#define HDR_REVISION 8
#define HDR_OEM_ID   10
#define HDR_OEM_TID  16

struct parse_ctx {
    struct acpi_info *ai;
    acpi_map_fn map;
    void *mctx;
    uint32_t seen;          /* bit per handler: a valid copy was already parsed */
    struct acpi_table spare; /* record used once tables[] is full */
};

static struct acpi_table *new_record(struct parse_ctx *pc, uint64_t phys)
{
    struct acpi_info *ai = pc->ai;
    struct acpi_table *t;
    if (ai->table_count < ACPI_MAX_TABLES) {
        t = &ai->tables[ai->table_count++];
    } else {
        ai->tables_dropped++;
        t = &pc->spare;
    }
    memset(t, 0, sizeof(*t));
    memcpy(t->sig, "????", 5);
    t->phys = phys;
    return t;
}

static void reject(struct acpi_table *t, enum acpi_tbl_status st, const char *why)
{
    t->status = (uint8_t)st;
    t->why = why;
}

/* Only the first problem found in a table is kept: it is the one to fix first. */
static void malformed(struct acpi_table *t, const char *why)
{
    if (t->status == ACPI_TBL_OK)
        reject(t, ACPI_TBL_MALFORMED, why);
}

/* Map, check and record one table. On success returns true with the whole body in *body. */
static bool load_table(struct parse_ctx *pc, uint64_t phys, const char *want_sig,
                       struct acpi_table **rec, struct span *body)
{
    struct acpi_table *t = new_record(pc, phys);
    *rec = t;
    const uint8_t *h = pc->map(phys, ACPI_HDR_LEN, pc->mctx);
    if (!h) {
        reject(t, ACPI_TBL_UNMAPPED, "header not accessible");
        return false;
    }
    copy_id(t->sig, h + HDR_SIG, 4);
    copy_id(t->oem_id, h + HDR_OEM_ID, 6);
    copy_id(t->oem_table_id, h + HDR_OEM_TID, 8);
    t->revision = h[HDR_REVISION];
    uint32_t len = ld32(h + HDR_LENGTH);
    t->length = len;
    if (want_sig && memcmp(h + HDR_SIG, want_sig, 4) != 0) {
        reject(t, ACPI_TBL_BAD_SIG, "unexpected signature");
        return false;
    }
    if (len < ACPI_HDR_LEN || len > ACPI_MAX_TABLE_LEN || phys > UINT64_MAX - len) {
        reject(t, ACPI_TBL_BAD_LENGTH, "length out of range");
        return false;
    }
    const uint8_t *p = pc->map(phys, len, pc->mctx);
    if (!p) {
        reject(t, ACPI_TBL_OVERRUN, "length runs past accessible memory");
        return false;
    }
    if (checksum(p, len) != 0) {
        reject(t, ACPI_TBL_BAD_CHECKSUM, "checksum mismatch");
        return false;
    }
    t->checksum_ok = true;
    body->p = p;
    body->len = len;
    return true;
}

/* ---- MADT (5.2.12) -------------------------------------------------------------------- */

#define MADT_LAPIC_ADDR   36
#define MADT_FLAGS        40
#define MADT_SUBTABLES    44
/* Interrupt Controller Structure types (Table 5.45) and their minimum lengths. */
#define MADT_T_LAPIC            0   /* 8 bytes */
#define MADT_T_IOAPIC           1   /* 12 */
#define MADT_T_ISO              2   /* 10 */
#define MADT_T_LAPIC_NMI        4   /* 6 */
#define MADT_T_LAPIC_OVERRIDE   5   /* 12 */
#define MADT_T_X2APIC           9   /* 16 */
#define MADT_T_X2APIC_NMI       10  /* 12 */
/* Local APIC flags (Table 5.47). */
#define MADT_CPU_ENABLED        (1u << 0)
#define MADT_CPU_ONLINE_CAPABLE (1u << 1)

static void add_cpu(struct acpi_info *ai, uint32_t apic_id, uint32_t uid, uint32_t flags, bool x2)
{
    /* 0xFF cannot address an xAPIC and 0xFFFFFFFF is the x2APIC broadcast id; firmware uses
     * them for absent sockets. A repeated id (listed as LAPIC and x2APIC) is one CPU. */
    if ((!x2 && apic_id == 0xFF) || (x2 && apic_id == 0xFFFFFFFFu)) {
        ai->cpus_ignored++;
        return;
    }
    for (uint32_t i = 0; i < ai->cpu_count; i++) {
        if (ai->cpus[i].apic_id == apic_id) {
            ai->cpus_ignored++;
            return;
        }
    }
    if (ai->cpu_count >= ACPI_MAX_CPUS) {
        ai->cpus_dropped++;
        return;
    }
    struct acpi_cpu *c = &ai->cpus[ai->cpu_count++];
    c->apic_id = apic_id;
    c->acpi_uid = uid;
    c->enabled = flags & MADT_CPU_ENABLED;
    c->online_capable = !c->enabled && (flags & MADT_CPU_ONLINE_CAPABLE);
    c->x2apic = x2;
    c->node = 0;
    if (c->enabled)
        ai->cpus_enabled++;
}

static void parse_madt(struct parse_ctx *pc, struct acpi_table *t, const struct span *s)
{
    struct acpi_info *ai = pc->ai;
    if (s->len < MADT_SUBTABLES) {
        malformed(t, "MADT shorter than its fixed part");
        return;
    }
    ai->madt_present = true;
    t->parsed = true;
    ai->lapic_addr = sp32(s, MADT_LAPIC_ADDR);  /* a type 5 entry below may replace it */
    ai->madt_flags = sp32(s, MADT_FLAGS);

    uint32_t off = MADT_SUBTABLES;
    while (off < s->len) {
        if (s->len - off < 2) {
            malformed(t, "MADT trailing byte");
            break;
        }
        const uint8_t *e = s->p + off;
        uint8_t type = e[0], len = e[1];
        if (len < 2) {
            malformed(t, "MADT subtable length < 2");
            break;  /* no way to find the next entry */
        }
        if (len > s->len - off) {
            malformed(t, "MADT subtable runs past the end");
            break;
        }
        switch (type) {
        case MADT_T_LAPIC:
            if (len < 8) { malformed(t, "MADT LAPIC entry too short"); break; }
            add_cpu(ai, e[3], e[2], ld32(e + 4), false);
            break;
        case MADT_T_X2APIC:
            if (len < 16) { malformed(t, "MADT x2APIC entry too short"); break; }
            add_cpu(ai, ld32(e + 4), ld32(e + 12), ld32(e + 8), true);
            break;
        case MADT_T_IOAPIC:
            if (len < 12) { malformed(t, "MADT I/O APIC entry too short"); break; }
            if (ai->ioapic_count < ACPI_MAX_IOAPICS) {
                struct acpi_ioapic *io = &ai->ioapics[ai->ioapic_count];
                io->id = e[2];
                io->address = ld32(e + 4);
                io->gsi_base = ld32(e + 8);
            }
            ai->ioapic_count++;
            break;
        case MADT_T_ISO:
            if (len < 10) { malformed(t, "MADT ISO entry too short"); break; }
            ai->iso_count++;
            break;
        case MADT_T_LAPIC_NMI:
            if (len < 6) { malformed(t, "MADT LAPIC NMI entry too short"); break; }
            ai->nmi_count++;
            break;
        case MADT_T_X2APIC_NMI:
            if (len < 12) { malformed(t, "MADT x2APIC NMI entry too short"); break; }
            ai->nmi_count++;
            break;
        case MADT_T_LAPIC_OVERRIDE:
            if (len < 12) { malformed(t, "MADT LAPIC override too short"); break; }
            ai->lapic_addr = ld64(e + 4);
            ai->lapic_addr_overridden = true;
            break;
        default:
            break;  /* other controllers (SAPIC, GIC, ...) are not ours */
        }
        off += len;
    }
}

/* ---- SRAT (5.2.16) -------------------------------------------------------------------- */

#define SRAT_SUBTABLES    48
#define SRAT_T_CPU        0   /* Processor Local APIC/SAPIC Affinity, 16 bytes */
#define SRAT_T_MEM        1   /* Memory Affinity, 40 bytes */
#define SRAT_T_X2APIC     2   /* Processor Local x2APIC Affinity, 24 bytes */
#define SRAT_ENABLED      (1u << 0)
#define SRAT_MEM_HOTPLUG  (1u << 1)
#define SRAT_MEM_NONVOL   (1u << 2)

static void add_affinity(struct acpi_info *ai, uint32_t apic_id, uint32_t domain, bool x2)
{
    if (ai->cpu_affinity_count >= ACPI_MAX_CPUS) {
        ai->cpu_affinity_dropped++;
        return;
    }
    struct acpi_cpu_affinity *a = &ai->cpu_affinity[ai->cpu_affinity_count++];
    a->apic_id = apic_id;
    a->domain = domain;
    a->x2apic = x2;
}

static void parse_srat(struct parse_ctx *pc, struct acpi_table *t, const struct span *s)
{
    struct acpi_info *ai = pc->ai;
    if (s->len < SRAT_SUBTABLES) {
        malformed(t, "SRAT shorter than its fixed part");
        return;
    }
    ai->srat_present = true;
    t->parsed = true;
    uint32_t off = SRAT_SUBTABLES;
    while (off < s->len) {
        if (s->len - off < 2) {
            malformed(t, "SRAT trailing byte");
            break;
        }
        const uint8_t *e = s->p + off;
        uint8_t type = e[0], len = e[1];
        if (len < 2) {
            malformed(t, "SRAT subtable length < 2");
            break;
        }
        if (len > s->len - off) {
            malformed(t, "SRAT subtable runs past the end");
            break;
        }
        switch (type) {
        case SRAT_T_CPU:
            if (len < 16) { malformed(t, "SRAT APIC affinity too short"); break; }
            if (ld32(e + 4) & SRAT_ENABLED) {
                uint32_t dom = e[2];
                /* Proximity Domain [31:8] exists since SRAT revision 2 (ACPI 3.0). */
                if (t->revision >= 2)
                    dom |= (uint32_t)e[9] << 8 | (uint32_t)e[10] << 16 | (uint32_t)e[11] << 24;
                add_affinity(ai, e[3], dom, false);
            }
            break;
        case SRAT_T_X2APIC:
            if (len < 24) { malformed(t, "SRAT x2APIC affinity too short"); break; }
            if (ld32(e + 12) & SRAT_ENABLED)
                add_affinity(ai, ld32(e + 8), ld32(e + 4), true);
            break;
        case SRAT_T_MEM: {
            if (len < 40) { malformed(t, "SRAT memory affinity too short"); break; }
            if (ai->mem_count >= ACPI_MAX_MEM_RANGES) {
                ai->mem_dropped++;
                break;
            }
            uint32_t fl = ld32(e + 28);
            struct acpi_mem_range *m = &ai->mem[ai->mem_count++];
            m->domain = ld32(e + 2);
            m->base = ld64(e + 8);
            m->length = ld64(e + 16);
            m->enabled = fl & SRAT_ENABLED;
            m->hotpluggable = fl & SRAT_MEM_HOTPLUG;
            m->nonvolatile = fl & SRAT_MEM_NONVOL;
            m->node = -1;
            break;
        }
        default:
            break;  /* GICC, GIC ITS, generic initiator/port: not x86 CPUs or memory */
        }
        off += len;
    }
}

/* ---- SLIT (5.2.17) -------------------------------------------------------------------- */

static void parse_slit(struct parse_ctx *pc, struct acpi_table *t, const struct span *s)
{
    struct acpi_info *ai = pc->ai;
    if (!sp_has(s, 36, 8)) {
        malformed(t, "SLIT shorter than its fixed part");
        return;
    }
    uint64_t n = sp64(s, 36);
    if (n == 0 || n > ACPI_MAX_NODES) {
        malformed(t, "SLIT locality count is 0 or above ACPI_MAX_NODES");
        return;
    }
    if (44 + n * n > s->len) {
        malformed(t, "SLIT matrix runs past the end");
        return;
    }
    /* Same sanity rule as Linux: 10 on the diagonal, more than 10 elsewhere (255 = no path). */
    for (uint64_t i = 0; i < n; i++) {
        for (uint64_t j = 0; j < n; j++) {
            uint8_t d = s->p[44 + i * n + j];
            if ((i == j) != (d == ACPI_DIST_LOCAL) || d < ACPI_DIST_LOCAL) {
                malformed(t, "SLIT distances invalid");
                return;
            }
        }
    }
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++)
            ai->slit[i][j] = s->p[44 + i * n + j];
    ai->slit_localities = (uint32_t)n;
    ai->slit_present = true;
    t->parsed = true;
}

/* ---- HPET (IA-PC HPET 1.0a, Table 3) -------------------------------------------------- */

static void parse_hpet(struct parse_ctx *pc, struct acpi_table *t, const struct span *s)
{
    struct acpi_hpet *h = &pc->ai->hpet;
    if (s->len < 56) {
        malformed(t, "HPET shorter than 56 bytes");
        return;
    }
    uint32_t id = sp32(s, 36);
    h->hw_rev = id & 0xFF;
    h->num_comparators = (uint8_t)(((id >> 8) & 0x1F) + 1);
    h->counter_64bit = id & (1u << 13);
    h->legacy_replacement = id & (1u << 15);
    h->pci_vendor_id = (uint16_t)(id >> 16);
    sp_gas(&h->base, s, 40);
    h->hpet_number = sp8(s, 52);
    h->min_tick = sp16(s, 53);
    h->page_protection = sp8(s, 55);
    h->present = true;
    t->parsed = true;
}

/* ---- SPCR (Microsoft SPCR spec; Precise Baud Rate since revision 4) ------------------- */

static void parse_spcr(struct parse_ctx *pc, struct acpi_table *t, const struct span *s)
{
    struct acpi_spcr *sp = &pc->ai->spcr;
    if (s->len < 80) {
        malformed(t, "SPCR shorter than 80 bytes");
        return;
    }
    sp->revision = t->revision;
    sp->interface_type = sp8(s, 36);
    sp_gas(&sp->base, s, 40);
    sp->interrupt_type = sp8(s, 52);
    sp->irq = sp8(s, 53);
    sp->gsi = sp32(s, 54);
    sp->baud_code = sp8(s, 58);
    sp->parity = sp8(s, 59);
    sp->stop_bits = sp8(s, 60);
    sp->flow_control = sp8(s, 61);
    sp->terminal_type = sp8(s, 62);
    if (t->revision >= 3)
        sp->uart_clock = sp32(s, 76);
    switch (sp->baud_code) {
    case 0: sp->baud = 0; break;  /* "as is": the firmware left the UART programmed */
    case 3: sp->baud = 9600; break;
    case 4: sp->baud = 19200; break;
    case 6: sp->baud = 57600; break;
    case 7: sp->baud = 115200; break;
    default:
        sp->baud = 0;
        malformed(t, "SPCR baud rate code undefined");
        break;
    }
    /* Precise Baud Rate (offset 80) overrides the code when non-zero; older tables lack it. */
    if (t->revision >= 4 && sp32(s, 80) != 0)
        sp->baud = sp32(s, 80);
    sp->enabled = sp->base.address != 0;
    sp->present = true;
    t->parsed = true;
}

/* ---- FADT (5.2.9, Table 5.9) ---------------------------------------------------------- */

#define FADT_DSDT          40
#define FADT_SCI_INT       46
#define FADT_SMI_CMD       48
#define FADT_ACPI_ENABLE   52
#define FADT_ACPI_DISABLE  53
#define FADT_PM1A_CNT_BLK  64
#define FADT_PM1B_CNT_BLK  68
#define FADT_PM_TMR_BLK    76
#define FADT_PM1_CNT_LEN   89
#define FADT_IAPC_BOOT_ARCH 109
#define FADT_FLAGS         112
#define FADT_V1_LEN        116  /* ACPI 1.0 FADT ends after Flags */
#define FADT_RESET_REG     116
#define FADT_RESET_VALUE   128
#define FADT_MINOR_VERSION 131
#define FADT_X_DSDT        140
#define FADT_X_PM1A_CNT    172
#define FADT_X_PM1B_CNT    184
#define FADT_X_PM_TMR      208

/* X_ GAS when its address is set, else the legacy 32-bit I/O port block of len_bytes. */
static void pick_block(struct acpi_gas *g, const struct span *s, uint32_t x_off, uint32_t legacy_off,
                       uint8_t len_bytes)
{
    sp_gas(g, s, x_off);
    if (g->address != 0)
        return;
    uint32_t port = sp32(s, legacy_off);
    g->space_id = port ? ACPI_GAS_IO : 0;
    g->bit_width = port ? (uint8_t)(len_bytes * 8) : 0;
    g->bit_offset = 0;
    g->access_size = 0;
    g->address = port;
}

static void parse_fadt(struct parse_ctx *pc, struct acpi_table *t, const struct span *s)
{
    struct acpi_fadt *f = &pc->ai->fadt;
    /* Short FADTs exist (hypervisors): fields past the end read as 0, and we say so. */
    if (s->len < FADT_V1_LEN)
        malformed(t, "FADT shorter than the ACPI 1.0 layout");
    f->revision = t->revision;
    f->minor_revision = sp8(s, FADT_MINOR_VERSION) & 0x0F;
    f->flags = sp32(s, FADT_FLAGS);
    f->iapc_boot_arch = sp16(s, FADT_IAPC_BOOT_ARCH);
    f->sci_int = sp16(s, FADT_SCI_INT);
    f->smi_cmd = sp32(s, FADT_SMI_CMD);
    f->acpi_enable = sp8(s, FADT_ACPI_ENABLE);
    f->acpi_disable = sp8(s, FADT_ACPI_DISABLE);

    /* The PM timer is a 32-bit I/O read even when only 24 bits count (4.8.3.3). */
    pick_block(&f->pm_timer, s, FADT_X_PM_TMR, FADT_PM_TMR_BLK, 4);
    f->pm_timer_32bit = f->flags & ACPI_FADT_TMR_VAL_EXT;
    uint8_t cnt_len = sp8(s, FADT_PM1_CNT_LEN);
    pick_block(&f->pm1a_cnt, s, FADT_X_PM1A_CNT, FADT_PM1A_CNT_BLK, cnt_len);
    pick_block(&f->pm1b_cnt, s, FADT_X_PM1B_CNT, FADT_PM1B_CNT_BLK, cnt_len);

    f->reset_supported = (f->flags & ACPI_FADT_RESET_REG_SUP) && sp_has(s, FADT_RESET_VALUE, 1);
    sp_gas(&f->reset_reg, s, FADT_RESET_REG);
    f->reset_value = sp8(s, FADT_RESET_VALUE);

    uint64_t x_dsdt = sp64(s, FADT_X_DSDT);
    f->dsdt_phys = x_dsdt ? x_dsdt : sp32(s, FADT_DSDT);
    f->present = true;
    t->parsed = true;
}

/* ---- DSDT \_S5 (7.4.2; AML encoding 20.2) --------------------------------------------- */

#define AML_ZERO_OP     0x00
#define AML_ONE_OP      0x01
#define AML_NAME_OP     0x08
#define AML_BYTE_PREFIX 0x0A
#define AML_WORD_PREFIX 0x0B
#define AML_DWORD_PREFIX 0x0C
#define AML_PACKAGE_OP  0x12
#define AML_QWORD_PREFIX 0x0E
#define AML_ONES_OP     0xFF
#define AML_ROOT_CHAR   '\\'

/* Decode one integer package element at p[*i] (below end). False if it is not a constant. */
static bool aml_integer(const uint8_t *p, uint32_t end, uint32_t *i, uint64_t *v)
{
    uint32_t k = *i, n;
    if (k >= end)
        return false;
    switch (p[k]) {
    case AML_ZERO_OP: *v = 0; *i = k + 1; return true;
    case AML_ONE_OP: *v = 1; *i = k + 1; return true;
    case AML_ONES_OP: *v = UINT64_MAX; *i = k + 1; return true;
    case AML_BYTE_PREFIX: n = 1; break;
    case AML_WORD_PREFIX: n = 2; break;
    case AML_DWORD_PREFIX: n = 4; break;
    case AML_QWORD_PREFIX: n = 8; break;
    default: return false;
    }
    if (end - k - 1 < n)
        return false;
    *v = 0;
    for (uint32_t b = 0; b < n; b++)
        *v |= (uint64_t)p[k + 1 + b] << (8 * b);
    *i = k + 1 + n;
    return true;
}

/* Try Name(_S5, Package(){a, b, ...}) whose "_S5_" starts at p[at]. */
static bool s5_at(struct acpi_info *ai, const uint8_t *p, uint32_t len, uint32_t at)
{
    /* NameOp directly before the name, or NameOp '\' for a root-relative name. */
    bool named = (at >= 1 && p[at - 1] == AML_NAME_OP) ||
                 (at >= 2 && p[at - 1] == AML_ROOT_CHAR && p[at - 2] == AML_NAME_OP);
    if (!named)
        return false;
    uint32_t i = at + 4;
    if (i >= len || p[i] != AML_PACKAGE_OP)
        return false;
    i++;
    /* PkgLength (20.2.4): bits 7:6 of the lead byte = count of following bytes; the length
     * counts from the lead byte and bounds the package. */
    if (i >= len)
        return false;
    uint32_t lead = p[i], follow = lead >> 6, pkglen;
    if (len - i < 1 + follow)
        return false;
    if (follow == 0) {
        pkglen = lead & 0x3F;
    } else {
        pkglen = lead & 0x0F;
        for (uint32_t b = 0; b < follow; b++)
            pkglen |= (uint32_t)p[i + 1 + b] << (4 + 8 * b);
    }
    if (pkglen > len - i)
        return false;
    uint32_t end = i + pkglen;
    i += 1 + follow;
    if (i >= end)
        return false;
    uint32_t count = p[i++];
    uint64_t a, b;
    if (count == 0 || !aml_integer(p, end, &i, &a))
        return false;
    if (count >= 2) {
        if (!aml_integer(p, end, &i, &b))
            return false;
    } else {
        /* One-integer legacy form: SLP_TYPa in bits 7:0, SLP_TYPb in bits 15:8 (as ACPICA). */
        b = (a >> 8) & 0xFF;
        a &= 0xFF;
    }
    if (a > 7 || b > 7)  /* SLP_TYPx is a 3-bit field */
        return false;
    ai->s5_slp_typ_a = (uint8_t)a;
    ai->s5_slp_typ_b = (uint8_t)b;
    ai->s5_valid = true;
    return true;
}

static void parse_dsdt(struct parse_ctx *pc, struct acpi_table *t, const struct span *s)
{
    t->parsed = true;
    for (uint32_t at = ACPI_HDR_LEN; s->len >= 4 && at <= s->len - 4; at++) {
        if (memcmp(s->p + at, "_S5_", 4) == 0 && s5_at(pc->ai, s->p, s->len, at))
            return;
    }
}

/* ---- dispatch ------------------------------------------------------------------------- */

typedef void (*table_parser)(struct parse_ctx *pc, struct acpi_table *t, const struct span *s);

static const struct {
    char sig[4];
    table_parser parse;
} parsers[] = {
    {{'A', 'P', 'I', 'C'}, parse_madt},
    {{'S', 'R', 'A', 'T'}, parse_srat},
    {{'S', 'L', 'I', 'T'}, parse_slit},
    {{'F', 'A', 'C', 'P'}, parse_fadt},
    {{'H', 'P', 'E', 'T'}, parse_hpet},
    {{'S', 'P', 'C', 'R'}, parse_spcr},
    {{'D', 'S', 'D', 'T'}, parse_dsdt},
};

/* from_fadt: the DSDT is only believed where the FADT points, not when a root table lists it. */
static void dispatch(struct parse_ctx *pc, struct acpi_table *t, const struct span *s, bool from_fadt)
{
    for (uint32_t k = 0; k < ARRAY_SIZE(parsers); k++) {
        if (memcmp(s->p, parsers[k].sig, 4) != 0)
            continue;
        if (parsers[k].parse == parse_dsdt && !from_fadt)
            return;
        if (pc->seen & (1u << k)) {
            reject(t, ACPI_TBL_DUPLICATE, "second copy ignored");
            return;
        }
        pc->seen |= 1u << k;
        parsers[k].parse(pc, t, s);
        return;
    }
}

static void visit(struct parse_ctx *pc, uint64_t phys, const char *want_sig)
{
    struct acpi_table *t;
    struct span s;
    if (load_table(pc, phys, want_sig, &t, &s))
        dispatch(pc, t, &s, want_sig != NULL);
}

/* ---- NUMA finishing ------------------------------------------------------------------- */

static int domain_node(const struct acpi_info *ai, uint32_t domain)
{
    for (uint32_t n = 0; n < ai->numa_nodes; n++)
        if (ai->node_domain[n] == domain)
            return (int)n;
    return -1;
}

/* Keep the ACPI_MAX_NODES smallest distinct domains, sorted (insertion into a short array). */
static void note_domain(struct acpi_info *ai, uint32_t *count, uint32_t d)
{
    uint32_t i = 0;
    while (i < *count && ai->node_domain[i] < d)
        i++;
    if (i < *count && ai->node_domain[i] == d)
        return;
    if (*count == ACPI_MAX_NODES) {
        ai->numa_truncated = true;
        if (i == ACPI_MAX_NODES)
            return;
        (*count)--;  /* the largest falls off */
    }
    memmove(&ai->node_domain[i + 1], &ai->node_domain[i], (*count - i) * sizeof(ai->node_domain[0]));
    ai->node_domain[i] = d;
    (*count)++;
}

static void finish_numa(struct acpi_info *ai)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < ai->cpu_affinity_count; i++)
        note_domain(ai, &count, ai->cpu_affinity[i].domain);
    for (uint32_t i = 0; i < ai->mem_count; i++)
        if (ai->mem[i].enabled)
            note_domain(ai, &count, ai->mem[i].domain);
    ai->numa_from_srat = count > 0;
    ai->numa_nodes = count > 0 ? count : 1;
    if (!ai->numa_from_srat)
        ai->node_domain[0] = 0;
    for (uint32_t i = 0; i < ai->mem_count; i++) {
        struct acpi_mem_range *m = &ai->mem[i];
        m->node = (int16_t)(m->enabled ? domain_node(ai, m->domain) : -1);
    }
    for (uint32_t i = 0; i < ai->cpu_count; i++)
        ai->cpus[i].node = (int16_t)acpi_node_of_apic(ai, ai->cpus[i].apic_id);
}

/* ---- RSDP and the root table ---------------------------------------------------------- */

#define RSDP_CHECKSUM  8
#define RSDP_OEM_ID    9
#define RSDP_REVISION  15
#define RSDP_RSDT      16
#define RSDP_XSDT      24

/* Walk an XSDT (8-byte entries) or RSDT (4-byte entries); false if the root itself is bad. */
static bool walk_root(struct parse_ctx *pc, uint64_t phys, bool xsdt)
{
    struct acpi_table *t;
    struct span s;
    if (!load_table(pc, phys, xsdt ? "XSDT" : "RSDT", &t, &s))
        return false;
    t->parsed = true;
    struct acpi_info *ai = pc->ai;
    ai->root_is_xsdt = xsdt;
    ai->root_phys = phys;
    uint32_t esz = xsdt ? 8 : 4;
    uint32_t n = (s.len - ACPI_HDR_LEN) / esz;
    if ((s.len - ACPI_HDR_LEN) % esz)
        malformed(t, "root table length not a whole number of entries");
    if (n > ACPI_MAX_ROOT_ENTRIES) {
        ai->root_entries_ignored = n - ACPI_MAX_ROOT_ENTRIES;
        n = ACPI_MAX_ROOT_ENTRIES;
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = s.p + ACPI_HDR_LEN + i * esz;
        uint64_t addr = xsdt ? ld64(e) : ld32(e);
        if (addr == 0)
            continue;  /* empty slot some firmware leaves behind */
        visit(pc, addr, NULL);
    }
    return true;
}

int acpi_parse(struct acpi_info *ai, uint64_t rsdp_phys, acpi_map_fn map, void *ctx)
{
    if (!ai)
        return ACPI_E_ARG;
    memset(ai, 0, sizeof(*ai));
    ai->numa_nodes = 1;
    ai->rsdp_phys = rsdp_phys;
    if (!map || rsdp_phys == 0)
        return ACPI_E_ARG;

    const uint8_t *r = map(rsdp_phys, ACPI_RSDP_V1_LEN, ctx);
    if (!r)
        return ACPI_E_RSDP_UNMAPPED;
    if (memcmp(r, "RSD PTR ", 8) != 0)
        return ACPI_E_RSDP_SIG;
    if (checksum(r, ACPI_RSDP_V1_LEN) != 0)
        return ACPI_E_RSDP_CHECKSUM;
    ai->rsdp_revision = r[RSDP_REVISION];
    copy_id(ai->rsdp_oem_id, r + RSDP_OEM_ID, 6);
    ai->rsdt_phys = ld32(r + RSDP_RSDT);

    /* The 2.0 fields are only believed when the extended checksum (fixed 36 bytes, as
     * ACPICA) holds; otherwise the RSDT is the way in. */
    if (ai->rsdp_revision >= 2) {
        const uint8_t *r2 = map(rsdp_phys, ACPI_RSDP_V2_LEN, ctx);
        if (r2 && checksum(r2, ACPI_RSDP_V2_LEN) == 0) {
            ai->rsdp_xchecksum_ok = true;
            ai->xsdt_phys = ld64(r2 + RSDP_XSDT);
        }
    }

    struct parse_ctx pc = {.ai = ai, .map = map, .mctx = ctx};
    bool walked = false;
    if (ai->xsdt_phys)
        walked = walk_root(&pc, ai->xsdt_phys, true);
    if (!walked && ai->rsdt_phys)
        walked = walk_root(&pc, ai->rsdt_phys, false);
    if (!walked) {
        if (ai->rsdp_revision >= 2 && !ai->rsdp_xchecksum_ok && !ai->rsdt_phys)
            return ACPI_E_RSDP_XCHECKSUM;
        return ACPI_E_NO_ROOT;
    }

    if (ai->fadt.present && ai->fadt.dsdt_phys)
        visit(&pc, ai->fadt.dsdt_phys, "DSDT");
    finish_numa(ai);
    return ACPI_OK;
}

/* ---- queries -------------------------------------------------------------------------- */

int acpi_node_of_apic(const struct acpi_info *ai, uint32_t apic_id)
{
    if (!ai->numa_from_srat)
        return 0;
    for (uint32_t i = 0; i < ai->cpu_affinity_count; i++)
        if (ai->cpu_affinity[i].apic_id == apic_id)
            return domain_node(ai, ai->cpu_affinity[i].domain);
    return -1;
}

int acpi_node_of_addr(const struct acpi_info *ai, uint64_t pa)
{
    if (!ai->numa_from_srat)
        return 0;
    for (uint32_t i = 0; i < ai->mem_count; i++) {
        const struct acpi_mem_range *m = &ai->mem[i];
        if (m->enabled && pa >= m->base && pa - m->base < m->length)
            return m->node;
    }
    return -1;
}

int acpi_node_distance(const struct acpi_info *ai, int from, int to)
{
    if (from < 0 || to < 0 || (uint32_t)from >= ai->numa_nodes || (uint32_t)to >= ai->numa_nodes)
        return -1;
    uint32_t df = ai->node_domain[from], dt = ai->node_domain[to];
    if (ai->slit_present && df < ai->slit_localities && dt < ai->slit_localities)
        return ai->slit[df][dt];
    return from == to ? ACPI_DIST_LOCAL : ACPI_DIST_REMOTE;
}

uint16_t acpi_s5_pm1_cnt(const struct acpi_info *ai, int which)
{
    if (!ai->s5_valid || (which != 0 && which != 1))
        return 0;
    uint8_t typ = which == 0 ? ai->s5_slp_typ_a : ai->s5_slp_typ_b;
    return (uint16_t)(((uint32_t)typ << ACPI_PM1_CNT_SLP_TYP_SHIFT & ACPI_PM1_CNT_SLP_TYP_MASK) |
                      ACPI_PM1_CNT_SLP_EN);
}

const struct acpi_table *acpi_find_table(const struct acpi_info *ai, const char *sig)
{
    for (uint32_t i = 0; i < ai->table_count; i++)
        if (memcmp(ai->tables[i].sig, sig, 4) == 0)
            return &ai->tables[i];
    return NULL;
}

const char *acpi_gas_space_name(uint8_t id)
{
    switch (id) {
    case ACPI_GAS_MEMORY: return "memory";
    case ACPI_GAS_IO: return "io";
    case ACPI_GAS_PCI_CONFIG: return "pci-config";
    case ACPI_GAS_EC: return "ec";
    case ACPI_GAS_SMBUS: return "smbus";
    case ACPI_GAS_CMOS: return "cmos";
    case ACPI_GAS_PCI_BAR: return "pci-bar";
    case ACPI_GAS_IPMI: return "ipmi";
    case ACPI_GAS_GPIO: return "gpio";
    case ACPI_GAS_SERIAL_BUS: return "serial-bus";
    case ACPI_GAS_PCC: return "pcc";
    case ACPI_GAS_PRM: return "prm";
    case ACPI_GAS_FFH: return "ffh";
    default: return id >= 0x80 ? "oem" : "reserved";
    }
}

const char *acpi_tbl_status_name(uint8_t st)
{
    switch (st) {
    case ACPI_TBL_OK: return "ok";
    case ACPI_TBL_UNMAPPED: return "unmapped";
    case ACPI_TBL_BAD_LENGTH: return "bad-length";
    case ACPI_TBL_OVERRUN: return "overrun";
    case ACPI_TBL_BAD_CHECKSUM: return "bad-checksum";
    case ACPI_TBL_BAD_SIG: return "bad-signature";
    case ACPI_TBL_MALFORMED: return "malformed";
    case ACPI_TBL_DUPLICATE: return "duplicate";
    default: return "unknown";
    }
}

const char *acpi_strerror(int err)
{
    switch (err) {
    case ACPI_OK: return "ok";
    case ACPI_E_ARG: return "bad arguments";
    case ACPI_E_RSDP_UNMAPPED: return "RSDP not accessible";
    case ACPI_E_RSDP_SIG: return "RSDP signature missing";
    case ACPI_E_RSDP_CHECKSUM: return "RSDP checksum bad";
    case ACPI_E_RSDP_XCHECKSUM: return "RSDP extended checksum bad and no RSDT";
    case ACPI_E_NO_ROOT: return "no usable XSDT or RSDT";
    default: return "unknown error";
    }
}

/* Serial interface subtypes from Microsoft's DBG2 table specification. */
const char *acpi_spcr_type_name(uint8_t type)
{
    switch (type) {
    case 0x00: return "16550";
    case 0x01: return "16550-subset";
    case 0x03: return "pl011";
    case 0x0E: return "sbsa-32bit";
    case 0x0F: return "sbsa";
    case 0x12: return "16550-gas";
    default: return "unknown";
    }
}
