/* usable.c - the usable-counter mask: what the self-test disabled, why, and which events that leaves without a counter. */
#include "pmu/usable.h"
#include "kernel/fmt.h"
#include "pmu/event.h"

void pmu_usable_init(struct pmu_usable *u, uint64_t present, enum pmu_usable_naming naming)
{
    memset(u, 0, sizeof(*u));
    u->present = present;
    u->usable = present;
    u->naming = (uint8_t)naming;
}

/* "<prefix><decimal>" with nothing after the number: the number, else -1. */
static int number_after(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n) != 0 || !kl_isdigit(s[n]))
        return -1;
    int v = 0;
    for (const char *p = s + n; *p; p++) {
        if (!kl_isdigit(*p) || v > 100)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

int pmu_usable_bit_of(const char *counter)
{
    int v;
    if (!counter)
        return -1;
    /* The names pmu_slot_counter_name gives core counters (pmu/counting.c). */
    if ((v = number_after(counter, "pmc")) >= 0 || (v = number_after(counter, "ctr")) >= 0 ||
        (v = number_after(counter, "p4_ctr")) >= 0)
        return v < PMU_USABLE_FIXED_SHIFT ? v : -1;
    if ((v = number_after(counter, "fixed")) >= 0)
        return v < 32 ? PMU_USABLE_FIXED_SHIFT + v : -1;
    return -1;
}

int pmu_usable_fail(struct pmu_usable *u, unsigned bit, const char *check, const char *reason)
{
    if (bit >= 64 || !(u->present & (1ULL << bit)))
        return -1;
    if (!(u->usable & (1ULL << bit)))
        return 0;
    u->usable &= ~(1ULL << bit);
    fmt_snprintf(u->loss[bit].check, sizeof(u->loss[bit].check), "%s", check ? check : "?");
    fmt_snprintf(u->loss[bit].reason, sizeof(u->loss[bit].reason), "%s", reason ? reason : "failed");
    return 1;
}

void pmu_usable_counter_name(const struct pmu_usable *u, unsigned bit, char *buf, size_t len)
{
    if (bit >= PMU_USABLE_FIXED_SHIFT)
        fmt_snprintf(buf, len, "FIXED_CTR%u", bit - PMU_USABLE_FIXED_SHIFT);
    else
        fmt_snprintf(buf, len, u->naming == PMU_USABLE_NAMES_AMD  ? "CTR%u"
                               : u->naming == PMU_USABLE_NAMES_P4 ? "P4_CTR%u"
                                                                  : "PMC%u",
                     bit);
}

/* Append to buf at *at (kept NUL-terminated, truncating). */
static void append(char *buf, size_t len, size_t *at, const char *s)
{
    while (*s && *at + 1 < len)
        buf[(*at)++] = *s++;
    if (len)
        buf[*at < len ? *at : len - 1] = 0;
}

size_t pmu_usable_describe(const struct pmu_usable *u, uint64_t mask, char *buf, size_t len)
{
    size_t at = 0;
    bool first = true;
    char name[16], one[sizeof(u->loss[0].check) + sizeof(u->loss[0].reason) + 24];
    if (!len)
        return 0;
    buf[0] = 0;
    /* Ascending bits: general counters first, then fixed (bits 32+), the order the manuals list them. */
    for (unsigned b = 0; b < 64; b++) {
        if (!(pmu_usable_gone(u, mask) & (1ULL << b)))
            continue;
        pmu_usable_counter_name(u, b, name, sizeof(name));
        fmt_snprintf(one, sizeof(one), "%s%s (%s: %s)", first ? "" : ", ", name, u->loss[b].check, u->loss[b].reason);
        append(buf, len, &at, one);
        first = false;
    }
    return at;
}

void pmu_usable_gone_reason(const struct pmu_usable *u, uint64_t mask, const char *what, char *buf, size_t len)
{
    char name[16], one[sizeof(u->loss[0].check) + 24];
    size_t at;
    if (!len)
        return;
    fmt_snprintf(buf, len, "self-test disabled every %s: ", what ? what : "counter");
    at = strlen(buf);
    bool first = true;
    for (unsigned b = 0; b < 64; b++) {
        if (!(pmu_usable_gone(u, mask) & (1ULL << b)))
            continue;
        pmu_usable_counter_name(u, b, name, sizeof(name));
        fmt_snprintf(one, sizeof(one), "%s%s (%s)", first ? "" : ", ", name, u->loss[b].check);
        append(buf, len, &at, one);
        first = false;
    }
}

int pmu_usable_refuse(const struct pmu_usable *u, const char *event, uint64_t cntmask, char *err, size_t len)
{
    uint64_t mine = cntmask & u->present;
    if (!mine || (mine & u->usable))
        return 0;
    if (!err || !len)
        return -1;
    size_t at = 0;
    char name[16];
    bool first = true;
    fmt_snprintf(err, len, "%s: can count only on ", event ? event : "event");
    at = strlen(err);
    for (unsigned b = 0; b < 64; b++) {
        if (!(mine & (1ULL << b)))
            continue;
        pmu_usable_counter_name(u, b, name, sizeof(name));
        if (!first)
            append(err, len, &at, ", ");
        append(err, len, &at, name);
        first = false;
    }
    append(err, len, &at, ", disabled by the self-test: ");
    if (at + 1 < len)
        at += pmu_usable_describe(u, mine, err + at, len - at);
    return -1;
}

int pmu_usable_restrict(const struct pmu_usable *u, const struct sched_event *ev, const char *const *names, unsigned n,
                        uint64_t avail[SCHED_NUM_CLASSES], char *err, size_t len)
{
    avail[PMU_CLS_CORE] &= u->usable;
    avail[PMU_CLS_NETBURST] &= u->usable;
    for (unsigned i = 0; i < n; i++) {
        if (ev[i].cls != PMU_CLS_CORE && ev[i].cls != PMU_CLS_NETBURST)
            continue;
        uint64_t m = 0;
        for (unsigned a = 0; a < ev[i].nalt && a < SCHED_MAX_ALTS; a++)
            m |= ev[i].alt[a].cntmask;
        if (!(m & avail[ev[i].cls]) && pmu_usable_refuse(u, names ? names[i] : NULL, m, err, len) != 0)
            return -1;
    }
    return 0;
}
