/* test_json.c - kernel/json.c: structure, escaping, numbers, bounds, checked with a strict JSON parser. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/json.h"

/* ---- a strict RFC 8259 validator (the writer must never produce anything it rejects) ------- */

static const char *v_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static const char *v_value(const char *p, int depth);

static const char *v_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c >= 0x7f) /* the writer promises printable ASCII only */
            return NULL;
        if (c == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                        return NULL;
                p += 5;
                continue;
            }
            if (!*p || !strchr("\"\\/bfnrt", *p))
                return NULL;
        }
        p++;
    }
    return p + 1;
}

static const char *v_number(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return p;
}

static const char *v_value(const char *p, int depth)
{
    if (depth > 64)
        return NULL;
    p = v_ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        bool obj = *p == '{';
        p = v_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (obj) {
                p = v_string(v_ws(p));
                if (!p)
                    return NULL;
                p = v_ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            p = v_value(p, depth + 1);
            if (!p)
                return NULL;
            p = v_ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == close)
                return p + 1;
            return NULL;
        }
    }
    if (*p == '"')
        return v_string(p);
    if (!strncmp(p, "true", 4))
        return p + 4;
    if (!strncmp(p, "false", 5))
        return p + 5;
    if (!strncmp(p, "null", 4))
        return p + 4;
    return v_number(p);
}

static bool valid_json(const char *s)
{
    const char *p = v_value(s, 0);
    return p && *v_ws(p) == '\0';
}

static void test_validator_rejects(void **state)
{
    (void)state;
    /* The checker must be able to fail, or the other tests prove nothing. */
    assert_true(valid_json("{\"a\":[1,2.5e-3,\"x\",null,true,false,{}]}"));
    assert_false(valid_json("{\"a\":1,}"));
    assert_false(valid_json("{\"a\" 1}"));
    assert_false(valid_json("[1 2]"));
    assert_false(valid_json("\"a\nb\""));
    assert_false(valid_json("inf"));
    assert_false(valid_json("[nan]"));
    assert_false(valid_json("01"));
    assert_false(valid_json("{\"a\":1"));
    assert_false(valid_json("\"\\x\""));
}

/* ---- structure ---------------------------------------------------------------------------- */

static void test_nesting_and_commas(void **state)
{
    (void)state;
    char buf[256];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    json_kv_int(&j, "a", 1);
    json_kv_str(&j, "b", "x");
    json_key(&j, "c");
    json_arr_begin(&j);
    json_int(&j, 1);
    json_int(&j, 2);
    json_obj_begin(&j);
    json_kv_null(&j, "d");
    json_obj_end(&j);
    json_arr_begin(&j);
    json_arr_end(&j);
    json_obj_begin(&j);
    json_obj_end(&j);
    json_arr_end(&j);
    json_kv_bool(&j, "e", true);
    json_kv_bool(&j, "f", false);
    json_kv_hex(&j, "g", 0x1a2b);
    json_kv_uint(&j, "h", UINT64_MAX);
    json_kv_double(&j, "i", 0.1);
    json_kv_raw(&j, "k", "[1,2]");
    json_kv_double_or_null(&j, "l", true, 2.5);
    json_kv_double_or_null(&j, "m", false, 2.5);
    json_obj_end(&j);
    assert_false(j.overflow);
    assert_int_equal(j.depth, 0);
    assert_string_equal(buf, "{\"a\":1,\"b\":\"x\",\"c\":[1,2,{\"d\":null},[],{}],\"e\":true,"
                             "\"f\":false,\"g\":\"0x1a2b\",\"h\":18446744073709551615,\"i\":0.1,"
                             "\"k\":[1,2],\"l\":2.5,\"m\":null}");
    assert_int_equal(j.len, strlen(buf));
    assert_int_equal(j.want, strlen(buf));
    assert_true(valid_json(buf));
}

static void test_top_level_values(void **state)
{
    (void)state;
    char buf[64];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_arr_begin(&j);
    json_null(&j);
    json_raw(&j, "{\"x\":1}");
    json_str(&j, NULL);
    json_raw(&j, NULL);
    json_arr_end(&j);
    assert_string_equal(buf, "[null,{\"x\":1},null,null]");
}

static void test_depth_limit(void **state)
{
    (void)state;
    char buf[256];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    for (int i = 0; i < JSON_MAX_DEPTH; i++)
        json_arr_begin(&j);
    assert_false(j.overflow);
    assert_int_equal(j.depth, JSON_MAX_DEPTH);
    json_arr_begin(&j); /* one too deep */
    assert_true(j.overflow);
    assert_int_equal(j.depth, JSON_MAX_DEPTH);

    json_init(&j, buf, sizeof(buf));
    for (int i = 0; i < JSON_MAX_DEPTH; i++) {
        if (i & 1)
            json_arr_begin(&j);
        else
            json_obj_begin(&j), json_key(&j, "k");
    }
    json_close_all(&j);
    assert_false(j.overflow);
    assert_int_equal(j.depth, 0);
    assert_true(valid_json(buf));
}

static void test_unbalanced(void **state)
{
    (void)state;
    char buf[64];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    json_obj_end(&j);
    assert_false(j.overflow);
    json_obj_end(&j); /* nothing open */
    assert_true(j.overflow);
    assert_string_equal(buf, "{}");

    /* A dangling key gets null when closed automatically. */
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    json_key(&j, "a");
    json_arr_begin(&j);
    json_int(&j, 1);
    json_obj_begin(&j);
    json_key(&j, "z");
    json_close_all(&j);
    assert_string_equal(buf, "{\"a\":[1,{\"z\":null}]}");
    assert_false(j.overflow);
}

/* ---- strings ------------------------------------------------------------------------------ */

static void test_escaping(void **state)
{
    (void)state;
    char buf[512];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_str(&j, "q\"b\\s/\n\t\r\b\f\x01\x1f\x7f\xc3\xa9 end");
    assert_string_equal(buf,
                        "\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\\u00c3\\u00a9 end\"");
    assert_true(valid_json(buf));

    json_init(&j, buf, sizeof(buf));
    json_strn(&j, "a\0b", 3);
    assert_string_equal(buf, "\"a\\u0000b\"");

    /* Keys are escaped too. */
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    json_kv_str(&j, "k\"\n", "");
    json_obj_end(&j);
    assert_string_equal(buf, "{\"k\\\"\\n\":\"\"}");

    /* Every byte value: output stays printable ASCII, no newline, valid. */
    char all[256];
    for (int i = 0; i < 255; i++)
        all[i] = (char)(i + 1);
    all[255] = 0;
    char big[2048];
    json_init(&j, big, sizeof(big));
    json_str(&j, all);
    assert_false(j.overflow);
    assert_true(valid_json(big));
    for (size_t i = 0; i < j.len; i++)
        assert_true(big[i] >= 0x20 && big[i] < 0x7f);
}

/* ---- numbers ------------------------------------------------------------------------------ */

static void test_integers(void **state)
{
    (void)state;
    char buf[256];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_arr_begin(&j);
    json_int(&j, 0);
    json_int(&j, -1);
    json_int(&j, INT64_MAX);
    json_int(&j, INT64_MIN);
    json_uint(&j, 0);
    json_uint(&j, UINT64_MAX);
    json_hex(&j, 0);
    json_hex(&j, 0xdeadbeefcafe);
    json_hex(&j, UINT64_MAX);
    json_arr_end(&j);
    assert_string_equal(buf, "[0,-1,9223372036854775807,-9223372036854775808,0,18446744073709551615,"
                             "\"0x0\",\"0xdeadbeefcafe\",\"0xffffffffffffffff\"]");
}

static void test_doubles(void **state)
{
    (void)state;
    char buf[512];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_arr_begin(&j);
    json_double(&j, 0.0);
    json_double(&j, -0.0);
    json_double(&j, 1.0);
    json_double(&j, 0.1);
    json_double(&j, -2.5);
    json_double(&j, 1e300);
    json_double(&j, 123456789012.0);
    json_double(&j, 1e-7);
    json_double(&j, INFINITY);
    json_double(&j, -INFINITY);
    json_double(&j, NAN);
    json_double(&j, -NAN);
    json_arr_end(&j);
    assert_string_equal(buf, "[0,-0,1,0.1,-2.5,1e+300,123456789012,1e-07,null,null,null,null]");
    assert_true(valid_json(buf));
}

static void test_doubles_round_trip(void **state)
{
    (void)state;
    uint64_t s = 12345;
    for (int i = 0; i < 100000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        union {
            uint64_t u;
            double d;
        } b = {.u = s};
        char buf[64];
        struct json j;
        json_init(&j, buf, sizeof(buf));
        json_double(&j, b.d);
        assert_false(j.overflow);
        assert_true(valid_json(buf));
        if (isfinite(b.d)) {
            assert_true(strtod(buf, NULL) == b.d);
            assert_true(strlen(buf) <= 24);
        } else {
            assert_string_equal(buf, "null");
        }
    }
}

/* ---- bounds ------------------------------------------------------------------------------- */

static void test_overflow_never_writes_past_cap(void **state)
{
    (void)state;
    /* Build the same document into every capacity from 0 to its full size. */
    char ref[512];
    struct json r;
    json_init(&r, ref, sizeof(ref));
    json_obj_begin(&r);
    json_kv_str(&r, "type", "x\"y");
    json_kv_int(&r, "n", -42);
    json_key(&r, "arr");
    json_arr_begin(&r);
    json_double(&r, 3.25);
    json_hex(&r, 0xabc);
    json_arr_end(&r);
    json_obj_end(&r);
    assert_false(r.overflow);
    size_t full = r.len;

    for (size_t cap = 0; cap <= full + 2; cap++) {
        char mem[600];
        memset(mem, 'G', sizeof(mem));
        char *buf = mem + 16; /* guard bytes on both sides */
        struct json j;
        json_init(&j, buf, cap);
        json_obj_begin(&j);
        json_kv_str(&j, "type", "x\"y");
        json_kv_int(&j, "n", -42);
        json_key(&j, "arr");
        json_arr_begin(&j);
        json_double(&j, 3.25);
        json_hex(&j, 0xabc);
        json_arr_end(&j);
        json_obj_end(&j);
        for (int g = 0; g < 16; g++)
            assert_int_equal(mem[g], 'G');
        for (size_t g = cap; g < sizeof(mem) - 16; g++)
            assert_int_equal(buf[g], 'G');
        assert_int_equal(j.want, full);
        if (cap > full) {
            assert_false(j.overflow);
            assert_string_equal(buf, ref);
        } else {
            assert_true(j.overflow);
            if (cap) {
                /* A NUL-terminated prefix of the real output. */
                assert_true(j.len < cap);
                assert_int_equal(strlen(buf), j.len);
                assert_memory_equal(buf, ref, j.len);
            }
        }
    }
}

static void test_overflow_stops_writing(void **state)
{
    (void)state;
    /* After a long string fails, a short value that would fit must not be appended. */
    char buf[16];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_arr_begin(&j);
    json_str(&j, "this string is far too long");
    json_int(&j, 1);
    assert_true(j.overflow);
    /* Only a prefix of the real text; the 1 that would have fitted is not spliced on. */
    const char *full = "[\"this string is far too long\",1]";
    assert_memory_equal(buf, full, strlen(buf));
    assert_null(strchr(buf, '1'));
    assert_int_equal(j.want, strlen(full) - 1); /* everything but the unwritten ']' */
}

static void test_raw_rejects_control(void **state)
{
    (void)state;
    char buf[64];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_arr_begin(&j);
    json_raw(&j, "{\"a\":\n1}");
    assert_true(j.overflow);
    assert_null(strchr(buf, '\n'));
}

/* Random operation sequences: output is valid JSON whenever nothing overflowed. */
static void test_random_documents(void **state)
{
    (void)state;
    uint64_t s = 99;
    for (int iter = 0; iter < 20000; iter++) {
        char buf[1024];
        struct json j;
        size_t cap = (iter & 1) ? sizeof(buf) : (size_t)(s % sizeof(buf));
        json_init(&j, buf, cap);
        json_obj_begin(&j);
        bool in_obj[JSON_MAX_DEPTH + 2] = {true};
        int ops = 1 + (int)(s % 60);
        for (int k = 0; k < ops; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            unsigned r = (unsigned)(s >> 33);
            int d = j.depth;
            if (in_obj[d > 0 ? d - 1 : 0] && d > 0) {
                if (r % 7 == 0 && d > 1) {
                    json_obj_end(&j);
                    continue;
                }
                char key[8];
                snprintf(key, sizeof(key), "k%u", r % 100);
                json_key(&j, key);
            } else if (r % 7 == 0 && d > 1) {
                json_arr_end(&j);
                continue;
            }
            switch ((r >> 8) % 8) {
            case 0: json_obj_begin(&j); if (j.depth > d) in_obj[j.depth - 1] = true; break;
            case 1: json_arr_begin(&j); if (j.depth > d) in_obj[j.depth - 1] = false; break;
            case 2: json_int(&j, (int64_t)s); break;
            case 3: json_double(&j, (double)(int32_t)r / 7.0); break;
            case 4: json_str(&j, "s\x01\"\xff"); break;
            case 5: json_hex(&j, s); break;
            case 6: json_bool(&j, r & 1); break;
            default: json_null(&j); break;
            }
        }
        json_close_all(&j);
        if (cap)
            assert_int_equal(strlen(buf), j.len);
        assert_true(j.len < cap || cap == 0);
        if (!j.overflow) {
            assert_int_equal(j.depth, 0);
            assert_int_equal(j.want, j.len);
            if (!valid_json(buf))
                fail_msg("invalid JSON: %s", buf);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validator_rejects),
        cmocka_unit_test(test_nesting_and_commas),
        cmocka_unit_test(test_top_level_values),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_unbalanced),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_doubles),
        cmocka_unit_test(test_doubles_round_trip),
        cmocka_unit_test(test_overflow_never_writes_past_cap),
        cmocka_unit_test(test_overflow_stops_writing),
        cmocka_unit_test(test_raw_rejects_control),
        cmocka_unit_test(test_random_documents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
