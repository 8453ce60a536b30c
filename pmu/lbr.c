/* lbr.c - last branch record decoding. */
#include "pmu/lbr.h"
#include "pmu/msr_pmu.h"

/* Drop the top `flag_bits` bits and sign-extend from what is left (Linux lbr.c does the same), so
 * addresses stay canonical whatever the linear-address width. */
static uint64_t strip_sext(uint64_t v, unsigned flag_bits)
{
    if (flag_bits == 0)
        return v;
    return (uint64_t)(((int64_t)(v << flag_bits)) >> flag_bits);
}

/* Sign-extend from bit 47 after masking to 48 bits (TO in the TIME format carries cycles above). */
static uint64_t sext48(uint64_t v)
{
    return (uint64_t)(((int64_t)(v << 16)) >> 16);
}

int lbr_decode(unsigned format, uint64_t from, uint64_t to, uint64_t info, struct lbr_entry *out)
{
    if (!out || format > LBR_FMT_MAX)
        return -1;
    memset(out, 0, sizeof(*out));
    switch (format) {
    case LBR_FMT_32:
        out->from = from & 0xffffffffULL;
        out->to = from >> 32;
        break;
    case LBR_FMT_LIP:
    case LBR_FMT_EIP:
        out->from = from;
        out->to = to;
        break;
    case LBR_FMT_EIP_FLAGS:
        /* SDM: FROM[63] set = mispredicted. ([NHM] Table 20 words it the other way round; Linux and
         * the SDM agree on "set = mispredicted", see docs/pmu.md.) */
        out->has_mispred = true;
        out->mispred = (from & LBR_FROM_MISPRED) != 0;
        out->from = strip_sext(from, 1);
        out->to = to;
        break;
    case LBR_FMT_EIP_FLAGS2:
        out->has_mispred = out->has_tsx = true;
        out->mispred = (from & LBR_FROM_MISPRED) != 0;
        out->in_tx = (from & LBR_FROM_IN_TSX) != 0;
        out->tsx_abort = (from & LBR_FROM_TSX_ABORT) != 0;
        out->from = strip_sext(from, 3);
        out->to = to;
        break;
    case LBR_FMT_INFO:
    case LBR_FMT_INFO2:
        out->has_mispred = out->has_tsx = out->has_cycles = true;
        out->mispred = (info & LBR_INFO_MISPRED) != 0;
        out->in_tx = (info & LBR_INFO_IN_TX) != 0;
        out->tsx_abort = (info & LBR_INFO_ABORT) != 0;
        out->cycles = (uint16_t)(info & LBR_INFO_CYCLES_MASK);
        out->from = from;
        out->to = to;
        break;
    case LBR_FMT_TIME:
        out->has_mispred = out->has_cycles = true;
        out->mispred = (from & LBR_FROM_MISPRED) != 0;
        out->from = strip_sext(from, 1);
        out->cycles = (uint16_t)(to >> 48);
        out->to = sext48(to);
        break;
    }
    return 0;
}

unsigned lbr_order(uint64_t tos, unsigned depth, uint8_t *idx)
{
    if (!idx || depth == 0 || depth > 64 || !IS_POW2(depth))
        return 0;
    /* [NHM] Table 22: TOS indexes the most recent record; hardware fills upwards and wraps, so the
     * previous record is TOS-1. */
    unsigned t = (unsigned)(tos & (depth - 1));
    for (unsigned i = 0; i < depth; i++)
        idx[i] = (uint8_t)((t + depth - i) & (depth - 1));
    return depth;
}

int lbr_decode_stack(unsigned format, unsigned depth, uint64_t tos, const uint64_t *from, const uint64_t *to,
                     const uint64_t *info, struct lbr_entry *out)
{
    uint8_t idx[64];
    unsigned n = lbr_order(tos, depth, idx);

    if (n == 0 || !from || !out || (!to && format != LBR_FMT_32))
        return -1;
    for (unsigned i = 0; i < n; i++) {
        unsigned k = idx[i];
        if (lbr_decode(format, from[k], to ? to[k] : 0, info ? info[k] : 0, &out[i]))
            return -1;
    }
    return (int)n;
}

uint64_t lbr_select_value(uint32_t capture)
{
    return LBR_SELECT_MASK & ~(uint64_t)capture;
}
