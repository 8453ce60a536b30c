/* test_rand.c - splitmix64 / xoshiro256** reference outputs, unbiased bounds, LFSR maximal period. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "measure/rand.h"

/* Reference outputs of the published C code (prng.di.unimi.it): splitmix64 from state 0, and
 * xoshiro256** from state {1, 2, 3, 4} (the first is rotl(2 * 5, 7) * 9 = 11520 by hand). */
static void test_splitmix64_reference(void **state)
{
    (void)state;
    uint64_t s = 0;
    assert_true(splitmix64_next(&s) == 0xe220a8397b1dcdafull);
    assert_true(splitmix64_next(&s) == 0x6e789e6aa1b965f4ull);
    assert_true(splitmix64_next(&s) == 0x06c45d188009454full);
    assert_true(splitmix64_next(&s) == 0xf88bb8a8724c81ecull);
}

static void test_xoshiro_reference(void **state)
{
    (void)state;
    struct rand r = {{1, 2, 3, 4}};
    assert_true(rand_next(&r) == 11520);
    assert_true(rand_next(&r) == 0);
    assert_true(rand_next(&r) == 1509978240ull);
    assert_true(rand_next(&r) == 1215971899390074240ull);
}

static void test_seed_reproducible(void **state)
{
    (void)state;
    struct rand a, b, c;
    rand_seed(&a, 12345);
    rand_seed(&b, 12345);
    rand_seed(&c, 12346);
    /* seed 12345: state = four splitmix64 outputs, then xoshiro256** (reference computed independently) */
    uint64_t first = rand_next(&a);
    assert_true(first == 0xbe6a36374160d49bull);
    assert_true(rand_next(&b) == first);
    assert_true(rand_next(&c) != first);
    for (int i = 0; i < 1000; i++)
        assert_true(rand_next(&a) == rand_next(&b));

    struct rand z;
    rand_seed(&z, 0);
    assert_true((z.s[0] | z.s[1] | z.s[2] | z.s[3]) != 0);
    assert_true(rand_next(&z) != rand_next(&z));
}

static void test_below_bounds(void **state)
{
    (void)state;
    static const uint64_t ns[] = {1, 2, 3, 7, 10, 1000, (1ull << 32) + 1, (1ull << 63) + 1, UINT64_MAX};
    struct rand r;
    rand_seed(&r, 7);
    assert_true(rand_below(&r, 0) == 0);
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++)
        for (int i = 0; i < 2000; i++)
            assert_true(rand_below(&r, ns[k]) < ns[k]);
    for (int i = 0; i < 100; i++)
        assert_true(rand_below(&r, 1) == 0);
}

/* n = 3 * 2^62: plain "x % n" would give values below 2^62 half the time instead of a third. */
static void test_below_unbiased(void **state)
{
    (void)state;
    struct rand r;
    rand_seed(&r, 99);
    const uint64_t n = 3ull << 62;
    int low = 0, trials = 30000;
    for (int i = 0; i < trials; i++)
        low += rand_below(&r, n) < (1ull << 62);
    assert_in_range(low, 9300, 10700); /* 1/3 +- ~9 sigma */

    /* Chi-square over 10 buckets: df 9, 40 is far beyond p = 0.0001. */
    int counts[10] = {0};
    for (int i = 0; i < 100000; i++)
        counts[rand_below(&r, 10)]++;
    double chi = 0;
    for (int i = 0; i < 10; i++)
        chi += (counts[i] - 10000.0) * (counts[i] - 10000.0) / 10000.0;
    assert_true(chi < 40);
}

static void test_double_range(void **state)
{
    (void)state;
    struct rand r;
    rand_seed(&r, 3);
    double lo = 1, hi = 0, sum = 0;
    for (int i = 0; i < 100000; i++) {
        double d = rand_double(&r);
        assert_true(d >= 0 && d < 1);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
        sum += d;
    }
    assert_true(lo < 0.001 && hi > 0.999);
    assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
}

/* ---- LFSR -------------------------------------------------------------------------------------- */

/* The step is linear over GF(2): a 32x32 bit matrix, column i = step(e_i). */
struct mat {
    uint32_t col[32];
};

static uint32_t mat_apply(const struct mat *m, uint32_t v)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        if (v & (1u << i))
            r ^= m->col[i];
    return r;
}

static struct mat mat_mul(const struct mat *a, const struct mat *b)
{
    struct mat r;
    for (int j = 0; j < 32; j++)
        r.col[j] = mat_apply(a, b->col[j]);
    return r;
}

static struct mat mat_pow(struct mat m, uint64_t e)
{
    struct mat r;
    for (int i = 0; i < 32; i++)
        r.col[i] = 1u << i;
    while (e) {
        if (e & 1)
            r = mat_mul(&r, &m);
        m = mat_mul(&m, &m);
        e >>= 1;
    }
    return r;
}

static bool mat_is_identity(const struct mat *m)
{
    for (int i = 0; i < 32; i++)
        if (m->col[i] != 1u << i)
            return false;
    return true;
}

/* Maximal length: M^(2^32-1) = I and M^((2^32-1)/q) != I for every prime q | 2^32-1 = 3*5*17*257*65537,
 * so every non-zero state lies on one cycle of length 2^32 - 1. The matrix is built from the real step. */
static void test_lfsr_maximal_period(void **state)
{
    (void)state;
    struct mat m;
    for (int i = 0; i < 32; i++) {
        struct lfsr32 l = {1u << i};
        lfsr32_step(&l);
        m.col[i] = l.state;
    }
    const uint64_t period = 0xFFFFFFFFull;
    struct mat full = mat_pow(m, period);
    assert_true(mat_is_identity(&full));
    static const uint64_t primes[] = {3, 5, 17, 257, 65537};
    for (size_t k = 0; k < 5; k++) {
        struct mat part = mat_pow(m, period / primes[k]);
        assert_false(mat_is_identity(&part));
    }
    /* The matrix model agrees with stepping for random states and many steps. */
    struct rand r;
    rand_seed(&r, 5);
    for (int t = 0; t < 50; t++) {
        uint32_t s = (uint32_t)rand_next(&r) | 1u;
        unsigned steps = (unsigned)rand_below(&r, 200);
        struct lfsr32 l = {s};
        for (unsigned i = 0; i < steps; i++)
            lfsr32_step(&l);
        struct mat ms = mat_pow(m, steps);
        assert_true(mat_apply(&ms, s) == l.state);
    }
}

static void test_lfsr_sequence(void **state)
{
    (void)state;
    /* Right-shifting Galois form with toggle mask 0x80200003, from state 0xACE1 (computed by hand-rolled
     * Python from the same definition). */
    struct lfsr32 l = {0xACE1};
    static const uint32_t bits[8] = {1, 1, 0, 1, 1, 1, 1, 1};
    for (int i = 0; i < 8; i++)
        assert_int_equal(lfsr32_step(&l), bits[i]);
    assert_true(l.state == 0xfb3ec0aeu);

    struct lfsr32 a = {0xACE1};
    assert_int_equal(lfsr32_bits(&a, 8), 0xFB); /* the same bits, first in bit 0 */
    assert_true(a.state == l.state);
    struct lfsr32 b = {0xACE1}, c = {0xACE1};
    uint32_t w = lfsr32_bits(&b, 40); /* clamped to 32 */
    assert_true(w == lfsr32_bits(&c, 32));
    assert_true(b.state == c.state);
}

static void test_lfsr_seed(void **state)
{
    (void)state;
    struct lfsr32 a, b, c;
    for (uint64_t s = 0; s < 1000; s++) {
        lfsr32_seed(&a, s);
        assert_true(a.state != 0);
    }
    lfsr32_seed(&a, 42);
    lfsr32_seed(&b, 42);
    lfsr32_seed(&c, 43);
    assert_true(a.state == b.state);
    assert_true(a.state != c.state);
    /* Output is balanced and never sticks at zero. */
    int ones = 0;
    for (int i = 0; i < 100000; i++) {
        ones += (int)lfsr32_step(&a);
        assert_true(a.state != 0);
    }
    assert_in_range(ones, 49000, 51000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_splitmix64_reference), cmocka_unit_test(test_xoshiro_reference),
        cmocka_unit_test(test_seed_reproducible),    cmocka_unit_test(test_below_bounds),
        cmocka_unit_test(test_below_unbiased),       cmocka_unit_test(test_double_range),
        cmocka_unit_test(test_lfsr_maximal_period),  cmocka_unit_test(test_lfsr_sequence),
        cmocka_unit_test(test_lfsr_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
