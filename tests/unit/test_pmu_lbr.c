/* test_pmu_lbr.c - LBR record decoding per format, TOS walk order and LBR_SELECT values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "pmu/lbr.h"
#include "pmu/msr_pmu.h"

/* Format 3 ([NHM] Table 20): FROM 47:0 address, 62:48 sign extension of bit 47, 63 MISPRED. */
static void test_format3_mispredict(void **state)
{
    (void)state;
    struct lbr_entry e;
    /* user-space branch, mispredicted: bit 63 set, bits 62:48 = 0 (bit 47 is 0) */
    assert_int_equal(lbr_decode(LBR_FMT_EIP_FLAGS, 0x80007fff12345678ULL, 0x00007fff12340000ULL, 0, &e), 0);
    assert_true(e.has_mispred);
    assert_true(e.mispred);
    assert_int_equal(e.from, 0x00007fff12345678ULL);
    assert_int_equal(e.to, 0x00007fff12340000ULL);
    /* kernel branch, predicted: bit 63 clear although a canonical kernel address has it set */
    assert_int_equal(lbr_decode(LBR_FMT_EIP_FLAGS, 0x7fff800000001234ULL, 0xffff800000002000ULL, 0, &e), 0);
    assert_false(e.mispred);
    assert_int_equal(e.from, 0xffff800000001234ULL);
    assert_int_equal(e.to, 0xffff800000002000ULL);
    /* kernel branch, mispredicted */
    assert_int_equal(lbr_decode(LBR_FMT_EIP_FLAGS, 0xffff800000001234ULL, 0, 0, &e), 0);
    assert_true(e.mispred);
    assert_int_equal(e.from, 0xffff800000001234ULL);
    assert_false(e.has_tsx);
    assert_false(e.has_cycles);
}

static void test_other_formats(void **state)
{
    (void)state;
    struct lbr_entry e;
    /* format 0: one MSR, from in 31:0, to in 63:32 */
    assert_int_equal(lbr_decode(LBR_FMT_32, 0x0040200000401000ULL, 0xdead, 0, &e), 0);
    assert_int_equal(e.from, 0x00401000);
    assert_int_equal(e.to, 0x00402000);
    assert_false(e.has_mispred);
    /* formats 1 and 2: plain 64-bit addresses, bit 63 is address, not a flag */
    assert_int_equal(lbr_decode(LBR_FMT_LIP, 0xffff800000001234ULL, 0x1000, 0, &e), 0);
    assert_int_equal(e.from, 0xffff800000001234ULL);
    assert_false(e.has_mispred);
    assert_int_equal(lbr_decode(LBR_FMT_EIP, 0x401000, 0x402000, 0, &e), 0);
    assert_int_equal(e.to, 0x402000);
    /* format 4: 63 mispred, 62 in TSX, 61 TSX abort */
    assert_int_equal(lbr_decode(LBR_FMT_EIP_FLAGS2, 0xa000000000401000ULL, 0x402000, 0, &e), 0);
    assert_true(e.mispred && !e.in_tx && e.tsx_abort);
    assert_int_equal(e.from, 0x401000);
    assert_int_equal(lbr_decode(LBR_FMT_EIP_FLAGS2, 0x5fff800000001000ULL, 0, 0, &e), 0);
    assert_true(!e.mispred && e.in_tx && !e.tsx_abort);
    assert_int_equal(e.from, 0xffff800000001000ULL);
    /* format 5: flags and cycles come from MSR_LBR_INFO_x */
    assert_int_equal(lbr_decode(LBR_FMT_INFO, 0xffff800000001000ULL, 0x402000, (1ULL << 63) | 42, &e), 0);
    assert_true(e.mispred && e.has_cycles);
    assert_int_equal(e.cycles, 42);
    assert_int_equal(e.from, 0xffff800000001000ULL);
    /* format 6: TO[63:48] holds elapsed cycles */
    assert_int_equal(lbr_decode(LBR_FMT_TIME, 0x8000000000401000ULL, 0x0007800000402000ULL, 0, &e), 0);
    assert_true(e.mispred);
    assert_int_equal(e.cycles, 7);
    assert_int_equal(e.to, 0xffff800000402000ULL);
    /* unknown format */
    assert_int_equal(lbr_decode(8, 0, 0, 0, &e), -1);
    assert_int_equal(lbr_decode(63, 0, 0, 0, &e), -1);
    assert_int_equal(lbr_decode(LBR_FMT_EIP, 0, 0, 0, NULL), -1);
}

/* [NHM] Table 22: TOS holds the most recent record; reading most recent first walks downwards. */
static void test_tos_order(void **state)
{
    (void)state;
    uint8_t idx[64];
    assert_int_equal(lbr_order(2, 16, idx), 16);
    static const uint8_t want[16] = {2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3};
    assert_memory_equal(idx, want, 16);
    assert_int_equal(lbr_order(0x12, 16, idx), 16); /* bits above 3:0 ignored */
    assert_memory_equal(idx, want, 16);
    assert_int_equal(lbr_order(15, 16, idx), 16);
    assert_int_equal(idx[0], 15);
    assert_int_equal(idx[15], 0);
    assert_int_equal(lbr_order(3, 4, idx), 4);
    assert_int_equal(idx[3], 0);
    assert_int_equal(lbr_order(0, 0, idx), 0);
    assert_int_equal(lbr_order(0, 12, idx), 0);
    assert_int_equal(lbr_order(0, 128, idx), 0);
    assert_int_equal(lbr_order(0, 16, NULL), 0);
}

static void test_stack_wrap(void **state)
{
    (void)state;
    uint64_t from[16], to[16], info[16];
    struct lbr_entry out[16];
    for (unsigned i = 0; i < 16; i++) {
        from[i] = (0x401000 + 0x10 * i) | (i == 15 ? LBR_FROM_MISPRED : 0);
        to[i] = 0x500000 + 0x10 * i;
        info[i] = i;
    }
    /* TOS = 1: most recent is pair 1, then pair 0, then wrap to pair 15 */
    assert_int_equal(lbr_decode_stack(LBR_FMT_EIP_FLAGS, 16, 1, from, to, NULL, out), 16);
    assert_int_equal(out[0].from, 0x401010);
    assert_int_equal(out[1].from, 0x401000);
    assert_int_equal(out[2].from, 0x4010f0);
    assert_true(out[2].mispred);
    assert_false(out[0].mispred);
    assert_int_equal(out[15].to, 0x500020);
    assert_int_equal(lbr_decode_stack(LBR_FMT_INFO, 16, 5, from, to, info, out), 16);
    assert_int_equal(out[0].cycles, 5);
    assert_int_equal(out[1].cycles, 4);
    /* format 0 needs no TO array */
    assert_int_equal(lbr_decode_stack(LBR_FMT_32, 4, 0, from, NULL, NULL, out), 4);
    assert_int_equal(lbr_decode_stack(LBR_FMT_EIP, 16, 0, from, NULL, NULL, out), -1);
    assert_int_equal(lbr_decode_stack(LBR_FMT_EIP, 12, 0, from, to, NULL, out), -1);
    assert_int_equal(lbr_decode_stack(9, 16, 0, from, to, NULL, out), -1);
}

/* [NHM] Table 19 / [PAG] Table 7: a set bit suppresses. The guide's call-chain example sets every
 * bit except 1 (capture ring 3), 3 (near relative calls), 6 and 7 (near unconditional jumps). */
static void test_lbr_select(void **state)
{
    (void)state;
    assert_int_equal(lbr_select_value(LBR_CAPTURE_ALL), 0);
    assert_int_equal(lbr_select_value(0), 0x1ff);
    assert_int_equal(lbr_select_value(LBR_CAPTURE_RING123 | LBR_CAPTURE_NEAR_REL_CALL | LBR_CAPTURE_NEAR_IND_JMP |
                                      LBR_CAPTURE_NEAR_REL_JMP),
                     0x135);
    assert_int_equal(lbr_select_value(0xffffffff), 0);
    assert_int_equal(LBR_SELECT_CPL_EQ_0 | LBR_SELECT_FAR_BRANCH, 0x101);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format3_mispredict), cmocka_unit_test(test_other_formats),
        cmocka_unit_test(test_tos_order),          cmocka_unit_test(test_stack_wrap),
        cmocka_unit_test(test_lbr_select),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
