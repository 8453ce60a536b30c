/* test_bw_kernels.c - the streaming kernels compute STREAM's results on small arrays in every ISA the host
 * runs, count the right bytes, reject unfit arrays; ISA selection from CPUID flags and XCR0. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "bench/bw_kernels.h"

static bool host_runs(enum bw_isa isa)
{
    __builtin_cpu_init();
    switch (isa) {
    case BW_ISA_SSE2: return true;
    case BW_ISA_AVX2: return __builtin_cpu_supports("avx2") && (bw_xcr0() & BW_XCR0_AVX) == BW_XCR0_AVX;
    case BW_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && (bw_xcr0() & BW_XCR0_AVX512) == BW_XCR0_AVX512;
    default: return false;
    }
}

#define N 96 /* 768 bytes: three granules */

struct arrays {
    double *a, *b, *c;
};

static void alloc3(struct arrays *r, size_t n)
{
    r->a = aligned_alloc(64, n * 8);
    r->b = aligned_alloc(64, n * 8);
    r->c = aligned_alloc(64, n * 8);
    assert_non_null(r->a);
    assert_non_null(r->b);
    assert_non_null(r->c);
    for (size_t i = 0; i < n; i++) {
        r->a[i] = (double)i + 0.5;
        r->b[i] = 2.0 * (double)i;
        r->c[i] = (double)(i % 7) - 3.0;
    }
}

static void free3(struct arrays *r)
{
    free(r->a);
    free(r->b);
    free(r->c);
}

static void test_kernels_compute_stream_results(void **state)
{
    (void)state;
    int tested = 0;
    for (int isa = 0; isa < BW_ISA_COUNT; isa++) {
        if (!host_runs((enum bw_isa)isa)) {
            print_message("# %s not run here: host lacks it\n", bw_isa_name((enum bw_isa)isa));
            continue;
        }
        tested++;
        struct arrays r;
        alloc3(&r, N);
        struct bw_arrays x = {r.a, r.b, r.c, N, 3.0};

        /* read: the wrapping 64-bit sum of the words, over every pass */
        uint64_t want = 0;
        for (size_t i = 0; i < N; i++) {
            uint64_t w;
            memcpy(&w, &r.a[i], 8);
            want += w;
        }
        assert_true(bw_kernel_fn(BW_READ, (enum bw_isa)isa)(&x, 1) == want);
        assert_true(bw_kernel_fn(BW_READ, (enum bw_isa)isa)(&x, 3) == 3 * want);
        assert_true(bw_kernel_fn(BW_READ, (enum bw_isa)isa)(&x, 0) == 0);

        /* copy: c = a */
        assert_true(bw_kernel_fn(BW_COPY, (enum bw_isa)isa)(&x, 2) == 0);
        for (size_t i = 0; i < N; i++)
            assert_true(r.c[i] == (double)i + 0.5);

        /* triad: a = b + q c (exact in doubles: small integers and halves) */
        for (size_t i = 0; i < N; i++)
            r.c[i] = (double)(i % 5);
        bw_kernel_fn(BW_TRIAD, (enum bw_isa)isa)(&x, 1);
        for (size_t i = 0; i < N; i++)
            assert_true(r.a[i] == 2.0 * (double)i + 3.0 * (double)(i % 5));
        /* a second pass computes the same (a is not an input) */
        bw_kernel_fn(BW_TRIAD, (enum bw_isa)isa)(&x, 1);
        assert_true(r.a[N - 1] == 2.0 * (N - 1) + 3.0 * ((N - 1) % 5));

        /* write and write_nt: a = q everywhere, b and c untouched */
        x.q = -7.25;
        bw_kernel_fn(BW_WRITE, (enum bw_isa)isa)(&x, 1);
        for (size_t i = 0; i < N; i++)
            assert_true(r.a[i] == -7.25);
        x.q = 11.0;
        bw_kernel_fn(BW_WRITE_NT, (enum bw_isa)isa)(&x, 2);
        for (size_t i = 0; i < N; i++)
            assert_true(r.a[i] == 11.0);
        assert_true(r.b[5] == 10.0);

        /* copy_nt: c = a with non-temporal stores, the same result as copy; a untouched */
        for (size_t i = 0; i < N; i++)
            r.a[i] = 4.0 * (double)i - 1.5, r.c[i] = -1.0;
        assert_true(bw_kernel_fn(BW_COPY_NT, (enum bw_isa)isa)(&x, 2) == 0);
        for (size_t i = 0; i < N; i++)
            assert_true(r.c[i] == 4.0 * (double)i - 1.5 && r.a[i] == 4.0 * (double)i - 1.5);

        /* triad_nt: a = b + q c with non-temporal stores, b and c untouched; again after a second pass */
        x.q = 3.0;
        for (size_t i = 0; i < N; i++)
            r.a[i] = -1.0, r.c[i] = (double)(i % 9) - 4.0;
        assert_true(bw_kernel_fn(BW_TRIAD_NT, (enum bw_isa)isa)(&x, 1) == 0);
        for (size_t i = 0; i < N; i++)
            assert_true(r.a[i] == 2.0 * (double)i + 3.0 * ((double)(i % 9) - 4.0));
        bw_kernel_fn(BW_TRIAD_NT, (enum bw_isa)isa)(&x, 3);
        for (size_t i = 0; i < N; i++)
            assert_true(r.a[i] == 2.0 * (double)i + 3.0 * ((double)(i % 9) - 4.0) && r.b[i] == 2.0 * (double)i &&
                        r.c[i] == (double)(i % 9) - 4.0);

        /* A kernel touches n elements, not one more: a guard after the array stays. */
        double *g = aligned_alloc(64, (N + 32) * 8);
        for (size_t i = 0; i < N + 32; i++)
            g[i] = 1.0;
        struct bw_arrays y = {g, NULL, NULL, N - 32, 5.0};
        bw_kernel_fn(BW_WRITE, (enum bw_isa)isa)(&y, 1);
        bw_kernel_fn(BW_WRITE_NT, (enum bw_isa)isa)(&y, 1);
        assert_true(g[N - 33] == 5.0);
        assert_true(g[N - 32] == 1.0);
        /* ...nor do copy_nt and triad_nt past their destination (c, a) */
        double *h = aligned_alloc(64, (N + 32) * 8), *k = aligned_alloc(64, (N + 32) * 8);
        for (size_t i = 0; i < N + 32; i++)
            g[i] = 1.0, h[i] = 2.0, k[i] = 4.0;
        struct bw_arrays z = {g, h, k, N - 32, 0.5}; /* copy_nt: k = g; triad_nt: g = h + 0.5 k */
        bw_kernel_fn(BW_COPY_NT, (enum bw_isa)isa)(&z, 1);
        assert_true(k[N - 33] == 1.0 && k[N - 32] == 4.0);
        bw_kernel_fn(BW_TRIAD_NT, (enum bw_isa)isa)(&z, 1);
        assert_true(g[N - 33] == 2.5 && g[N - 32] == 1.0);
        free(h);
        free(k);
        free(g);
        free3(&r);
    }
    assert_true(tested >= 1);
}

static void test_bytes_names_and_checks(void **state)
{
    (void)state;
    assert_true(bw_kernel_bytes(BW_READ, 32) == 256);
    assert_true(bw_kernel_bytes(BW_WRITE_NT, 32) == 256);
    assert_true(bw_kernel_bytes(BW_COPY, 32) == 512);
    assert_true(bw_kernel_bytes(BW_TRIAD, 32) == 768);
    /* the _nt kernels count what their cached siblings count (STREAM bytes) */
    assert_true(bw_kernel_bytes(BW_COPY_NT, 32) == bw_kernel_bytes(BW_COPY, 32));
    assert_true(bw_kernel_bytes(BW_TRIAD_NT, 32) == bw_kernel_bytes(BW_TRIAD, 32));
    assert_true(bw_kernel_bytes(BW_COPY_NT, 32) == 512 && bw_kernel_bytes(BW_TRIAD_NT, 32) == 768);
    assert_true(bw_kernel_arrays(BW_COPY_NT) == (BW_A | BW_C) && bw_kernel_arrays(BW_TRIAD_NT) == (BW_A | BW_B | BW_C));
    assert_true(bw_kernel_nt(BW_WRITE_NT) && bw_kernel_nt(BW_COPY_NT) && bw_kernel_nt(BW_TRIAD_NT));
    assert_false(bw_kernel_nt(BW_READ) || bw_kernel_nt(BW_WRITE) || bw_kernel_nt(BW_COPY) || bw_kernel_nt(BW_TRIAD) ||
                 bw_kernel_nt(BW_KERNEL_COUNT));
    assert_string_equal(bw_kernel_name(BW_COPY_NT), "copy_nt");
    assert_string_equal(bw_kernel_name(BW_TRIAD_NT), "triad_nt");
    assert_int_equal(bw_kernel_from_name("copy_nt"), BW_COPY_NT);
    assert_int_equal(bw_kernel_from_name("triad_nt"), BW_TRIAD_NT);
    assert_true(bw_kernel_bytes(BW_KERNEL_COUNT, 32) == 0);
    assert_string_equal(bw_kernel_name(BW_WRITE_NT), "write_nt");
    assert_string_equal(bw_kernel_name((enum bw_kernel)99), "?");
    assert_string_equal(bw_isa_name(BW_ISA_AVX512), "avx512");
    assert_int_equal(bw_kernel_from_name("triad"), BW_TRIAD);
    assert_int_equal(bw_kernel_from_name("Triad"), -1);
    assert_int_equal(bw_kernel_from_name(NULL), -1);
    assert_true(bw_elems_for(1000) == 96);  /* 768 of 1000 bytes */
    assert_true(bw_elems_for(255) == 0);
    for (unsigned k = 0; k < BW_KERNEL_COUNT; k++)
        for (unsigned i = 0; i < BW_ISA_COUNT; i++)
            assert_non_null(bw_kernel_fn((enum bw_kernel)k, (enum bw_isa)i));
    assert_null(bw_kernel_fn(BW_KERNEL_COUNT, BW_ISA_SSE2));
    assert_null(bw_kernel_fn(BW_READ, BW_ISA_COUNT));

    double *a = aligned_alloc(64, 1024), *c = aligned_alloc(64, 1024);
    struct bw_arrays x = {a, NULL, c, 32, 1.0};
    assert_int_equal(bw_kernel_check(BW_COPY, &x), 0);
    assert_int_equal(bw_kernel_check(BW_TRIAD, &x), -1); /* b missing */
    x.n = 33;
    assert_int_equal(bw_kernel_check(BW_READ, &x), -1); /* not a granule multiple */
    x.n = 0;
    assert_int_equal(bw_kernel_check(BW_READ, &x), -1);
    x.n = 32;
    x.a = (double *)((char *)a + 8);
    assert_int_equal(bw_kernel_check(BW_READ, &x), -1); /* misaligned */
    assert_int_equal(bw_kernel_check(BW_READ, NULL), -1);
    free(a);
    free(c);
}

static void test_isa_choice(void **state)
{
    (void)state;
    struct cpu_features f = {0};
    const char *why;
    assert_true(bw_isa_usable(BW_ISA_SSE2, &f, 0, &why));
    assert_string_equal(why, "");
    assert_false(bw_isa_usable(BW_ISA_AVX2, &f, 0xE7, &why));
    assert_string_equal(why, "CPUID: no AVX2");
    f.avx = f.avx2 = true;
    assert_false(bw_isa_usable(BW_ISA_AVX2, &f, 0x3, &why)); /* OS did not enable YMM */
    assert_string_equal(why, "XCR0: YMM state not enabled");
    assert_true(bw_isa_usable(BW_ISA_AVX2, &f, 0x7, NULL));
    assert_int_equal(bw_isa_widest(&f, 0x7), BW_ISA_AVX2);
    f.avx512f = true;
    assert_int_equal(bw_isa_widest(&f, 0x7), BW_ISA_AVX2); /* ZMM state off */
    assert_false(bw_isa_usable(BW_ISA_AVX512, &f, 0x67, &why)); /* Hi16_ZMM (bit 7) missing */
    assert_int_equal(bw_isa_widest(&f, 0xE7), BW_ISA_AVX512);
    assert_int_equal(bw_isa_widest(NULL, 0xE7), BW_ISA_SSE2);
    assert_false(bw_isa_usable(BW_ISA_COUNT, &f, 0xE7, &why));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_compute_stream_results),
        cmocka_unit_test(test_bytes_names_and_checks),
        cmocka_unit_test(test_isa_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
