/* cache_sizes.c - cache sizes from CPUID (cache_sizes.h). */
#include "bench/cache_sizes.h"

void cache_sizes_from_cpuid(const struct cpu_info *ci, struct cache_sizes *c)
{
    *c = (struct cache_sizes){.line = 64};
    if (!ci)
        return;
    for (uint32_t i = 0; i < ci->n_caches && i < CPU_MAX_CACHES; i++) {
        const struct cpu_cache *k = &ci->caches[i];
        if (k->type != CPU_CACHE_DATA && k->type != CPU_CACHE_UNIFIED)
            continue;
        uint64_t *slot = k->level == 1 ? &c->l1 : k->level == 2 ? &c->l2 : k->level == 3 ? &c->l3 : NULL;
        if (slot && k->bytes > *slot)
            *slot = k->bytes;
        if (k->level == 3)
            c->l3_inclusive = k->inclusive;
        if (k->line >= 16 && k->line <= 256 && IS_POW2(k->line) && k->level == 1)
            c->line = k->line;
    }
    c->llc = c->l3 ? c->l3 : c->l2 ? c->l2 : c->l1;
}

void cache_sizes_or_nehalem(const struct cpu_info *ci, struct cache_sizes *c)
{
    cache_sizes_from_cpuid(ci, c);
    if (!c->l1)
        c->l1 = KiB(32);
    if (!c->l2)
        c->l2 = KiB(256);
    if (!c->llc)
        c->llc = MiB(8);
    c->llc = MAX(c->llc, c->l2);
}
