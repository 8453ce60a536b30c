/* test_acpi.c - kernel/acpi.c against fixture table sets and hand-built hostile tables. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/acpi.h"

/* ============================================================================================
 * Fake physical memory. Tables are laid out in one buffer at FAKE_BASE; map() hands out a
 * fresh heap copy of exactly the requested bytes, so AddressSanitizer flags any read past
 * what the parser asked for, even when the next table follows in the "physical" buffer.
 * ========================================================================================== */

#define FAKE_BASE 0x7f000000ull /* below 4 GiB so the RSDT can point at everything */

struct fakemem {
    uint8_t *buf;
    size_t cap, used;
    uint64_t limit;      /* bytes from FAKE_BASE that map() grants */
    void **copies;
    size_t ncopies, capcopies;
    unsigned map_calls;
    uint64_t max_map_len;
};

static void fm_init(struct fakemem *fm)
{
    memset(fm, 0, sizeof(*fm));
    fm->cap = 1 << 20;
    fm->buf = calloc(1, fm->cap);
    assert_non_null(fm->buf);
}

static void fm_free(struct fakemem *fm)
{
    for (size_t i = 0; i < fm->ncopies; i++)
        free(fm->copies[i]);
    free(fm->copies);
    free(fm->buf);
    memset(fm, 0, sizeof(*fm));
}

/* Append bytes at a 16-byte boundary plus misalign; returns the fake physical address. */
static uint64_t fm_add(struct fakemem *fm, const void *p, size_t n, unsigned misalign)
{
    size_t off = ((fm->used + 15) & ~(size_t)15) + misalign;
    while (off + n > fm->cap) {
        fm->buf = realloc(fm->buf, fm->cap * 2);
        assert_non_null(fm->buf);
        memset(fm->buf + fm->cap, 0, fm->cap);
        fm->cap *= 2;
    }
    memcpy(fm->buf + off, p, n);
    fm->used = off + n;
    fm->limit = fm->used;
    return FAKE_BASE + off;
}

static uint8_t *fm_ptr(struct fakemem *fm, uint64_t phys)
{
    assert_true(phys >= FAKE_BASE && phys - FAKE_BASE < fm->used);
    return fm->buf + (phys - FAKE_BASE);
}

static const void *fm_map(uint64_t phys, uint64_t len, void *ctx)
{
    struct fakemem *fm = ctx;
    fm->map_calls++;
    if (len > fm->max_map_len)
        fm->max_map_len = len;
    if (len == 0 || phys < FAKE_BASE)
        return NULL;
    uint64_t off = phys - FAKE_BASE;
    if (off > fm->limit || len > fm->limit - off)
        return NULL;
    void *c = malloc(len);
    assert_non_null(c);
    memcpy(c, fm->buf + off, len);
    if (fm->ncopies == fm->capcopies) {
        fm->capcopies = fm->capcopies ? fm->capcopies * 2 : 64;
        fm->copies = realloc(fm->copies, fm->capcopies * sizeof(void *));
        assert_non_null(fm->copies);
    }
    fm->copies[fm->ncopies++] = c;
    return c;
}

static void fix_checksum(uint8_t *t, size_t len, size_t cksum_off)
{
    uint8_t sum = 0;
    t[cksum_off] = 0;
    for (size_t i = 0; i < len; i++)
        sum = (uint8_t)(sum + t[i]);
    t[cksum_off] = (uint8_t)(0 - sum);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* ---- table builder ------------------------------------------------------------------------ */

struct tb {
    uint8_t b[65536];
    size_t n;
};

static void hdr(uint8_t *h, const char *sig, uint8_t rev)
{
    memcpy(h, sig, 4);
    h[8] = rev;
    memcpy(h + 10, "PMBTST", 6);
    memcpy(h + 16, "UNITTEST", 8);
    put32(h + 24, 1);
    memcpy(h + 28, "TEST", 4);
    put32(h + 32, 1);
}

static struct tb *tb_new(const char *sig, uint8_t rev)
{
    struct tb *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    hdr(t->b, sig, rev);
    t->n = ACPI_HDR_LEN;
    return t;
}

static void tb_put(struct tb *t, const void *p, size_t n)
{
    assert_true(t->n + n <= sizeof(t->b));
    memcpy(t->b + t->n, p, n);
    t->n += n;
}
static void tb_u8(struct tb *t, uint8_t v) { tb_put(t, &v, 1); }
static void tb_u16(struct tb *t, uint16_t v) { tb_put(t, &v, 2); }
static void tb_u32(struct tb *t, uint32_t v) { tb_put(t, &v, 4); }
static void tb_u64(struct tb *t, uint64_t v) { tb_put(t, &v, 8); }
static void tb_zero(struct tb *t, size_t n) { assert_true(t->n + n <= sizeof(t->b)); memset(t->b + t->n, 0, n); t->n += n; }

/* Pad to at least len bytes (zeros), then set the length field and checksum. */
static void tb_finish_len(struct tb *t, size_t len)
{
    if (t->n < len)
        tb_zero(t, len - t->n);
    put32(t->b + 4, (uint32_t)len);
    fix_checksum(t->b, len, 9);
}
static void tb_finish(struct tb *t) { tb_finish_len(t, t->n); }

static void tb_gas(struct tb *t, uint8_t space, uint8_t width, uint8_t access, uint64_t addr)
{
    tb_u8(t, space); tb_u8(t, width); tb_u8(t, 0); tb_u8(t, access); tb_u64(t, addr);
}

/* MADT subtables (5.2.12). */
static void madt_begin(struct tb *t, uint32_t lapic) { tb_u32(t, lapic); tb_u32(t, 1); }
static void madt_lapic(struct tb *t, uint8_t uid, uint8_t id, uint32_t flags)
{
    tb_u8(t, 0); tb_u8(t, 8); tb_u8(t, uid); tb_u8(t, id); tb_u32(t, flags);
}
static void madt_x2apic(struct tb *t, uint32_t id, uint32_t uid, uint32_t flags)
{
    tb_u8(t, 9); tb_u8(t, 16); tb_u16(t, 0); tb_u32(t, id); tb_u32(t, flags); tb_u32(t, uid);
}

/* SRAT subtables (5.2.16). */
static void srat_begin(struct tb *t) { tb_u32(t, 1); tb_u64(t, 0); }
static void srat_apic(struct tb *t, uint8_t apic, uint32_t dom, uint32_t flags)
{
    tb_u8(t, 0); tb_u8(t, 16); tb_u8(t, dom & 0xff); tb_u8(t, apic); tb_u32(t, flags);
    tb_u8(t, 0); tb_u8(t, (dom >> 8) & 0xff); tb_u8(t, (dom >> 16) & 0xff); tb_u8(t, dom >> 24);
    tb_u32(t, 0);
}
static void srat_x2apic(struct tb *t, uint32_t apic, uint32_t dom, uint32_t flags)
{
    tb_u8(t, 2); tb_u8(t, 24); tb_u16(t, 0); tb_u32(t, dom); tb_u32(t, apic); tb_u32(t, flags);
    tb_u32(t, 0); tb_u32(t, 0);
}
static void srat_mem(struct tb *t, uint32_t dom, uint64_t base, uint64_t len, uint32_t flags)
{
    tb_u8(t, 1); tb_u8(t, 40); tb_u32(t, dom); tb_u16(t, 0); tb_u64(t, base); tb_u64(t, len);
    tb_u32(t, 0); tb_u32(t, flags); tb_u64(t, 0);
}

/* ---- table sets --------------------------------------------------------------------------- */

struct blob {
    char sig[5];
    uint8_t *data;
    size_t len;
};

struct tset {
    struct blob b[64];
    int n;
};

static void ts_add(struct tset *ts, const void *data, size_t len)
{
    assert_true(ts->n < 64);
    assert_true(len >= 4);
    struct blob *b = &ts->b[ts->n++];
    memcpy(b->sig, data, 4);
    b->sig[4] = 0;
    b->data = malloc(len);
    assert_non_null(b->data);
    memcpy(b->data, data, len);
    b->len = len;
}

/* Add a finished builder table and free the builder. */
static void ts_take(struct tset *ts, struct tb *t)
{
    ts_add(ts, t->b, get32(t->b + 4) > t->n ? t->n : get32(t->b + 4));
    free(t);
}

static struct blob *ts_get(struct tset *ts, const char *sig)
{
    for (int i = 0; i < ts->n; i++)
        if (memcmp(ts->b[i].sig, sig, 4) == 0)
            return &ts->b[i];
    return NULL;
}

static void ts_free(struct tset *ts)
{
    for (int i = 0; i < ts->n; i++)
        free(ts->b[i].data);
    ts->n = 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Load every <SIG>.bin of a fixture directory (sorted by name). Returns the count. */
static int ts_load_dir(struct tset *ts, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char *names[64];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l == 8 && strcmp(e->d_name + 4, ".bin") == 0 && nn < 64)
            names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof(names[0]), cmp_str);
    for (int i = 0; i < nn; i++) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static uint8_t buf[4 << 20];
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        assert_true(n >= ACPI_HDR_LEN);
        /* The file name is the signature; a mislabeled capture is a fixture bug. */
        if (memcmp(buf, names[i], 4) != 0)
            fail_msg("%s: signature %.4s does not match file name", path, (char *)buf);
        ts_add(ts, buf, n);
        free(names[i]);
    }
    return nn;
}

/* ---- building RSDP + XSDT/RSDT over a table set -------------------------------------------- */

struct build_opts {
    uint8_t rsdp_rev;        /* 2 (default when 0 and !acpi1) */
    bool acpi1;              /* RSDP revision 0, RSDT only */
    bool no_xsdt, no_rsdt;
    unsigned misalign;
    const uint64_t *extra;   /* raw addresses appended to the root tables */
    int n_extra;
};

struct built {
    uint64_t rsdp, xsdt, rsdt, dsdt;
    uint64_t phys[64];       /* where ts->b[i] went */
};

static uint64_t add_root(struct fakemem *fm, const char *sig, const uint64_t *addrs, int n, unsigned esz,
                         unsigned misalign)
{
    size_t len = ACPI_HDR_LEN + (size_t)n * esz;
    uint8_t *t = calloc(1, len);
    hdr(t, sig, 1);
    for (int i = 0; i < n; i++) {
        if (esz == 8)
            put64(t + ACPI_HDR_LEN + i * 8, addrs[i]);
        else
            put32(t + ACPI_HDR_LEN + i * 4, (uint32_t)addrs[i]);
    }
    put32(t + 4, (uint32_t)len);
    fix_checksum(t, len, 9);
    uint64_t p = fm_add(fm, t, len, misalign);
    free(t);
    return p;
}

static uint64_t add_rsdp(struct fakemem *fm, uint8_t rev, uint64_t rsdt, uint64_t xsdt)
{
    uint8_t r[36] = {0};
    memcpy(r, "RSD PTR ", 8);
    memcpy(r + 9, "PMBTST", 6);
    r[15] = rev;
    put32(r + 16, (uint32_t)rsdt);
    put32(r + 20, 36);
    put64(r + 24, xsdt);
    fix_checksum(r, 20, 8);
    fix_checksum(r, 36, 32);
    return fm_add(fm, r, rev >= 2 ? 36 : 20, 0);
}

/* Lay the set out: every table, DSDT not in the root tables but patched into the FADT's DSDT
 * and X_DSDT (and the FADT checksum fixed), then XSDT, RSDT, RSDP. */
static void build(struct fakemem *fm, struct tset *ts, const struct build_opts *o, struct built *bt)
{
    struct build_opts def = {0};
    if (!o)
        o = &def;
    memset(bt, 0, sizeof(*bt));
    uint64_t addrs[128];
    int na = 0;
    uint64_t facp = 0;
    size_t facp_len = 0;
    for (int i = 0; i < ts->n; i++) {
        bt->phys[i] = fm_add(fm, ts->b[i].data, ts->b[i].len, o->misalign);
        if (memcmp(ts->b[i].sig, "DSDT", 4) == 0) {
            bt->dsdt = bt->phys[i];
            continue;
        }
        if (memcmp(ts->b[i].sig, "FACP", 4) == 0 && !facp) {
            facp = bt->phys[i];
            facp_len = ts->b[i].len;
        }
        addrs[na++] = bt->phys[i];
    }
    for (int i = 0; i < o->n_extra; i++)
        addrs[na++] = o->extra[i];
    if (facp) {
        uint8_t *f = fm_ptr(fm, facp);
        if (facp_len >= 44)
            put32(f + 40, (uint32_t)bt->dsdt);
        if (facp_len >= 148)
            put64(f + 140, bt->dsdt);
        if (facp_len >= 10 && get32(f + 4) == facp_len)
            fix_checksum(f, facp_len, 9);
    }
    bool acpi1 = o->acpi1;
    if (!acpi1 && !o->no_xsdt)
        bt->xsdt = add_root(fm, "XSDT", addrs, na, 8, o->misalign);
    if (!o->no_rsdt)
        bt->rsdt = add_root(fm, "RSDT", addrs, na, 4, o->misalign);
    bt->rsdp = add_rsdp(fm, acpi1 ? 0 : (o->rsdp_rev ? o->rsdp_rev : 2), bt->rsdt, bt->xsdt);
}

/* Build and parse in one go; the fake memory is released afterwards (acpi_info keeps no
 * pointers into mapped memory). */
static int parse_set(struct acpi_info *ai, struct tset *ts, const struct build_opts *o)
{
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, ts, o, &bt);
    int rc = acpi_parse(ai, bt.rsdp, fm_map, &fm);
    fm_free(&fm);
    return rc;
}

static struct acpi_info *new_ai(void)
{
    struct acpi_info *ai = malloc(sizeof(*ai));
    assert_non_null(ai);
    memset(ai, 0xA5, sizeof(*ai)); /* acpi_parse must initialise everything */
    return ai;
}

static const struct acpi_table *find_rec(const struct acpi_info *ai, const char *sig)
{
    return acpi_find_table(ai, sig);
}

static const struct acpi_cpu *find_cpu(const struct acpi_info *ai, uint32_t apic)
{
    for (uint32_t i = 0; i < ai->cpu_count; i++)
        if (ai->cpus[i].apic_id == apic)
            return &ai->cpus[i];
    return NULL;
}

/* ============================================================================================
 * Expectation files: tests/fixtures/acpi/<name>/expect.txt (syntax in docs/acpi.md).
 * expectations_check returns the number of failed lines and describes them in err.
 * ========================================================================================== */

static bool num(const char *s, long long *v)
{
    char *end;
    errno = 0;
    if (s[0] == '-')
        *v = strtoll(s, &end, 0);
    else
        *v = (long long)strtoull(s, &end, 0);
    return errno == 0 && end != s && *end == 0;
}

static bool gas_is(const struct acpi_gas *g, const char *space, long long addr)
{
    return strcmp(acpi_gas_space_name(g->space_id), space) == 0 && (long long)g->address == addr;
}

static int expectation_line(const struct acpi_info *ai, char **tk, int nt)
{
    long long v[16] = {0};
    const char *k = tk[0];
    int nv = nt - 1;
    /* Keys whose arguments are not all numbers. */
    if (strcmp(k, "tables") == 0) {
        for (int i = 1; i < nt; i++) {
            const struct acpi_table *t = find_rec(ai, tk[i]);
            if (!t || t->status != ACPI_TBL_OK || !t->checksum_ok)
                return 0;
        }
        return 1;
    }
    if (strcmp(k, "mem") == 0 && nt == 5) {
        long long b, l, n;
        if (!num(tk[1], &b) || !num(tk[2], &l) || !num(tk[3], &n))
            return 0;
        bool e = strchr(tk[4], 'e'), h = strchr(tk[4], 'h'), nv2 = strchr(tk[4], 'n');
        for (uint32_t i = 0; i < ai->mem_count; i++) {
            const struct acpi_mem_range *m = &ai->mem[i];
            if ((long long)m->base == b && (long long)m->length == l && m->node == n && m->enabled == e &&
                m->hotpluggable == h && m->nonvolatile == nv2)
                return 1;
        }
        return 0;
    }
    if (strcmp(k, "pm_timer") == 0 && nt == 4)
        return num(tk[2], &v[0]) && num(tk[3], &v[1]) && gas_is(&ai->fadt.pm_timer, tk[1], v[0]) &&
               ai->fadt.pm_timer.bit_width == v[1];
    if ((strcmp(k, "pm1a_cnt") == 0 || strcmp(k, "pm1b_cnt") == 0)) {
        const struct acpi_gas *g = k[3] == 'a' ? &ai->fadt.pm1a_cnt : &ai->fadt.pm1b_cnt;
        if (nt == 2 && strcmp(tk[1], "none") == 0)
            return g->address == 0;
        return nt == 3 && num(tk[2], &v[0]) && gas_is(g, tk[1], v[0]);
    }
    if (strcmp(k, "reset") == 0) {
        if (nt == 2 && strcmp(tk[1], "none") == 0)
            return !ai->fadt.reset_supported;
        return nt == 4 && num(tk[2], &v[0]) && num(tk[3], &v[1]) && ai->fadt.reset_supported &&
               gas_is(&ai->fadt.reset_reg, tk[1], v[0]) && ai->fadt.reset_value == v[1];
    }
    if (strcmp(k, "spcr") == 0) {
        if (nt == 2 && strcmp(tk[1], "none") == 0)
            return !ai->spcr.present || !ai->spcr.enabled;
        return nt == 5 && num(tk[2], &v[0]) && num(tk[3], &v[1]) && num(tk[4], &v[2]) && ai->spcr.enabled &&
               gas_is(&ai->spcr.base, tk[1], v[0]) && ai->spcr.base.bit_width == v[1] && ai->spcr.baud == v[2];
    }
    if ((strcmp(k, "s5") == 0 || strcmp(k, "hpet") == 0) && nt == 2 && strcmp(tk[1], "none") == 0)
        return k[0] == 's' ? !ai->s5_valid : !ai->hpet.present;

    for (int i = 1; i < nt && i <= 16; i++)
        if (!num(tk[i], &v[i - 1]))
            return 0;
    if (strcmp(k, "cpus") == 0 && nv == 1)
        return ai->cpu_count == v[0];
    if (strcmp(k, "cpus_enabled") == 0 && nv == 1)
        return ai->cpus_enabled == v[0];
    if (strcmp(k, "cpu_ids") == 0) {
        if ((long long)ai->cpu_count != nv)
            return 0;
        for (int i = 0; i < nv; i++)
            if (ai->cpus[i].apic_id != v[i])
                return 0;
        return 1;
    }
    if (strcmp(k, "cpu") == 0 && nv == 5) {
        const struct acpi_cpu *c = find_cpu(ai, (uint32_t)v[0]);
        return c && c->acpi_uid == v[1] && c->enabled == v[2] && c->x2apic == v[3] && c->node == v[4];
    }
    if (strcmp(k, "lapic") == 0 && nv == 1)
        return (long long)ai->lapic_addr == v[0];
    if (strcmp(k, "ioapics") == 0 && nv == 1)
        return ai->ioapic_count == v[0];
    if (strcmp(k, "isos") == 0 && nv == 1)
        return ai->iso_count == v[0];
    if (strcmp(k, "nmis") == 0 && nv == 1)
        return ai->nmi_count == v[0];
    if (strcmp(k, "numa_nodes") == 0 && nv == 1)
        return ai->numa_nodes == v[0];
    if (strcmp(k, "node_of_apic") == 0 && nv == 2)
        return acpi_node_of_apic(ai, (uint32_t)v[0]) == v[1];
    if (strcmp(k, "node_of_addr") == 0 && nv == 2)
        return acpi_node_of_addr(ai, (uint64_t)v[0]) == v[1];
    if (strcmp(k, "distances") == 0) {
        long long n = ai->numa_nodes;
        if (nv != n * n)
            return 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (acpi_node_distance(ai, i, j) != v[i * n + j])
                    return 0;
        return 1;
    }
    if (strcmp(k, "pm_timer_32bit") == 0 && nv == 1)
        return ai->fadt.pm_timer_32bit == v[0];
    if (strcmp(k, "s5") == 0 && nv == 2)
        return ai->s5_valid && ai->s5_slp_typ_a == v[0] && ai->s5_slp_typ_b == v[1];
    if (strcmp(k, "hpet") == 0 && nv == 3)
        return ai->hpet.present && (long long)ai->hpet.base.address == v[0] && ai->hpet.num_comparators == v[1] &&
               ai->hpet.counter_64bit == v[2];
    if (strcmp(k, "hpet_min_tick") == 0 && nv == 1)
        return ai->hpet.min_tick == v[0];
    return -1; /* unknown key or wrong arity */
}

static int expectations_check(const struct acpi_info *ai, const char *text, char *err, size_t errlen)
{
    int bad = 0, lineno = 0;
    size_t used = 0;
    err[0] = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t l = eol ? (size_t)(eol - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)MIN(l, sizeof(line) - 1), p);
        p += l + (eol ? 1 : 0);
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *tk[24];
        int nt = 0;
        for (char *s = strtok(line, " \t\r"); s && nt < 24; s = strtok(NULL, " \t\r"))
            tk[nt++] = s;
        if (nt == 0)
            continue;
        int r = expectation_line(ai, tk, nt);
        if (r != 1) {
            bad++;
            used += (size_t)snprintf(err + used, used < errlen ? errlen - used : 0, "line %d: %s %s\n", lineno,
                                     tk[0], r < 0 ? "(unknown key or wrong number of values)" : "mismatch");
            if (used >= errlen)
                used = errlen - 1;
        }
    }
    return bad;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static const char *fixtures_root(void)
{
    const char *env = getenv("PMB_ACPI_FIXTURES");
    return env && *env ? env : "tests/fixtures/acpi";
}

/* ============================================================================================
 * Fixture tests
 * ========================================================================================== */

static void load_fixture(struct tset *ts, const char *name)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/%s", fixtures_root(), name);
    memset(ts, 0, sizeof(*ts));
    int n = ts_load_dir(ts, dir);
    if (n <= 0)
        fail_msg("fixture %s missing or empty (run from the repo root or set PMB_ACPI_FIXTURES)", dir);
}

/* Exhaustive check of the synthetic set against its .asl sources. */
static void test_fixture_synthetic_2node(void **state)
{
    (void)state;
    struct tset ts;
    load_fixture(&ts, "synthetic-2node");
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);

    assert_int_equal(ai->rsdp_revision, 2);
    assert_true(ai->rsdp_xchecksum_ok);
    assert_true(ai->root_is_xsdt);
    assert_string_equal(ai->rsdp_oem_id, "PMBTST");
    /* XSDT + 6 tables + DSDT, all good and all parsed. */
    assert_int_equal(ai->table_count, 8);
    for (uint32_t i = 0; i < ai->table_count; i++) {
        assert_true(ai->tables[i].checksum_ok);
        assert_int_equal(ai->tables[i].status, ACPI_TBL_OK);
        assert_true(ai->tables[i].parsed);
        assert_null(ai->tables[i].why);
    }
    assert_string_equal(ai->tables[0].sig, "XSDT");
    const struct acpi_table *madt = acpi_find_table(ai, "APIC");
    assert_non_null(madt);
    assert_string_equal(madt->oem_id, "PMBTST");
    assert_string_equal(madt->oem_table_id, "SYN2NODE");
    assert_int_equal(madt->revision, 5);
    assert_int_equal(madt->length, 142);
    assert_string_equal(ai->tables[ai->table_count - 1].sig, "DSDT");

    /* MADT */
    assert_true(ai->madt_present);
    assert_int_equal(ai->lapic_addr, 0xFEE00000u);
    assert_false(ai->lapic_addr_overridden);
    assert_int_equal(ai->madt_flags & 1, 1);
    assert_int_equal(ai->cpu_count, 5);
    assert_int_equal(ai->cpus_enabled, 4);
    assert_int_equal(ai->cpus_dropped, 0);
    assert_int_equal(ai->cpus_ignored, 0);
    static const struct { uint32_t apic, uid; bool en, oc, x2; int node; } want[] = {
        {0, 0, true, false, false, 0}, {2, 1, true, false, false, 1}, {4, 2, true, false, false, 0},
        {6, 3, false, true, false, 1}, {0x100, 4, true, false, true, 1},
    };
    for (unsigned i = 0; i < ARRAY_SIZE(want); i++) {
        const struct acpi_cpu *c = &ai->cpus[i];
        assert_int_equal(c->apic_id, want[i].apic);
        assert_int_equal(c->acpi_uid, want[i].uid);
        assert_int_equal(c->enabled, want[i].en);
        assert_int_equal(c->online_capable, want[i].oc);
        assert_int_equal(c->x2apic, want[i].x2);
        assert_int_equal(c->node, want[i].node);
    }
    assert_int_equal(ai->ioapic_count, 1);
    assert_int_equal(ai->ioapics[0].id, 0);
    assert_int_equal(ai->ioapics[0].address, 0xFEC00000u);
    assert_int_equal(ai->ioapics[0].gsi_base, 0);
    assert_int_equal(ai->iso_count, 2);
    assert_int_equal(ai->nmi_count, 2);

    /* SRAT: the disabled CPU entry (apic 8, domain 5) and disabled memory (domain 7) add no node. */
    assert_true(ai->srat_present);
    assert_true(ai->numa_from_srat);
    assert_false(ai->numa_truncated);
    assert_int_equal(ai->numa_nodes, 2);
    assert_int_equal(ai->node_domain[0], 0);
    assert_int_equal(ai->node_domain[1], 1);
    assert_int_equal(ai->cpu_affinity_count, 5);
    assert_int_equal(acpi_node_of_apic(ai, 0), 0);
    assert_int_equal(acpi_node_of_apic(ai, 2), 1);
    assert_int_equal(acpi_node_of_apic(ai, 0x100), 1);
    assert_int_equal(acpi_node_of_apic(ai, 8), -1);
    assert_int_equal(acpi_node_of_apic(ai, 12345), -1);
    assert_int_equal(ai->mem_count, 5);
    assert_int_equal(ai->mem[3].base, 0x100000000ull);
    assert_int_equal(ai->mem[3].length, 0x80000000ull);
    assert_int_equal(ai->mem[3].domain, 1);
    assert_int_equal(ai->mem[3].node, 1);
    assert_true(ai->mem[3].enabled && ai->mem[3].hotpluggable && ai->mem[3].nonvolatile);
    assert_false(ai->mem[4].enabled);
    assert_int_equal(ai->mem[4].node, -1);
    assert_int_equal(acpi_node_of_addr(ai, 0), 0);
    assert_int_equal(acpi_node_of_addr(ai, 0x9FFFF), 0);
    assert_int_equal(acpi_node_of_addr(ai, 0xA0000), -1);  /* legacy hole */
    assert_int_equal(acpi_node_of_addr(ai, 0x7FFFFFFF), 0);
    assert_int_equal(acpi_node_of_addr(ai, 0x80000000), 1);
    assert_int_equal(acpi_node_of_addr(ai, 0x17FFFFFFFull), 1);
    assert_int_equal(acpi_node_of_addr(ai, 0x180000000ull), -1);
    assert_int_equal(acpi_node_of_addr(ai, 0x200000000ull), -1); /* disabled range */

    /* SLIT */
    assert_true(ai->slit_present);
    assert_int_equal(ai->slit_localities, 2);
    assert_int_equal(acpi_node_distance(ai, 0, 0), 10);
    assert_int_equal(acpi_node_distance(ai, 0, 1), 21);
    assert_int_equal(acpi_node_distance(ai, 1, 0), 21);
    assert_int_equal(acpi_node_distance(ai, 1, 1), 10);
    assert_int_equal(acpi_node_distance(ai, 0, 2), -1);
    assert_int_equal(acpi_node_distance(ai, -1, 0), -1);

    /* FADT */
    const struct acpi_fadt *f = &ai->fadt;
    assert_true(f->present);
    assert_int_equal(f->revision, 6);
    assert_int_equal(f->minor_revision, 3);
    assert_int_equal(f->flags, 0x501);
    assert_int_equal(f->iapc_boot_arch, 3);
    assert_int_equal(f->sci_int, 9);
    assert_int_equal(f->smi_cmd, 0xB2);
    assert_int_equal(f->acpi_enable, 0xF1);
    assert_int_equal(f->pm_timer.space_id, ACPI_GAS_IO);
    assert_int_equal(f->pm_timer.address, 0x408);
    assert_int_equal(f->pm_timer.bit_width, 32);
    assert_true(f->pm_timer_32bit);
    assert_int_equal(f->pm1a_cnt.space_id, ACPI_GAS_IO);
    assert_int_equal(f->pm1a_cnt.address, 0x404);
    assert_int_equal(f->pm1a_cnt.bit_width, 16);
    assert_int_equal(f->pm1b_cnt.address, 0);
    assert_true(f->reset_supported);
    assert_int_equal(f->reset_reg.space_id, ACPI_GAS_IO);
    assert_int_equal(f->reset_reg.address, 0xCF9);
    assert_int_equal(f->reset_reg.bit_width, 8);
    assert_int_equal(f->reset_value, 6);
    assert_int_equal(f->dsdt_phys, acpi_find_table(ai, "DSDT")->phys);

    /* DSDT \_S5 = {5, One, ...}; the decoy string and \_S3 are skipped. */
    assert_true(ai->s5_valid);
    assert_int_equal(ai->s5_slp_typ_a, 5);
    assert_int_equal(ai->s5_slp_typ_b, 1);
    assert_int_equal(acpi_s5_pm1_cnt(ai, 0), (5 << 10) | (1 << 13));
    assert_int_equal(acpi_s5_pm1_cnt(ai, 1), (1 << 10) | (1 << 13));

    /* HPET */
    assert_true(ai->hpet.present);
    assert_int_equal(ai->hpet.base.space_id, ACPI_GAS_MEMORY);
    assert_int_equal(ai->hpet.base.address, 0xFED00000u);
    assert_int_equal(ai->hpet.hw_rev, 1);
    assert_int_equal(ai->hpet.num_comparators, 3);
    assert_true(ai->hpet.counter_64bit);
    assert_true(ai->hpet.legacy_replacement);
    assert_int_equal(ai->hpet.pci_vendor_id, 0x8086);
    assert_int_equal(ai->hpet.min_tick, 0x80);

    /* SPCR */
    assert_true(ai->spcr.present);
    assert_true(ai->spcr.enabled);
    assert_int_equal(ai->spcr.interface_type, 0);
    assert_string_equal(acpi_spcr_type_name(ai->spcr.interface_type), "16550");
    assert_int_equal(ai->spcr.base.space_id, ACPI_GAS_IO);
    assert_int_equal(ai->spcr.base.address, 0x3F8);
    assert_int_equal(ai->spcr.base.bit_width, 8);
    assert_int_equal(ai->spcr.baud_code, 7);
    assert_int_equal(ai->spcr.baud, 115200);
    assert_int_equal(ai->spcr.parity, 0);
    assert_int_equal(ai->spcr.stop_bits, 1);
    assert_int_equal(ai->spcr.irq, 4);
    assert_int_equal(ai->spcr.terminal_type, 3);

    free(ai);
    ts_free(&ts);
}

/* Fields that depend on where tables were placed, cleared so two layouts can be compared. */
static void clear_layout(struct acpi_info *ai)
{
    memset(ai->tables, 0, sizeof(ai->tables));
    ai->rsdp_phys = ai->rsdt_phys = ai->xsdt_phys = ai->root_phys = 0;
    ai->fadt.dsdt_phys = 0;
}

/* Every fixture directory: clean parse, basic invariants, layout independence, expect.txt. */
static void test_fixtures_all(void **state)
{
    (void)state;
    DIR *d = opendir(fixtures_root());
    if (!d)
        fail_msg("no fixture directory %s (run from the repo root or set PMB_ACPI_FIXTURES)", fixtures_root());
    char *names[256];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && nn < 256) {
        char p[1024];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", fixtures_root(), e->d_name);
        if (e->d_name[0] != '.' && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof(names[0]), cmp_str);
    bool saw_synthetic = false;
    for (int i = 0; i < nn; i++) {
        print_message("fixture %s\n", names[i]);
        saw_synthetic |= strcmp(names[i], "synthetic-2node") == 0;
        struct tset ts;
        load_fixture(&ts, names[i]);
        struct acpi_info *ai = new_ai(), *ai2 = new_ai();
        assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
        for (uint32_t k = 0; k < ai->table_count; k++) {
            if (ai->tables[k].status != ACPI_TBL_OK)
                fail_msg("%s: table %s rejected: %s", names[i], ai->tables[k].sig, ai->tables[k].why);
        }
        if (ts_get(&ts, "APIC")) {
            assert_true(ai->madt_present);
            assert_true(ai->cpu_count >= 1 && ai->cpus_enabled >= 1);
            assert_true(ai->lapic_addr != 0);
        }
        assert_true(ai->numa_nodes >= 1 && ai->numa_nodes <= ACPI_MAX_NODES);
        if (ts_get(&ts, "SRAT")) {
            assert_true(ai->srat_present);
            for (uint32_t k = 0; k < ai->cpu_count; k++)
                if (ai->cpus[k].enabled)
                    assert_true(ai->cpus[k].node >= 0 && (uint32_t)ai->cpus[k].node < ai->numa_nodes);
        } else {
            assert_int_equal(ai->numa_nodes, 1);
        }
        for (uint32_t n = 0; n < ai->numa_nodes; n++)
            assert_int_equal(acpi_node_distance(ai, (int)n, (int)n), 10);
        if (ts_get(&ts, "SLIT"))
            assert_true(ai->slit_present);
        if (ts_get(&ts, "FACP")) {
            assert_true(ai->fadt.present);
            if (ts_get(&ts, "DSDT")) {
                const struct acpi_table *dt = acpi_find_table(ai, "DSDT");
                assert_non_null(dt);
                assert_true(dt->checksum_ok && dt->parsed);
                assert_true(ai->s5_valid);
            }
        }
        if (ts_get(&ts, "HPET")) {
            assert_true(ai->hpet.present && ai->hpet.base.address != 0);
            assert_true(ai->hpet.num_comparators >= 3); /* HPET spec 1.0a: at least 3 timers */
        }
        if (ts_get(&ts, "SPCR"))
            assert_true(ai->spcr.present);

        /* Same tables at odd addresses parse to the same result. */
        struct build_opts odd = {.misalign = 3};
        assert_int_equal(parse_set(ai2, &ts, &odd), ACPI_OK);
        clear_layout(ai);
        clear_layout(ai2);
        assert_memory_equal(ai, ai2, sizeof(*ai));
        assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);

        char path[1024];
        snprintf(path, sizeof(path), "%s/%s/expect.txt", fixtures_root(), names[i]);
        char *text = read_text(path);
        if (text) {
            char err[4096];
            int bad = expectations_check(ai, text, err, sizeof(err));
            if (bad)
                fail_msg("%s: %d expectation(s) failed:\n%s", path, bad, err);
            free(text);
        } else {
            print_message("  (no expect.txt: invariants only)\n");
        }
        free(ai);
        free(ai2);
        ts_free(&ts);
        free(names[i]);
    }
    assert_true(saw_synthetic);
}

/* The expectation checker itself must be able to fail. */
static void test_expect_checker_catches_mismatches(void **state)
{
    (void)state;
    struct tset ts;
    load_fixture(&ts, "synthetic-2node");
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    char err[2048];
    assert_int_equal(expectations_check(ai, "cpus 5\nnuma_nodes 2\n# comment\n\ns5 5 1\n", err, sizeof(err)), 0);
    assert_int_equal(expectations_check(ai, "cpus 4\n", err, sizeof(err)), 1);
    assert_int_equal(expectations_check(ai, "numa_nodes 2\ndistances 10 20 20 10\n", err, sizeof(err)), 1);
    assert_non_null(strstr(err, "line 2: distances"));
    assert_int_equal(expectations_check(ai, "mem 0x0 0xa0000 1 e\n", err, sizeof(err)), 1);
    assert_int_equal(expectations_check(ai, "cpu 0x100 4 1 0 1\n", err, sizeof(err)), 1); /* x2apic flag wrong */
    assert_int_equal(expectations_check(ai, "spcr io 0x2f8 8 115200\n", err, sizeof(err)), 1);
    assert_int_equal(expectations_check(ai, "tables APIC MCFG\n", err, sizeof(err)), 1);
    assert_int_equal(expectations_check(ai, "cpus\n", err, sizeof(err)), 1);
    assert_int_equal(expectations_check(ai, "frobnicate 1\n", err, sizeof(err)), 1);
    assert_non_null(strstr(err, "unknown key"));
    free(ai);
    ts_free(&ts);
}

/* ============================================================================================
 * Hostile and edge-case tables built in C
 * ========================================================================================== */

/* A small complete set: MADT with 2 CPUs, FADT (rev 6) with PM timer, DSDT with \_S5, HPET. */
static struct tb *make_madt2(void)
{
    struct tb *t = tb_new("APIC", 5);
    madt_begin(t, 0xFEE00000);
    madt_lapic(t, 0, 0, 1);
    madt_lapic(t, 1, 1, 1);
    tb_finish(t);
    return t;
}

static struct tb *make_fadt(uint32_t len, uint8_t rev, uint32_t flags)
{
    struct tb *t = tb_new("FACP", rev);
    tb_zero(t, len - ACPI_HDR_LEN);
    put32(t->b + 64, 0x604);     /* PM1a_CNT_BLK */
    put32(t->b + 76, 0x608);     /* PM_TMR_BLK */
    t->b[89] = 2;                /* PM1_CNT_LEN */
    t->b[91] = 4;                /* PM_TMR_LEN */
    put32(t->b + 112, flags);
    tb_finish_len(t, len);
    return t;
}

static struct tb *make_dsdt_raw(const uint8_t *aml, size_t n)
{
    struct tb *t = tb_new("DSDT", 2);
    tb_put(t, aml, n);
    tb_finish(t);
    return t;
}

static struct tb *make_hpet(void)
{
    struct tb *t = tb_new("HPET", 1);
    tb_u32(t, 0x8086A201);
    tb_gas(t, ACPI_GAS_MEMORY, 64, 0, 0xFED00000);
    tb_u8(t, 0);
    tb_u16(t, 0x80);
    tb_u8(t, 0);
    tb_finish(t);
    return t;
}

static const uint8_t S5_AML[] = {0x08, '_', 'S', '5', '_', 0x12, 0x07, 0x04, 0x0A, 0x05, 0x0A, 0x05, 0x00, 0x00};

static void small_set(struct tset *ts)
{
    memset(ts, 0, sizeof(*ts));
    ts_take(ts, make_madt2());
    ts_take(ts, make_fadt(276, 6, ACPI_FADT_TMR_VAL_EXT));
    ts_take(ts, make_hpet());
    ts_take(ts, make_dsdt_raw(S5_AML, sizeof(S5_AML)));
}

static void assert_small_set_parsed(const struct acpi_info *ai)
{
    assert_true(ai->madt_present);
    assert_int_equal(ai->cpu_count, 2);
    assert_true(ai->fadt.present);
    assert_int_equal(ai->fadt.pm_timer.address, 0x608);
    assert_true(ai->s5_valid);
    assert_int_equal(ai->s5_slp_typ_a, 5);
}

static void test_rsdp_bad_checksum(void **state)
{
    (void)state;
    struct tset ts;
    small_set(&ts);
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, &ts, NULL, &bt);
    fm_ptr(&fm, bt.rsdp)[8] ^= 0x55;
    struct acpi_info *ai = new_ai();
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_E_RSDP_CHECKSUM);
    assert_int_equal(ai->table_count, 0);
    assert_false(ai->madt_present);
    assert_int_equal(ai->numa_nodes, 1);
    assert_int_equal(acpi_node_of_apic(ai, 0), 0);
    assert_string_equal(acpi_strerror(ACPI_E_RSDP_CHECKSUM), "RSDP checksum bad");

    /* Signature wrong (checksum recomputed so only the signature is at fault). */
    fm_ptr(&fm, bt.rsdp)[0] = 'X';
    fix_checksum(fm_ptr(&fm, bt.rsdp), 20, 8);
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_E_RSDP_SIG);
    fm_free(&fm);
    free(ai);
    ts_free(&ts);
}

static void test_rsdp_unmapped_and_args(void **state)
{
    (void)state;
    struct fakemem fm;
    fm_init(&fm);
    uint8_t junk[8] = {0};
    fm_add(&fm, junk, sizeof(junk), 0);
    struct acpi_info *ai = new_ai();
    assert_int_equal(acpi_parse(ai, 0x1000, fm_map, &fm), ACPI_E_RSDP_UNMAPPED);
    /* Only 8 bytes left in the window: the 20-byte RSDP read is refused. */
    assert_int_equal(acpi_parse(ai, FAKE_BASE, fm_map, &fm), ACPI_E_RSDP_UNMAPPED);
    assert_int_equal(acpi_parse(ai, 0, fm_map, &fm), ACPI_E_ARG);
    assert_int_equal(acpi_parse(ai, FAKE_BASE, NULL, &fm), ACPI_E_ARG);
    assert_int_equal(ai->table_count, 0);
    assert_int_equal(acpi_parse(NULL, FAKE_BASE, fm_map, &fm), ACPI_E_ARG);
    fm_free(&fm);
    free(ai);
}

static void test_rsdp_bad_xchecksum_uses_rsdt(void **state)
{
    (void)state;
    struct tset ts;
    small_set(&ts);
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, &ts, NULL, &bt);
    fm_ptr(&fm, bt.rsdp)[32] ^= 1;  /* extended checksum only */
    struct acpi_info *ai = new_ai();
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_OK);
    assert_false(ai->rsdp_xchecksum_ok);
    assert_int_equal(ai->xsdt_phys, 0);
    assert_false(ai->root_is_xsdt);
    assert_string_equal(ai->tables[0].sig, "RSDT");
    assert_small_set_parsed(ai);

    /* Same, but without an RSDT to fall back to. */
    put32(fm_ptr(&fm, bt.rsdp) + 16, 0);
    fix_checksum(fm_ptr(&fm, bt.rsdp), 20, 8);
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_E_RSDP_XCHECKSUM);
    fm_free(&fm);
    free(ai);
    ts_free(&ts);
}

/* ACPI 1.0: RSDP revision 0 (20 bytes) and an RSDT with 32-bit entries; 116-byte FADT. */
static void test_rsdt_only_acpi1(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_madt2());
    /* RESET_REG_SUP set, but a 116-byte FADT has no room for RESET_REG: not supported. */
    ts_take(&ts, make_fadt(116, 1, ACPI_FADT_RESET_REG_SUP));
    ts_take(&ts, make_dsdt_raw(S5_AML, sizeof(S5_AML)));
    struct acpi_info *ai = new_ai();
    struct build_opts o = {.acpi1 = true};
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, &ts, &o, &bt);
    /* Garbage where a 2.0 RSDP would hold the XSDT address must not be looked at: the
     * RSDP is the last thing laid out, so nothing is mapped past its 20 bytes. */
    assert_int_equal(fm.limit, bt.rsdp - FAKE_BASE + 20);
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_OK);
    fm_free(&fm);

    assert_int_equal(ai->rsdp_revision, 0);
    assert_false(ai->root_is_xsdt);
    assert_false(ai->rsdp_xchecksum_ok);
    assert_int_equal(ai->table_count, 4); /* RSDT, APIC, FACP, DSDT */
    assert_string_equal(ai->tables[0].sig, "RSDT");
    assert_int_equal(ai->cpu_count, 2);
    /* ACPI 1.0 FADT: legacy blocks become I/O GAS, no reset register, 24-bit timer. */
    assert_true(ai->fadt.present);
    assert_int_equal(ai->fadt.revision, 1);
    assert_int_equal(ai->fadt.pm_timer.space_id, ACPI_GAS_IO);
    assert_int_equal(ai->fadt.pm_timer.address, 0x608);
    assert_int_equal(ai->fadt.pm_timer.bit_width, 32);
    assert_false(ai->fadt.pm_timer_32bit);
    assert_int_equal(ai->fadt.pm1a_cnt.address, 0x604);
    assert_int_equal(ai->fadt.pm1a_cnt.bit_width, 16);
    assert_false(ai->fadt.reset_supported);
    assert_int_equal(acpi_find_table(ai, "FACP")->status, ACPI_TBL_OK);
    assert_true(ai->s5_valid);
    free(ai);
    ts_free(&ts);
}

/* A revision 0 RSDP followed by bytes that look like a valid 2.0 extension: still ACPI 1.0. */
static void test_rsdp_rev0_ignores_extension(void **state)
{
    (void)state;
    struct tset ts;
    small_set(&ts);
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, &ts, NULL, &bt);
    uint8_t *r = fm_ptr(&fm, bt.rsdp);
    r[15] = 0;
    fix_checksum(r, 20, 8);
    fix_checksum(r, 36, 32);
    struct acpi_info *ai = new_ai();
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_OK);
    assert_int_equal(ai->rsdp_revision, 0);
    assert_false(ai->rsdp_xchecksum_ok);
    assert_int_equal(ai->xsdt_phys, 0);
    assert_false(ai->root_is_xsdt);
    assert_small_set_parsed(ai);
    fm_free(&fm);
    free(ai);
    ts_free(&ts);
}

static void test_xsdt_bad_falls_back_to_rsdt(void **state)
{
    (void)state;
    struct tset ts;
    small_set(&ts);
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, &ts, NULL, &bt);
    fm_ptr(&fm, bt.xsdt)[20] ^= 0xFF; /* corrupt the XSDT body */
    struct acpi_info *ai = new_ai();
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_OK);
    assert_string_equal(ai->tables[0].sig, "XSDT");
    assert_int_equal(ai->tables[0].status, ACPI_TBL_BAD_CHECKSUM);
    assert_string_equal(ai->tables[1].sig, "RSDT");
    assert_int_equal(ai->tables[1].status, ACPI_TBL_OK);
    assert_false(ai->root_is_xsdt);
    assert_small_set_parsed(ai);

    /* Break the RSDT too: nothing to walk. */
    fm_ptr(&fm, bt.rsdt)[20] ^= 0xFF;
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_E_NO_ROOT);
    assert_int_equal(ai->table_count, 2);
    assert_int_equal(ai->tables[1].status, ACPI_TBL_BAD_CHECKSUM);
    assert_false(ai->madt_present);

    /* A root pointer at a table with the wrong signature. */
    put64(fm_ptr(&fm, bt.rsdp) + 24, bt.phys[0]); /* XSDT -> MADT */
    fix_checksum(fm_ptr(&fm, bt.rsdp), 36, 32);
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_E_NO_ROOT);
    assert_int_equal(ai->tables[0].status, ACPI_TBL_BAD_SIG);
    assert_string_equal(ai->tables[0].sig, "APIC");
    fm_free(&fm);
    free(ai);
    ts_free(&ts);
}

static void test_bad_table_checksum_skipped(void **state)
{
    (void)state;
    struct tset ts;
    small_set(&ts);
    ts_get(&ts, "HPET")->data[45] ^= 0x10; /* inside the base address */
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    const struct acpi_table *h = acpi_find_table(ai, "HPET");
    assert_non_null(h);
    assert_false(h->checksum_ok);
    assert_false(h->parsed);
    assert_int_equal(h->status, ACPI_TBL_BAD_CHECKSUM);
    assert_string_equal(acpi_tbl_status_name(h->status), "bad-checksum");
    assert_non_null(h->why);
    assert_int_equal(h->length, 56);
    assert_false(ai->hpet.present);
    assert_int_equal(ai->hpet.base.address, 0);
    assert_small_set_parsed(ai);  /* the rest is still parsed */
    free(ai);
    ts_free(&ts);
}

/* The MADT header claims fewer bytes than its last subtable needs (checksum over the claim). */
static void test_madt_truncated(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    struct tb *t = tb_new("APIC", 5);
    madt_begin(t, 0xFEE00000);
    madt_lapic(t, 0, 0, 1);
    madt_lapic(t, 1, 1, 1);
    madt_lapic(t, 2, 2, 1);
    tb_finish_len(t, 44 + 8 + 8 + 5);   /* third entry cut after 5 of its 8 bytes */
    ts_add(&ts, t->b, 44 + 8 + 8 + 5);
    free(t);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    const struct acpi_table *m = acpi_find_table(ai, "APIC");
    assert_true(m->checksum_ok);
    assert_true(m->parsed);
    assert_int_equal(m->status, ACPI_TBL_MALFORMED);
    assert_string_equal(m->why, "MADT subtable runs past the end");
    assert_int_equal(ai->cpu_count, 2);

    /* Shorter than the fixed part: nothing used. */
    ts_free(&ts);
    t = tb_new("APIC", 5);
    tb_u32(t, 0xFEE00000);
    tb_finish(t);
    ts_take(&ts, t);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(acpi_find_table(ai, "APIC")->status, ACPI_TBL_MALFORMED);
    assert_false(acpi_find_table(ai, "APIC")->parsed);
    assert_false(ai->madt_present);
    assert_int_equal(ai->lapic_addr, 0);

    /* A single trailing byte after the last entry. */
    ts_free(&ts);
    t = tb_new("APIC", 5);
    madt_begin(t, 0xFEE00000);
    madt_lapic(t, 0, 0, 1);
    tb_u8(t, 0);
    tb_finish(t);
    ts_take(&ts, t);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->cpu_count, 1);
    assert_string_equal(acpi_find_table(ai, "APIC")->why, "MADT trailing byte");

    /* A LAPIC address override too short to hold its address is not applied. */
    ts_free(&ts);
    t = tb_new("APIC", 5);
    madt_begin(t, 0xFEE00000);
    madt_lapic(t, 0, 0, 1);
    tb_u8(t, 5); tb_u8(t, 6); tb_u16(t, 0); tb_u16(t, 0x1234);
    tb_finish(t);
    ts_take(&ts, t);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->lapic_addr, 0xFEE00000u);
    assert_false(ai->lapic_addr_overridden);
    assert_string_equal(acpi_find_table(ai, "APIC")->why, "MADT LAPIC override too short");
    free(ai);
    ts_free(&ts);
}

static void test_madt_zero_length_subtable(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    struct tb *t = tb_new("APIC", 5);
    madt_begin(t, 0xFEE00000);
    madt_lapic(t, 0, 0, 1);
    tb_u8(t, 0); tb_u8(t, 0);           /* type 0, length 0: would loop forever */
    tb_zero(t, 6);
    madt_lapic(t, 1, 1, 1);             /* unreachable after the bad entry */
    tb_finish(t);
    ts_take(&ts, t);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->cpu_count, 1);
    assert_int_equal(acpi_find_table(ai, "APIC")->status, ACPI_TBL_MALFORMED);
    assert_string_equal(acpi_find_table(ai, "APIC")->why, "MADT subtable length < 2");

    /* Length 1 is just as bad. Same for the SRAT walk. */
    ts_free(&ts);
    t = tb_new("SRAT", 3);
    srat_begin(t);
    srat_apic(t, 0, 0, 1);
    tb_u8(t, 1); tb_u8(t, 1);
    tb_zero(t, 38);
    tb_finish(t);
    ts_take(&ts, t);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->cpu_affinity_count, 1);
    assert_int_equal(ai->mem_count, 0);
    assert_string_equal(acpi_find_table(ai, "SRAT")->why, "SRAT subtable length < 2");
    free(ai);
    ts_free(&ts);
}

static void test_madt_subtable_past_end_and_short_entries(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    struct tb *t = tb_new("APIC", 5);
    madt_begin(t, 0xFEE00000);
    tb_u8(t, 0); tb_u8(t, 4); tb_u8(t, 9); tb_u8(t, 9);   /* LAPIC claiming 4 bytes: skipped */
    madt_lapic(t, 1, 1, 1);
    tb_u8(t, 9); tb_u8(t, 8); tb_zero(t, 6);               /* x2APIC claiming 8 bytes: skipped */
    madt_lapic(t, 2, 2, 1);
    tb_u8(t, 9); tb_u8(t, 200); tb_zero(t, 14);            /* x2APIC claiming 200 bytes: stop */
    tb_finish(t);
    ts_take(&ts, t);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->cpu_count, 2);
    assert_int_equal(ai->cpus[0].apic_id, 1);
    assert_int_equal(ai->cpus[1].apic_id, 2);
    assert_null(find_cpu(ai, 9));
    /* The first problem is the one reported. */
    assert_string_equal(acpi_find_table(ai, "APIC")->why, "MADT LAPIC entry too short");
    free(ai);
    ts_free(&ts);
}

static void test_madt_override_dedupe_invalid(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    struct tb *t = tb_new("APIC", 5);
    madt_begin(t, 0xFEE00000);
    madt_lapic(t, 0, 0, 1);
    madt_lapic(t, 1, 0xFF, 1);                 /* invalid xAPIC id */
    madt_x2apic(t, 0, 7, 1);                   /* same CPU listed again as x2APIC */
    madt_x2apic(t, 0xFFFFFFFF, 8, 1);          /* x2APIC broadcast id */
    madt_x2apic(t, 0x1234, 9, 0);              /* disabled, not online capable */
    tb_u8(t, 5); tb_u8(t, 12); tb_u16(t, 0); tb_u64(t, 0x1FEE00000ull); /* LAPIC address override */
    tb_u8(t, 4); tb_u8(t, 6); tb_u8(t, 0xFF); tb_u16(t, 5); tb_u8(t, 1); /* LAPIC NMI */
    tb_u8(t, 0x7F); tb_u8(t, 3); tb_u8(t, 0);  /* unknown type with a sane length: skipped */
    tb_finish(t);
    ts_take(&ts, t);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(acpi_find_table(ai, "APIC")->status, ACPI_TBL_OK);
    assert_int_equal(ai->lapic_addr, 0x1FEE00000ull);
    assert_true(ai->lapic_addr_overridden);
    assert_int_equal(ai->cpu_count, 2);
    assert_int_equal(ai->cpus_enabled, 1);
    assert_int_equal(ai->cpus_ignored, 3);
    assert_false(ai->cpus[0].x2apic);
    assert_int_equal(ai->cpus[1].apic_id, 0x1234);
    assert_false(ai->cpus[1].enabled);
    assert_false(ai->cpus[1].online_capable);
    assert_int_equal(ai->nmi_count, 1);
    free(ai);
    ts_free(&ts);
}

static void test_madt_too_many_cpus(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    struct tb *t = tb_new("APIC", 5);
    madt_begin(t, 0xFEE00000);
    for (uint32_t i = 0; i < 600; i++)
        madt_x2apic(t, i, i, 1);
    tb_finish(t);
    ts_take(&ts, t);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->cpu_count, ACPI_MAX_CPUS);
    assert_int_equal(ai->cpus_dropped, 600 - ACPI_MAX_CPUS);
    assert_int_equal(ai->cpus[ACPI_MAX_CPUS - 1].apic_id, ACPI_MAX_CPUS - 1);
    free(ai);
    ts_free(&ts);
}

static void test_xsdt_entry_unmapped(void **state)
{
    (void)state;
    struct tset ts;
    small_set(&ts);
    const uint64_t extra[] = {0xDEAD0000ull, 0, 0xFFFFFFFFFFFFFFF0ull};
    struct build_opts o = {.extra = extra, .n_extra = 3};
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, &o), ACPI_OK);
    /* XSDT + 3 tables + 2 bad entries (the null slot is skipped, not recorded) + DSDT. */
    assert_int_equal(ai->table_count, 7);
    int unmapped = 0;
    for (uint32_t i = 0; i < ai->table_count; i++) {
        if (ai->tables[i].status == ACPI_TBL_UNMAPPED) {
            unmapped++;
            assert_string_equal(ai->tables[i].sig, "????");
            assert_false(ai->tables[i].checksum_ok);
        }
    }
    assert_int_equal(unmapped, 2);
    assert_int_equal(ai->tables[4].phys, 0xDEAD0000ull);
    assert_small_set_parsed(ai);
    free(ai);
    ts_free(&ts);
}

static void test_absurd_and_overrunning_lengths(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_madt2());
    struct tb *h = make_hpet();
    ts_take(&ts, h);
    struct tb *s = tb_new("SPCR", 2);
    tb_zero(s, 80 - ACPI_HDR_LEN);
    tb_finish(s);
    ts_take(&ts, s);
    put32(ts_get(&ts, "HPET")->data + 4, 0xFFFFFFFFu);  /* absurd */
    put32(ts_get(&ts, "SPCR")->data + 4, 12);           /* shorter than a header */
    struct acpi_info *ai = new_ai();
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, &ts, NULL, &bt);
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_OK);
    assert_true(fm.max_map_len <= 4096); /* never asked map() for the absurd length */
    fm_free(&fm);
    assert_int_equal(acpi_find_table(ai, "HPET")->status, ACPI_TBL_BAD_LENGTH);
    assert_int_equal(acpi_find_table(ai, "HPET")->length, 0xFFFFFFFFu);
    assert_int_equal(acpi_find_table(ai, "SPCR")->status, ACPI_TBL_BAD_LENGTH);
    assert_false(ai->hpet.present);
    assert_false(ai->spcr.present);
    assert_int_equal(ai->cpu_count, 2);
    ts_free(&ts);

    /* A table that fits ACPI_MAX_TABLE_LEN but runs past the end of accessible memory: its
     * header is readable, and it claims one byte more than the window holds after it. */
    small_set(&ts);
    fm_init(&fm);
    build(&fm, &ts, NULL, &bt);
    struct tb *big = tb_new("SSDT", 2);
    tb_zero(big, 100);
    tb_finish(big);
    uint64_t ssdt = fm_add(&fm, big->b, big->n, 0);
    free(big);
    uint64_t addrs[8];
    int na = 0;
    for (int i = 0; i < ts.n; i++)
        if (memcmp(ts.b[i].sig, "DSDT", 4) != 0)
            addrs[na++] = bt.phys[i];
    addrs[na++] = ssdt;
    uint64_t xsdt = add_root(&fm, "XSDT", addrs, na, 8, 0);
    uint64_t rsdp = add_rsdp(&fm, 2, 0, xsdt);
    uint8_t *body = fm_ptr(&fm, ssdt);
    uint32_t claim = (uint32_t)(fm.limit - (ssdt - FAKE_BASE) + 1);
    put32(body + 4, claim);
    assert_true(claim < ACPI_MAX_TABLE_LEN);
    assert_int_equal(acpi_parse(ai, rsdp, fm_map, &fm), ACPI_OK);
    const struct acpi_table *st = acpi_find_table(ai, "SSDT");
    assert_non_null(st);
    assert_int_equal(st->status, ACPI_TBL_OVERRUN);
    assert_false(st->checksum_ok);
    assert_small_set_parsed(ai);
    fm_free(&fm);
    free(ai);
    ts_free(&ts);
}

static struct tb *make_slit(uint64_t n, const uint8_t *m, size_t mlen)
{
    struct tb *t = tb_new("SLIT", 1);
    tb_u64(t, n);
    tb_put(t, m, mlen);
    tb_finish(t);
    return t;
}

static struct tb *make_srat_domains(const uint32_t *doms, int n, uint8_t rev)
{
    struct tb *t = tb_new("SRAT", rev);
    srat_begin(t);
    for (int i = 0; i < n; i++) {
        srat_apic(t, (uint8_t)i, doms[i], 1);
        srat_mem(t, doms[i], (uint64_t)i << 32, 1ull << 32, 1);
    }
    tb_finish(t);
    return t;
}

static void test_slit_hostile(void **state)
{
    (void)state;
    struct acpi_info *ai = new_ai();
    struct tset ts;
    uint8_t m[17 * 17];
    for (int i = 0; i < 17; i++)
        for (int j = 0; j < 17; j++)
            m[i * 17 + j] = i == j ? 10 : 20;
    const uint32_t doms[2] = {0, 1};

    /* 17 localities: more than ACPI_MAX_NODES. */
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_srat_domains(doms, 2, 3));
    ts_take(&ts, make_slit(17, m, sizeof(m)));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(acpi_find_table(ai, "SLIT")->status, ACPI_TBL_MALFORMED);
    assert_false(acpi_find_table(ai, "SLIT")->parsed);
    assert_false(ai->slit_present);
    assert_int_equal(acpi_node_distance(ai, 0, 1), ACPI_DIST_REMOTE);
    assert_int_equal(acpi_node_distance(ai, 1, 1), ACPI_DIST_LOCAL);
    ts_free(&ts);

    /* A locality count whose square overflows 64 bits. */
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_slit(0x100000001ull, m, 4));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(acpi_find_table(ai, "SLIT")->status, ACPI_TBL_MALFORMED);
    ts_free(&ts);

    /* Claims 4 localities but carries a 2x2 matrix. */
    memset(&ts, 0, sizeof(ts));
    const uint8_t m2[4] = {10, 21, 21, 10};
    ts_take(&ts, make_slit(4, m2, 4));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_string_equal(acpi_find_table(ai, "SLIT")->why, "SLIT matrix runs past the end");
    assert_false(ai->slit_present);
    ts_free(&ts);

    /* Invalid distances: diagonal not 10, and an off-diagonal 10. */
    const uint8_t bad1[4] = {11, 21, 21, 10}, bad2[4] = {10, 10, 21, 10}, zero[1] = {10};
    const uint8_t *bads[] = {bad1, bad2};
    for (int k = 0; k < 2; k++) {
        memset(&ts, 0, sizeof(ts));
        ts_take(&ts, make_slit(2, bads[k], 4));
        assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
        assert_string_equal(acpi_find_table(ai, "SLIT")->why, "SLIT distances invalid");
        assert_false(ai->slit_present);
        ts_free(&ts);
    }
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_slit(0, zero, 1));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(acpi_find_table(ai, "SLIT")->status, ACPI_TBL_MALFORMED);
    ts_free(&ts);

    /* Exactly ACPI_MAX_NODES localities is fine. */
    uint8_t m16[16 * 16];
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            m16[i * 16 + j] = i == j ? 10 : (uint8_t)(20 + i + j);
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_slit(16, m16, sizeof(m16)));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_true(ai->slit_present);
    assert_int_equal(ai->slit[15][3], 38);
    ts_free(&ts);
    free(ai);
}

/* Sparse proximity domains map to dense nodes in ascending order; the SLIT is indexed by domain. */
static void test_srat_sparse_domains_and_slit(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    const uint32_t doms[3] = {7, 3, 7};
    struct tb *srat = make_srat_domains(doms, 3, 3);
    srat->n = get32(srat->b + 4);
    srat_x2apic(srat, 0x300, 3, 1);  /* x2APIC affinity, enabled */
    srat_x2apic(srat, 0x301, 9, 0);  /* disabled: domain 9 must not become a node */
    tb_finish(srat);
    ts_take(&ts, srat);
    uint8_t m[64];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            m[i * 8 + j] = i == j ? 10 : (uint8_t)(10 + 10 * i + j);
    ts_take(&ts, make_slit(8, m, sizeof(m)));
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->numa_nodes, 2);
    assert_int_equal(ai->node_domain[0], 3);
    assert_int_equal(ai->node_domain[1], 7);
    assert_int_equal(acpi_node_of_apic(ai, 0), 1);
    assert_int_equal(acpi_node_of_apic(ai, 1), 0);
    assert_int_equal(acpi_node_of_apic(ai, 2), 1);
    assert_int_equal(acpi_node_of_apic(ai, 0x300), 0);
    assert_int_equal(acpi_node_of_apic(ai, 0x301), -1);
    assert_true(ai->cpu_affinity[3].x2apic);
    assert_int_equal(acpi_node_of_addr(ai, 0x100000000ull), 0);
    assert_int_equal(acpi_node_of_addr(ai, 0x2FFFFFFFFull), 1);
    assert_int_equal(acpi_node_of_addr(ai, 0x300000000ull), -1);
    assert_int_equal(acpi_node_distance(ai, 0, 1), 10 + 30 + 7); /* slit[3][7] */
    assert_int_equal(acpi_node_distance(ai, 1, 0), 10 + 70 + 3); /* slit[7][3] */
    free(ai);
    ts_free(&ts);

    /* SRAT revision 1: the high domain bytes are reserved and ignored; revision 2+ uses them. */
    const uint32_t big[1] = {0x01020305};
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_srat_domains(big, 1, 1));
    ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->cpu_affinity[0].domain, 5);
    ts_free(&ts);
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_srat_domains(big, 1, 2));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->cpu_affinity[0].domain, 0x01020305);
    assert_int_equal(ai->mem[0].domain, 0x01020305);
    assert_int_equal(ai->numa_nodes, 1);
    assert_true(ai->numa_from_srat);
    free(ai);
    ts_free(&ts);
}

static void test_srat_subtable_past_end(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    struct tb *t = tb_new("SRAT", 3);
    srat_begin(t);
    srat_apic(t, 1, 0, 1);
    srat_mem(t, 0, 0, 1 << 20, 1);
    tb_u8(t, 1); tb_u8(t, 40);          /* memory affinity cut short by the table end */
    tb_u32(t, 5);
    tb_finish(t);
    ts_take(&ts, t);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_string_equal(acpi_find_table(ai, "SRAT")->why, "SRAT subtable runs past the end");
    assert_int_equal(ai->mem_count, 1);
    assert_int_equal(ai->numa_nodes, 1);
    assert_int_equal(acpi_node_of_apic(ai, 1), 0);
    ts_free(&ts);

    /* Known types shorter than their layout are skipped, the walk goes on. */
    memset(&ts, 0, sizeof(ts));
    t = tb_new("SRAT", 3);
    srat_begin(t);
    tb_u8(t, 0); tb_u8(t, 8); tb_zero(t, 6);
    srat_x2apic(t, 0x400, 2, 1);
    tb_u8(t, 1); tb_u8(t, 20); tb_zero(t, 18);
    tb_u8(t, 2); tb_u8(t, 12); tb_zero(t, 10);   /* last, so a misread runs off the table */
    tb_finish(t);
    ts_take(&ts, t);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_string_equal(acpi_find_table(ai, "SRAT")->why, "SRAT APIC affinity too short");
    assert_int_equal(ai->cpu_affinity_count, 1);
    assert_int_equal(ai->mem_count, 0);
    assert_int_equal(acpi_node_of_apic(ai, 0x400), 0);
    assert_int_equal(ai->node_domain[0], 2);
    free(ai);
    ts_free(&ts);
}

static void test_srat_too_many_domains(void **state)
{
    (void)state;
    uint32_t doms[20];
    for (int i = 0; i < 20; i++)
        doms[i] = (uint32_t)(100 - i * 5);  /* descending, so truncation has to re-sort */
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_srat_domains(doms, 20, 3));
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->numa_nodes, ACPI_MAX_NODES);
    assert_true(ai->numa_truncated);
    /* The 16 smallest domains are 5..80 (i = 19..4); 85..100 (i = 0..3) got no node. */
    assert_int_equal(ai->node_domain[0], 5);
    assert_int_equal(ai->node_domain[15], 80);
    assert_int_equal(acpi_node_of_apic(ai, 19), 0);
    assert_int_equal(acpi_node_of_apic(ai, 4), 15);
    assert_int_equal(acpi_node_of_apic(ai, 0), -1);
    assert_int_equal(acpi_node_of_addr(ai, 0), -1);   /* range of domain 100 */
    assert_int_equal(ai->mem[0].node, -1);
    assert_int_equal(ai->mem[19].node, 0);
    free(ai);
    ts_free(&ts);
}

static void test_no_srat_single_node_and_addr_edges(void **state)
{
    (void)state;
    struct tset ts;
    small_set(&ts);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_false(ai->srat_present);
    assert_false(ai->numa_from_srat);
    assert_int_equal(ai->numa_nodes, 1);
    assert_int_equal(acpi_node_of_apic(ai, 1), 0);
    assert_int_equal(acpi_node_of_addr(ai, 0x123456789ull), 0);
    assert_int_equal(ai->cpus[1].node, 0);
    assert_int_equal(acpi_node_distance(ai, 0, 0), 10);
    assert_int_equal(acpi_node_distance(ai, 0, 1), -1);
    ts_free(&ts);

    /* A range ending exactly at the top of the address space; lookups must not wrap. */
    memset(&ts, 0, sizeof(ts));
    struct tb *t = tb_new("SRAT", 3);
    srat_begin(t);
    srat_mem(t, 0, 0xFFFFFFFFFFFFF000ull, 0x1000, 1);
    srat_mem(t, 1, 0x1000, UINT64_MAX, 1);   /* wraps: base + length overflows */
    tb_finish(t);
    ts_take(&ts, t);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(acpi_node_of_addr(ai, 0xFFFFFFFFFFFFFFFFull), 0);
    assert_int_equal(acpi_node_of_addr(ai, 0xFFFFFFFFFFFFEFFFull), 1);
    assert_int_equal(acpi_node_of_addr(ai, 0xFFF), -1);
    free(ai);
    ts_free(&ts);
}

static void test_fadt_field_choice(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    struct tb *f = make_fadt(276, 5, ACPI_FADT_RESET_REG_SUP);
    /* X_PM_TMR_BLK in MMIO, different from PM_TMR_BLK: the GAS wins. */
    uint8_t *g = f->b + 208;
    g[0] = ACPI_GAS_MEMORY; g[1] = 32; g[3] = 3; put64(g + 4, 0xFED0F008ull);
    /* Reset register in PCI config space. */
    g = f->b + 116;
    g[0] = ACPI_GAS_PCI_CONFIG; g[1] = 8; put64(g + 4, 0x0000000000010092ull);
    f->b[128] = 0x0E;
    put32(f->b + 40, 0x11111111);                 /* DSDT */
    put64(f->b + 140, 0x2222222222ull);           /* X_DSDT wins */
    fix_checksum(f->b, 276, 9);
    ts_take(&ts, f);
    struct acpi_info *ai = new_ai();
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, &ts, NULL, &bt);    /* no DSDT in the set: the harness zeroes both DSDT fields */
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_OK);
    fm_free(&fm);
    assert_int_equal(ai->fadt.pm_timer.space_id, ACPI_GAS_MEMORY);
    assert_int_equal(ai->fadt.pm_timer.address, 0xFED0F008ull);
    assert_false(ai->fadt.pm_timer_32bit);
    assert_true(ai->fadt.reset_supported);
    assert_int_equal(ai->fadt.reset_reg.space_id, ACPI_GAS_PCI_CONFIG);
    assert_string_equal(acpi_gas_space_name(ai->fadt.reset_reg.space_id), "pci-config");
    assert_int_equal(ai->fadt.reset_value, 0x0E);
    assert_int_equal(ai->fadt.pm1a_cnt.address, 0x604);  /* X_PM1a_CNT_BLK is 0: legacy */
    ts_free(&ts);

    /* X_DSDT preferred over DSDT: lay the FADT out by hand so its DSDT fields stay as set. */
    memset(&ts, 0, sizeof(ts));
    f = make_fadt(276, 5, 0);
    put32(f->b + 40, 0x11111111);
    put64(f->b + 140, 0x2222222222ull);
    fix_checksum(f->b, 276, 9);
    fm_init(&fm);
    uint64_t fp = fm_add(&fm, f->b, 276, 0);
    free(f);
    uint64_t x = add_root(&fm, "XSDT", &fp, 1, 8, 0);
    uint64_t r = add_rsdp(&fm, 2, 0, x);
    assert_int_equal(acpi_parse(ai, r, fm_map, &fm), ACPI_OK);
    assert_int_equal(ai->fadt.dsdt_phys, 0x2222222222ull);
    assert_false(ai->fadt.reset_supported);
    /* The unreachable DSDT is recorded as such. */
    assert_int_equal(acpi_find_table(ai, "????")->phys, 0x2222222222ull);
    assert_int_equal(acpi_find_table(ai, "????")->status, ACPI_TBL_UNMAPPED);
    assert_false(ai->s5_valid);
    assert_int_equal(acpi_s5_pm1_cnt(ai, 0), 0);
    put64(fm_ptr(&fm, fp) + 140, 0);          /* X_DSDT 0: fall back to DSDT */
    fix_checksum(fm_ptr(&fm, fp), 276, 9);
    assert_int_equal(acpi_parse(ai, r, fm_map, &fm), ACPI_OK);
    assert_int_equal(ai->fadt.dsdt_phys, 0x11111111);
    fm_free(&fm);

    /* A FADT shorter than ACPI 1.0's 116 bytes: kept, flagged, missing fields read 0. */
    memset(&ts, 0, sizeof(ts));
    f = make_fadt(80, 1, 0);
    ts_take(&ts, f);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_true(ai->fadt.present);
    assert_int_equal(acpi_find_table(ai, "FACP")->status, ACPI_TBL_MALFORMED);
    assert_true(acpi_find_table(ai, "FACP")->parsed);
    assert_int_equal(ai->fadt.pm_timer.address, 0x608);  /* PM_TMR_BLK at 76..79 is inside */
    assert_int_equal(ai->fadt.flags, 0);                 /* Flags at 112 is not */
    assert_int_equal(ai->fadt.pm1a_cnt.bit_width, 0);    /* nor PM1_CNT_LEN at 89 */
    ts_free(&ts);
    free(ai);
}

/* Parse a DSDT whose body is aml; returns s5_valid and the values. */
static bool s5_of(const uint8_t *aml, size_t n, uint8_t *a, uint8_t *b)
{
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_fadt(276, 6, 0));
    ts_take(&ts, make_dsdt_raw(aml, n));
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    bool ok = ai->s5_valid;
    *a = ai->s5_slp_typ_a;
    *b = ai->s5_slp_typ_b;
    assert_true(acpi_find_table(ai, "DSDT")->parsed);
    free(ai);
    ts_free(&ts);
    return ok;
}

static void test_dsdt_s5_decoding(void **state)
{
    (void)state;
    uint8_t a, b;
    /* ZeroOp/OneOp, root-prefixed name. */
    const uint8_t t1[] = {0x08, '\\', '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x00, 0x01, 0x00, 0x00};
    assert_true(s5_of(t1, sizeof(t1), &a, &b));
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
    /* WordPrefix and DWordPrefix constants. */
    const uint8_t t2[] = {0x08, '_', 'S', '5', '_', 0x12, 0x0A, 0x02, 0x0B, 0x07, 0x00, 0x0C, 0x06, 0, 0, 0};
    assert_true(s5_of(t2, sizeof(t2), &a, &b));
    assert_int_equal(a, 7);
    assert_int_equal(b, 6);
    /* Two-byte PkgLength encoding: lead 0x40 (1 more byte, low nibble 0), next byte 0x02 -> 32. */
    uint8_t t3[6 + 32] = {0x08, '_', 'S', '5', '_', 0x12, 0x40, 0x02, 0x02, 0x0A, 0x03, 0x0A, 0x04};
    assert_true(s5_of(t3, sizeof(t3), &a, &b));
    assert_int_equal(a, 3);
    assert_int_equal(b, 4);
    assert_false(s5_of(t3, sizeof(t3) - 1, &a, &b)); /* one byte short of the claimed package */
    /* One-integer legacy package: SLP_TYPa in bits 7:0, SLP_TYPb in bits 15:8. */
    const uint8_t t4[] = {0x08, '_', 'S', '5', '_', 0x12, 0x05, 0x01, 0x0B, 0x05, 0x07};
    assert_true(s5_of(t4, sizeof(t4), &a, &b));
    assert_int_equal(a, 5);
    assert_int_equal(b, 7);
    /* A first _S5_ that is not a definition (method call / string) is skipped. */
    const uint8_t t5[] = {0x0D, '_', 'S', '5', '_', 0x00, 0x08, '_', 'S', '5', '_', 0x12, 0x04, 0x02, 0x01, 0x01};
    assert_true(s5_of(t5, sizeof(t5), &a, &b));
    assert_int_equal(a, 1);
    assert_int_equal(b, 1);
}

static void test_dsdt_s5_hostile(void **state)
{
    (void)state;
    uint8_t a, b;
    /* Name at the very end, nothing after it. */
    const uint8_t h1[] = {0x08, '_', 'S', '5', '_'};
    assert_false(s5_of(h1, sizeof(h1), &a, &b));
    /* PackageOp, then the table ends. */
    const uint8_t h2[] = {0x08, '_', 'S', '5', '_', 0x12};
    assert_false(s5_of(h2, sizeof(h2), &a, &b));
    /* PkgLength says 3 following bytes but the table ends. */
    const uint8_t h3[] = {0x08, '_', 'S', '5', '_', 0x12, 0xC0, 0x01};
    assert_false(s5_of(h3, sizeof(h3), &a, &b));
    /* PkgLength larger than what is left. */
    const uint8_t h4[] = {0x08, '_', 'S', '5', '_', 0x12, 0x3F, 0x02, 0x0A, 0x05, 0x0A, 0x05};
    assert_false(s5_of(h4, sizeof(h4), &a, &b));
    /* BytePrefix whose byte lies outside the package. */
    const uint8_t h5[] = {0x08, '_', 'S', '5', '_', 0x12, 0x04, 0x02, 0x0A, 0x05, 0x0A, 0x05};
    assert_false(s5_of(h5, sizeof(h5), &a, &b));
    /* QWordPrefix running off the end of the table. */
    const uint8_t h6[] = {0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x02, 0x0E, 1, 2, 3};
    assert_false(s5_of(h6, sizeof(h6), &a, &b));
    /* Values that do not fit the 3-bit SLP_TYP field; Ones; a name reference. */
    const uint8_t h7[] = {0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x02, 0x0A, 0x08, 0x0A, 0x05};
    assert_false(s5_of(h7, sizeof(h7), &a, &b));
    const uint8_t h8[] = {0x08, '_', 'S', '5', '_', 0x12, 0x04, 0x02, 0xFF, 0x00};
    assert_false(s5_of(h8, sizeof(h8), &a, &b));
    const uint8_t h9[] = {0x08, '_', 'S', '5', '_', 0x12, 0x07, 0x02, 'S', 'L', 'P', '5', 0x00};
    assert_false(s5_of(h9, sizeof(h9), &a, &b));
    /* Zero elements; not a package at all. */
    const uint8_t h10[] = {0x08, '_', 'S', '5', '_', 0x12, 0x02, 0x00};
    assert_false(s5_of(h10, sizeof(h10), &a, &b));
    const uint8_t h11[] = {0x08, '_', 'S', '5', '_', 0x0A, 0x05};
    assert_false(s5_of(h11, sizeof(h11), &a, &b));
    /* Name right at the start of the body (no room for a NameOp before it). */
    const uint8_t h12[] = {'_', 'S', '5', '_', 0x12, 0x04, 0x02, 0x01, 0x01};
    assert_false(s5_of(h12, sizeof(h12), &a, &b));

    /* DSDT with a bad checksum is not scanned; a FADT DSDT pointer at another table is refused. */
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_fadt(276, 6, 0));
    ts_take(&ts, make_dsdt_raw(S5_AML, sizeof(S5_AML)));
    ts_get(&ts, "DSDT")->data[40] ^= 1;
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(acpi_find_table(ai, "DSDT")->status, ACPI_TBL_BAD_CHECKSUM);
    assert_false(ai->s5_valid);
    ts_free(&ts);

    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_fadt(276, 6, 0));
    ts_take(&ts, make_hpet());
    struct fakemem fm;
    struct built bt;
    fm_init(&fm);
    build(&fm, &ts, NULL, &bt);
    uint8_t *f = fm_ptr(&fm, bt.phys[0]);
    put64(f + 140, bt.phys[1]);    /* X_DSDT -> HPET */
    fix_checksum(f, 276, 9);
    assert_int_equal(acpi_parse(ai, bt.rsdp, fm_map, &fm), ACPI_OK);
    assert_true(ai->hpet.present);
    const struct acpi_table *last = &ai->tables[ai->table_count - 1];
    assert_int_equal(last->status, ACPI_TBL_BAD_SIG);
    assert_string_equal(last->sig, "HPET");
    assert_false(ai->s5_valid);
    fm_free(&fm);
    ts_free(&ts);

    /* A DSDT listed in the XSDT is not believed (only the FADT's pointer is). */
    memset(&ts, 0, sizeof(ts));
    struct tb *d = make_dsdt_raw(S5_AML, sizeof(S5_AML));
    fm_init(&fm);
    uint64_t dp = fm_add(&fm, d->b, d->n, 0);
    free(d);
    uint64_t x = add_root(&fm, "XSDT", &dp, 1, 8, 0);
    uint64_t r = add_rsdp(&fm, 2, 0, x);
    assert_int_equal(acpi_parse(ai, r, fm_map, &fm), ACPI_OK);
    assert_false(ai->s5_valid);
    assert_false(acpi_find_table(ai, "DSDT")->parsed);
    fm_free(&fm);
    free(ai);
}

static struct tb *make_spcr(uint8_t rev, uint8_t space, uint64_t addr, uint8_t baud_code, uint32_t precise)
{
    struct tb *t = tb_new("SPCR", rev);
    tb_u8(t, 0x12);
    tb_zero(t, 3);
    tb_gas(t, space, 32, 3, addr);
    tb_u8(t, 2);          /* interrupt type: I/O APIC */
    tb_u8(t, 0);
    tb_u32(t, 36);        /* GSI */
    tb_u8(t, baud_code);
    tb_u8(t, 0);
    tb_u8(t, 1);
    tb_u8(t, 2);          /* RTS/CTS */
    tb_u8(t, 0);
    tb_u8(t, 0);
    tb_u16(t, 0xFFFF); tb_u16(t, 0xFFFF);
    tb_zero(t, 3 + 4 + 1);
    tb_u32(t, 1843200);   /* UART clock (rev 3+) */
    if (rev >= 4) {
        tb_u32(t, precise);
        tb_u16(t, 2); tb_u16(t, 88);
        tb_u8(t, '.'); tb_u8(t, 0);
    }
    tb_finish(t);
    return t;
}

static void test_spcr_variants(void **state)
{
    (void)state;
    static const struct { uint8_t code; uint32_t baud; bool ok; } codes[] = {
        {0, 0, true}, {3, 9600, true}, {4, 19200, true}, {6, 57600, true}, {7, 115200, true}, {5, 0, false},
    };
    struct acpi_info *ai = new_ai();
    struct tset ts;
    for (unsigned i = 0; i < ARRAY_SIZE(codes); i++) {
        memset(&ts, 0, sizeof(ts));
        ts_take(&ts, make_spcr(2, ACPI_GAS_IO, 0x2F8, codes[i].code, 0));
        assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
        assert_true(ai->spcr.present);
        assert_int_equal(ai->spcr.baud, codes[i].baud);
        assert_int_equal(acpi_find_table(ai, "SPCR")->status == ACPI_TBL_OK, codes[i].ok);
        assert_int_equal(ai->spcr.uart_clock, 0);  /* revision 2: field reserved */
        ts_free(&ts);
    }
    /* Revision 4, MMIO, precise baud rate overrides the code. */
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_spcr(4, ACPI_GAS_MEMORY, 0xFE030000ull, 7, 3000000));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_true(ai->spcr.enabled);
    assert_int_equal(ai->spcr.interface_type, 0x12);
    assert_string_equal(acpi_spcr_type_name(0x12), "16550-gas");
    assert_int_equal(ai->spcr.base.space_id, ACPI_GAS_MEMORY);
    assert_int_equal(ai->spcr.base.bit_width, 32);
    assert_int_equal(ai->spcr.base.address, 0xFE030000ull);
    assert_int_equal(ai->spcr.baud, 3000000);
    assert_int_equal(ai->spcr.uart_clock, 1843200);
    assert_int_equal(ai->spcr.flow_control, 2);
    assert_int_equal(ai->spcr.gsi, 36);
    ts_free(&ts);
    /* Revision 4 with precise 0 keeps the code; revision 3 never reads offset 80. */
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_spcr(4, ACPI_GAS_IO, 0x3F8, 6, 0));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->spcr.baud, 57600);
    ts_free(&ts);
    /* Revision 2 with trailing bytes: offset 80 is not the precise baud rate there. */
    memset(&ts, 0, sizeof(ts));
    struct tb *t2 = make_spcr(2, ACPI_GAS_IO, 0x3F8, 4, 0);
    t2->n = get32(t2->b + 4);
    tb_u32(t2, 3000000);
    tb_u32(t2, 0);
    tb_finish(t2);
    ts_take(&ts, t2);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->spcr.baud, 19200);
    ts_free(&ts);
    /* Redirection disabled: base address 0. */
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_spcr(2, ACPI_GAS_IO, 0, 7, 0));
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_true(ai->spcr.present);
    assert_false(ai->spcr.enabled);
    ts_free(&ts);
    /* Too short for the revision 1 layout. */
    memset(&ts, 0, sizeof(ts));
    struct tb *t = tb_new("SPCR", 1);
    tb_zero(t, 30);
    tb_finish(t);
    ts_take(&ts, t);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_false(ai->spcr.present);
    assert_int_equal(acpi_find_table(ai, "SPCR")->status, ACPI_TBL_MALFORMED);
    ts_free(&ts);
    /* Short HPET likewise. */
    memset(&ts, 0, sizeof(ts));
    t = tb_new("HPET", 1);
    tb_u32(t, 0x8086A201);
    tb_finish(t);
    ts_take(&ts, t);
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_false(ai->hpet.present);
    assert_int_equal(acpi_find_table(ai, "HPET")->status, ACPI_TBL_MALFORMED);
    ts_free(&ts);
    free(ai);
}

static void test_duplicates_and_table_cap(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    ts_take(&ts, make_madt2());
    struct tb *t = tb_new("APIC", 5);
    madt_begin(t, 0xFEC00000);
    madt_lapic(t, 0, 0x20, 1);
    tb_finish(t);
    ts_take(&ts, t);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_int_equal(ai->cpu_count, 2);
    assert_int_equal(ai->lapic_addr, 0xFEE00000u);
    assert_int_equal(ai->tables[2].status, ACPI_TBL_DUPLICATE);
    assert_false(ai->tables[2].parsed);
    ts_free(&ts);

    /* 200 OEM tables then a MADT: the record array fills, parsing goes on. */
    struct fakemem fm;
    fm_init(&fm);
    uint64_t addrs[201];
    for (int i = 0; i < 200; i++) {
        t = tb_new("OEMX", 1);
        tb_u32(t, (uint32_t)i);
        tb_finish(t);
        addrs[i] = fm_add(&fm, t->b, t->n, 0);
        free(t);
    }
    t = make_madt2();
    addrs[200] = fm_add(&fm, t->b, t->n, 0);
    free(t);
    uint64_t x = add_root(&fm, "XSDT", addrs, 201, 8, 0);
    uint64_t r = add_rsdp(&fm, 2, 0, x);
    assert_int_equal(acpi_parse(ai, r, fm_map, &fm), ACPI_OK);
    assert_int_equal(ai->table_count, ACPI_MAX_TABLES);
    assert_int_equal(ai->tables_dropped, 202 - ACPI_MAX_TABLES);
    assert_int_equal(ai->cpu_count, 2);
    assert_null(acpi_find_table(ai, "APIC"));
    fm_free(&fm);

    /* A root table with more entries than we look at; a ragged length. */
    fm_init(&fm);
    uint64_t *many = calloc(2000, sizeof(uint64_t));
    x = add_root(&fm, "XSDT", many, 2000, 8, 0);
    free(many);
    r = add_rsdp(&fm, 2, 0, x);
    assert_int_equal(acpi_parse(ai, r, fm_map, &fm), ACPI_OK);
    assert_int_equal(ai->root_entries_ignored, 2000 - ACPI_MAX_ROOT_ENTRIES);
    uint8_t *xp = fm_ptr(&fm, x);
    put32(xp + 4, ACPI_HDR_LEN + 8 * 3 + 5);
    fix_checksum(xp, ACPI_HDR_LEN + 8 * 3 + 5, 9);
    assert_int_equal(acpi_parse(ai, r, fm_map, &fm), ACPI_OK);
    assert_int_equal(ai->tables[0].status, ACPI_TBL_MALFORMED);
    assert_int_equal(ai->table_count, 1);
    fm_free(&fm);
    free(ai);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(acpi_gas_space_name(ACPI_GAS_MEMORY), "memory");
    assert_string_equal(acpi_gas_space_name(ACPI_GAS_IO), "io");
    assert_string_equal(acpi_gas_space_name(ACPI_GAS_FFH), "ffh");
    assert_string_equal(acpi_gas_space_name(0x40), "reserved");
    assert_string_equal(acpi_gas_space_name(0xC0), "oem");
    assert_string_equal(acpi_tbl_status_name(ACPI_TBL_OVERRUN), "overrun");
    assert_string_equal(acpi_tbl_status_name(200), "unknown");
    assert_string_equal(acpi_strerror(ACPI_OK), "ok");
    assert_string_equal(acpi_strerror(-100), "unknown error");
    assert_string_equal(acpi_spcr_type_name(0x42), "unknown");
    struct acpi_info *ai = new_ai();
    memset(ai, 0, sizeof(*ai));
    ai->s5_valid = true;
    ai->s5_slp_typ_a = 7;
    assert_int_equal(acpi_s5_pm1_cnt(ai, 0), 0x3C00);
    assert_int_equal(acpi_s5_pm1_cnt(ai, 1), 0x2000);
    assert_int_equal(acpi_s5_pm1_cnt(ai, 2), 0);
    free(ai);
}

/* OEM ids with control characters and quotes are made safe for output. */
static void test_oem_id_sanitised(void **state)
{
    (void)state;
    struct tset ts;
    memset(&ts, 0, sizeof(ts));
    struct tb *t = make_madt2();
    memcpy(t->b + 10, "A\"\n\\  ", 6);
    memcpy(t->b + 16, "X\0\0\0\0\0\0\0", 8);
    fix_checksum(t->b, t->n, 9);
    ts_take(&ts, t);
    struct acpi_info *ai = new_ai();
    assert_int_equal(parse_set(ai, &ts, NULL), ACPI_OK);
    assert_string_equal(acpi_find_table(ai, "APIC")->oem_id, "A???");
    assert_string_equal(acpi_find_table(ai, "APIC")->oem_table_id, "X");
    free(ai);
    ts_free(&ts);
}

/* Random corruption of the synthetic set, checksums fixed so the damage reaches the parsers.
 * Nothing is asserted beyond sanity: the point is ASan/UBSan seeing no bad access. */
static void test_mutation_fuzz(void **state)
{
    (void)state;
    struct tset base;
    load_fixture(&base, "synthetic-2node");
    struct acpi_info *ai = new_ai();
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (int iter = 0; iter < 3000; iter++) {
        struct tset ts;
        memset(&ts, 0, sizeof(ts));
        for (int i = 0; i < base.n; i++)
            ts_add(&ts, base.b[i].data, base.b[i].len);
        int nmut = 1 + (int)(rng % 4);
        for (int k = 0; k < nmut; k++) {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            struct blob *b = &ts.b[rng % (uint64_t)ts.n];
            size_t pos = (size_t)((rng >> 16) % b->len);
            if (pos >= 4 && pos < 8 && (rng & 0x100))
                continue; /* leave lengths mostly alone so the body parsers get exercised */
            b->data[pos] = (uint8_t)(rng >> 40);
        }
        for (int i = 0; i < ts.n; i++) {
            struct blob *b = &ts.b[i];
            if (!(rng & (1ull << (50 + i % 8))))
                fix_checksum(b->data, b->len, 9);
        }
        int rc = parse_set(ai, &ts, NULL);
        assert_int_equal(rc, ACPI_OK);
        assert_true(ai->cpu_count <= ACPI_MAX_CPUS);
        assert_true(ai->mem_count <= ACPI_MAX_MEM_RANGES);
        assert_true(ai->numa_nodes >= 1 && ai->numa_nodes <= ACPI_MAX_NODES);
        assert_true(ai->table_count <= ACPI_MAX_TABLES);
        assert_true(!ai->slit_present || ai->slit_localities <= ACPI_MAX_NODES);
        for (uint32_t i = 0; i < ai->cpu_count; i++)
            assert_true(ai->cpus[i].node >= -1 && ai->cpus[i].node < (int)ai->numa_nodes);
        for (uint32_t i = 0; i < ai->table_count; i++)
            assert_true(ai->tables[i].status == ACPI_TBL_OK || ai->tables[i].why != NULL);
        assert_true(!ai->s5_valid || (ai->s5_slp_typ_a <= 7 && ai->s5_slp_typ_b <= 7));
        ts_free(&ts);
    }
    free(ai);
    ts_free(&base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_synthetic_2node),
        cmocka_unit_test(test_fixtures_all),
        cmocka_unit_test(test_expect_checker_catches_mismatches),
        cmocka_unit_test(test_rsdp_bad_checksum),
        cmocka_unit_test(test_rsdp_unmapped_and_args),
        cmocka_unit_test(test_rsdp_bad_xchecksum_uses_rsdt),
        cmocka_unit_test(test_rsdt_only_acpi1),
        cmocka_unit_test(test_rsdp_rev0_ignores_extension),
        cmocka_unit_test(test_xsdt_bad_falls_back_to_rsdt),
        cmocka_unit_test(test_bad_table_checksum_skipped),
        cmocka_unit_test(test_madt_truncated),
        cmocka_unit_test(test_madt_zero_length_subtable),
        cmocka_unit_test(test_madt_subtable_past_end_and_short_entries),
        cmocka_unit_test(test_madt_override_dedupe_invalid),
        cmocka_unit_test(test_madt_too_many_cpus),
        cmocka_unit_test(test_xsdt_entry_unmapped),
        cmocka_unit_test(test_absurd_and_overrunning_lengths),
        cmocka_unit_test(test_slit_hostile),
        cmocka_unit_test(test_srat_sparse_domains_and_slit),
        cmocka_unit_test(test_srat_subtable_past_end),
        cmocka_unit_test(test_srat_too_many_domains),
        cmocka_unit_test(test_no_srat_single_node_and_addr_edges),
        cmocka_unit_test(test_fadt_field_choice),
        cmocka_unit_test(test_dsdt_s5_decoding),
        cmocka_unit_test(test_dsdt_s5_hostile),
        cmocka_unit_test(test_spcr_variants),
        cmocka_unit_test(test_duplicates_and_table_cap),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_oem_id_sanitised),
        cmocka_unit_test(test_mutation_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
