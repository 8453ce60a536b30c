/* chase_buf.c - allocate, build and verify a random pointer-chase cycle for PMU measurements. */
#include "pmu/chase_buf.h"
#include "measure/chain.h"
#include "kernel/kernel.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"

int pmu_chase_alloc(struct pmu_chase *c, size_t bytes, uint64_t seed, int node, const char *why)
{
    struct chain_params p;
    size_t scratch;
    uint64_t phys;

    memset(c, 0, sizeof(*c));
    memset(&p, 0, sizeof(p));
    p.bytes = bytes;
    p.line = CHAIN_DEFAULT_LINE;
    p.mode = CHAIN_RANDOM;
    p.seed = seed;
    scratch = chain_scratch_bytes(&p);
    if (bytes == 0 || (bytes & 4095) || scratch == SIZE_MAX)
        return -1;
    if (node == PMU_CHASE_LOCAL_NODE) {
        const struct smp_cpu *me = smp_cpu(smp_current_index());
        node = me ? me->node : -1;
    }
    uint64_t total = ALIGN_UP((uint64_t)bytes + scratch, 4096);
    if (!K.pmm || pmm_alloc_tagged(K.pmm, total, 4096, node, why, &phys) != PMM_OK)
        return -1;
    c->node = node;
    c->buf = (void *)(uintptr_t)phys;
    c->phys = phys;
    c->alloc_bytes = total;
    c->bytes = bytes;
    c->start = chain_build(c->buf, &p, (uint8_t *)c->buf + bytes, scratch, &c->n_elems);
    if (!c->start || !chain_verify(c->start, c->n_elems, c->buf, bytes)) {
        pmu_chase_free(c);
        return -1;
    }
    return 0;
}

void pmu_chase_free(struct pmu_chase *c)
{
    if (c->alloc_bytes && K.pmm)
        pmm_free(K.pmm, c->phys, c->alloc_bytes);
    memset(c, 0, sizeof(*c));
}
