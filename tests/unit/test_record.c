/* test_record.c - kernel/crc32.c against a bitwise reference, and the record stream contract. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/crc32.h"
#include "kernel/record.h"

/* CRC-32 one bit at a time, straight from the definition (reflected, poly 0x04C11DB7). */
static uint32_t crc_bitwise(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void test_crc32_known_values(void **state)
{
    (void)state;
    /* Values from Python's zlib.crc32. */
    assert_int_equal(crc32_update(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(crc32_update(0, "", 0), 0);
    assert_int_equal(crc32_update(0, "a", 1), 0xe8b7be43u);
    assert_int_equal(crc32_update(0, "The quick brown fox jumps over the lazy dog", 43), 0x414fa339u);
    assert_int_equal(crc32_update(0, "line1\nline2\n", 12), 0x3a8d5d57u);
    uint8_t all[1024];
    for (int i = 0; i < 1024; i++)
        all[i] = (uint8_t)i;
    assert_int_equal(crc32_update(0, all, sizeof(all)), 0xb70b4c26u);
}

static void test_crc32_chaining_and_reference(void **state)
{
    (void)state;
    uint8_t data[4096];
    uint64_t s = 7;
    for (size_t i = 0; i < sizeof(data); i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        data[i] = (uint8_t)(s >> 56);
    }
    for (size_t len = 0; len <= sizeof(data); len += 1 + len / 3) {
        uint32_t whole = crc32_update(0, data, len);
        assert_int_equal(whole, crc_bitwise(0, data, len));
        for (size_t cut = 0; cut <= len; cut += 1 + len / 5)
            assert_int_equal(crc32_update(crc32_update(0, data, cut), data + cut, len - cut), whole);
    }
    /* Zero-length updates leave the running value alone. */
    uint32_t c = crc32_update(0, data, 100);
    assert_int_equal(crc32_update(c, data, 0), c);
}

/* ---- record stream ------------------------------------------------------------------------ */

#define MAX_LINES 64

struct collect {
    char *lines[MAX_LINES];
    size_t lens[MAX_LINES];
    int n;
};

static void sink(const char *line, size_t len, void *ctx)
{
    struct collect *c = ctx;
    assert_true(c->n < MAX_LINES);
    assert_true(len <= RECORD_MAX);
    assert_int_equal(strlen(line), len); /* NUL-terminated at len */
    assert_null(memchr(line, '\n', len));
    assert_null(memchr(line, '\r', len));
    c->lines[c->n] = malloc(len + 1);
    memcpy(c->lines[c->n], line, len + 1);
    c->lens[c->n] = len;
    c->n++;
}

static void collect_free(struct collect *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->lines[i]);
    c->n = 0;
}

static struct record_stream rs; /* 16 KiB: keep it off the test's stack */

/* The end line the contract demands for the lines collected before it. */
static void expect_end(const struct collect *c, const char *status)
{
    uint32_t crc = 0;
    for (int i = 0; i < c->n - 1; i++) {
        crc = crc_bitwise(crc, c->lines[i], c->lens[i]);
        crc = crc_bitwise(crc, "\n", 1);
    }
    char want[128];
    snprintf(want, sizeof(want), "{\"type\":\"end\",\"status\":\"%s\",\"records\":%d,\"crc32\":\"%08x\"}",
             status, c->n - 1, crc);
    assert_string_equal(c->lines[c->n - 1], want);
}

static void test_golden_end_line(void **state)
{
    (void)state;
    struct collect c = {0};
    record_stream_init(&rs, sink, &c);
    struct json *j = record_begin(&rs, "run");
    json_kv_str(j, "version", "1.0");
    json_kv_int(j, "cpus", 4);
    record_end(&rs);
    j = record_begin(&rs, "point");
    json_kv_uint(j, "bytes", 4096);
    json_kv_double(j, "ns", 1.25);
    record_end(&rs);
    record_finish(&rs, "ok");
    assert_int_equal(c.n, 3);
    assert_string_equal(c.lines[0], "{\"type\":\"run\",\"version\":\"1.0\",\"cpus\":4}");
    assert_string_equal(c.lines[1], "{\"type\":\"point\",\"bytes\":4096,\"ns\":1.25}");
    /* python3 -c "import zlib; print('%08x' % zlib.crc32(line0 + b'\n' + line1 + b'\n'))" */
    assert_string_equal(c.lines[2],
                        "{\"type\":\"end\",\"status\":\"ok\",\"records\":2,\"crc32\":\"bd767318\"}");
    assert_int_equal(rs.count, 2);
    assert_int_equal(rs.crc, 0xbd767318u);
    collect_free(&c);
}

static void test_count_and_crc_many(void **state)
{
    (void)state;
    struct collect c = {0};
    record_stream_init(&rs, sink, &c);
    for (int i = 0; i < 40; i++) {
        struct json *j = record_begin(&rs, i ? "point" : "run");
        json_kv_int(j, "i", i);
        json_key(j, "v");
        json_arr_begin(j);
        for (int k = 0; k < i; k++)
            json_double(j, k / 3.0);
        json_arr_end(j);
        json_kv_str(j, "s", "tab\there \"quoted\" \xe9");
        record_end(&rs);
    }
    record_finish(&rs, "error");
    assert_int_equal(c.n, 41);
    expect_end(&c, "error");
    collect_free(&c);
}

static void test_finish_idempotent_and_drops_later(void **state)
{
    (void)state;
    struct collect c = {0};
    record_stream_init(&rs, sink, &c);
    record_end(&rs); /* nothing open: nothing happens */
    record_begin(&rs, "run");
    record_end(&rs);
    record_finish(&rs, "ok");
    record_finish(&rs, "crashed");
    struct json *j = record_begin(&rs, "late");
    assert_non_null(j);
    json_kv_int(j, "x", 1); /* writing to a dropped record is harmless */
    record_end(&rs);
    record_finish(&rs, "error");
    assert_int_equal(c.n, 2);
    assert_string_equal(c.lines[0], "{\"type\":\"run\"}");
    expect_end(&c, "ok");
    assert_int_equal(rs.count, 1);
    collect_free(&c);
}

static void test_empty_run(void **state)
{
    (void)state;
    struct collect c = {0};
    record_stream_init(&rs, sink, &c);
    record_finish(&rs, "crashed");
    assert_int_equal(c.n, 1);
    assert_string_equal(c.lines[0],
                        "{\"type\":\"end\",\"status\":\"crashed\",\"records\":0,\"crc32\":\"00000000\"}");
    collect_free(&c);
}

static void test_overflow_record(void **state)
{
    (void)state;
    struct collect c = {0};
    static char big[RECORD_MAX + 100];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    record_stream_init(&rs, sink, &c);
    struct json *j = record_begin(&rs, "dump");
    json_kv_str(j, "data", big);
    json_kv_int(j, "after", 7);
    record_end(&rs);
    /* The full line would be {"type":"dump","data":"xxx...","after":7} */
    size_t full = strlen("{\"type\":\"dump\",\"data\":\"\",\"after\":7}") + strlen(big);
    char want[128];
    snprintf(want, sizeof(want), "{\"type\":\"record_overflow\",\"orig_type\":\"dump\",\"bytes\":%zu}",
             full);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.lines[0], want);

    /* Exactly RECORD_MAX - 1 bytes fit (the NUL takes the last one); one more does not. */
    const char *frame = "{\"type\":\"t\",\"d\":\"\"}";
    size_t fit = RECORD_MAX - 1 - strlen(frame);
    big[fit] = 0;
    j = record_begin(&rs, "t");
    json_kv_str(j, "d", big);
    record_end(&rs);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.lens[1], RECORD_MAX - 1);
    big[fit] = 'x';
    big[fit + 1] = 0;
    j = record_begin(&rs, "t");
    json_kv_str(j, "d", big);
    record_end(&rs);
    assert_int_equal(c.n, 3);
    assert_non_null(strstr(c.lines[2], "\"record_overflow\""));
    record_finish(&rs, "ok");
    assert_int_equal(c.n, 4);
    expect_end(&c, "ok"); /* overflow records are counted and checksummed */
    assert_int_equal(rs.count, 3);
    collect_free(&c);
}

static void test_abort_and_reentry(void **state)
{
    (void)state;
    struct collect c = {0};
    record_stream_init(&rs, sink, &c);

    struct json *j = record_begin(&rs, "half");
    json_kv_int(j, "a", 1);
    record_abort(&rs);
    record_end(&rs); /* the aborted record stays dropped */
    assert_int_equal(c.n, 0);

    /* A crash report interrupts a record being built: only the crash report comes out. */
    j = record_begin(&rs, "point");
    json_kv_int(j, "partial", 1);
    json_key(j, "arr");
    json_arr_begin(j);
    struct json *cj = record_begin(&rs, "crash");
    json_kv_str(cj, "reason", "#PF");
    record_end(&rs);
    /* ...and if the interrupted code resumes, its leftovers are dropped. */
    json_int(j, 5);
    json_arr_end(j);
    record_end(&rs);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.lines[0], "{\"type\":\"crash\",\"reason\":\"#PF\"}");

    /* Finish with a record open: it is abandoned, not emitted. */
    record_begin(&rs, "open_at_end");
    record_finish(&rs, "crashed");
    assert_int_equal(c.n, 2);
    expect_end(&c, "crashed");
    collect_free(&c);
}

static void test_autoclose_and_escaped_type(void **state)
{
    (void)state;
    struct collect c = {0};
    record_stream_init(&rs, sink, &c);
    struct json *j = record_begin(&rs, "we\"ird\n");
    json_key(j, "a");
    json_arr_begin(j);
    json_obj_begin(j);
    json_kv_int(j, "b", 2);
    record_end(&rs); /* containers left open are closed */
    assert_int_equal(c.n, 1);
    assert_string_equal(c.lines[0], "{\"type\":\"we\\\"ird\\n\",\"a\":[{\"b\":2}]}");

    /* A long type is kept (truncated) in the overflow record. */
    static char big[RECORD_MAX];
    memset(big, 'y', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    j = record_begin(&rs, "a_rather_long_record_type_name_that_goes_on");
    json_kv_str(j, "d", big);
    record_end(&rs);
    assert_int_equal(c.n, 2);
    assert_non_null(strstr(c.lines[1], "\"orig_type\":\"a_rather_long_record_type_name_\""));
    collect_free(&c);
}

static void test_null_sink(void **state)
{
    (void)state;
    record_stream_init(&rs, NULL, NULL);
    record_begin(&rs, "x");
    record_end(&rs);
    record_finish(&rs, "ok");
    assert_int_equal(rs.count, 1);
    assert_true(rs.ended);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_known_values),
        cmocka_unit_test(test_crc32_chaining_and_reference),
        cmocka_unit_test(test_golden_end_line),
        cmocka_unit_test(test_count_and_crc_many),
        cmocka_unit_test(test_finish_idempotent_and_drops_later),
        cmocka_unit_test(test_empty_run),
        cmocka_unit_test(test_overflow_record),
        cmocka_unit_test(test_abort_and_reentry),
        cmocka_unit_test(test_autoclose_and_escaped_type),
        cmocka_unit_test(test_null_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
