/* lbr.h - decode last-branch-record MSR values per LBR format and walk the stack from TOS. */
#ifndef PMB_PMU_LBR_H
#define PMB_PMU_LBR_H

#include "kernel/klib.h"

/* IA32_PERF_CAPABILITIES[5:0] ([NHM] Table 3 lists 0-2; later SDM editions and Linux
 * arch/x86/events/intel/lbr.c name the rest). */
enum lbr_format {
    LBR_FMT_32 = 0,         /* one MSR per record: from in 31:0, to in 63:32 */
    LBR_FMT_LIP = 1,        /* 64-bit linear addresses */
    LBR_FMT_EIP = 2,        /* 64-bit effective addresses */
    LBR_FMT_EIP_FLAGS = 3,  /* + FROM[63] mispredicted (Nehalem, Westmere, Sandy Bridge) */
    LBR_FMT_EIP_FLAGS2 = 4, /* + FROM[62] in TSX, FROM[61] TSX abort (Haswell) */
    LBR_FMT_INFO = 5,       /* flags and cycle count in MSR_LBR_INFO_x (Skylake) */
    LBR_FMT_TIME = 6,       /* FROM[63] mispredicted, TO[63:48] elapsed cycles (Goldmont) */
    LBR_FMT_INFO2 = 7,      /* like INFO */
    LBR_FMT_MAX = 7,
};

/* MSR_LBR_INFO_x (formats 5 and 7) */
#define LBR_INFO_MISPRED (1ULL << 63)
#define LBR_INFO_IN_TX (1ULL << 62)
#define LBR_INFO_ABORT (1ULL << 61)
#define LBR_INFO_CYCLES_MASK 0xffffULL

struct lbr_entry {
    uint64_t from, to;      /* canonical (sign-extended) addresses */
    bool has_mispred;       /* the format reports prediction */
    bool mispred;           /* the branch was mispredicted */
    bool has_tsx;
    bool in_tx, tsx_abort;
    bool has_cycles;
    uint16_t cycles;
};

/* Decode one record. from/to are the FROM_IP/TO_IP MSR values (format 0: the single MSR in from,
 * to ignored); info is MSR_LBR_INFO_x for formats 5/7 (ignored otherwise). -1 on unknown format. */
int lbr_decode(unsigned format, uint64_t from, uint64_t to, uint64_t info, struct lbr_entry *out);

/* Indices of the stack in reading order, most recent first: TOS, TOS-1, ..., wrapping at depth.
 * tos is the raw MSR_LASTBRANCH_TOS value (masked to the stack size). Returns depth, or 0 if depth
 * is 0, larger than 64 or not a power of two. */
unsigned lbr_order(uint64_t tos, unsigned depth, uint8_t *idx);

/* Decode a whole stack read as arrays indexed by MSR number (from[i] = LASTBRANCH_i_FROM_IP, ...;
 * info may be NULL), most recent first into out[0..depth). Returns the count, or -1. */
int lbr_decode_stack(unsigned format, unsigned depth, uint64_t tos, const uint64_t *from, const uint64_t *to,
                     const uint64_t *info, struct lbr_entry *out);

/* What to capture, one flag per MSR_LBR_SELECT class; lbr_select_value() turns it into the
 * register's "suppress" bits ([NHM] Table 19: a SET bit means do NOT capture). */
#define LBR_CAPTURE_RING0 (1u << 0)
#define LBR_CAPTURE_RING123 (1u << 1)
#define LBR_CAPTURE_JCC (1u << 2)
#define LBR_CAPTURE_NEAR_REL_CALL (1u << 3)
#define LBR_CAPTURE_NEAR_IND_CALL (1u << 4)
#define LBR_CAPTURE_NEAR_RET (1u << 5)
#define LBR_CAPTURE_NEAR_IND_JMP (1u << 6)
#define LBR_CAPTURE_NEAR_REL_JMP (1u << 7)
#define LBR_CAPTURE_FAR_BRANCH (1u << 8)
#define LBR_CAPTURE_ALL 0x1ffu
uint64_t lbr_select_value(uint32_t capture);

#endif
