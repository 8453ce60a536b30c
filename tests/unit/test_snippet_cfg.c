/* test_snippet_cfg.c - the [snippet NAME] section parser: good files, every default, and hostile input with its one-line error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "bench/snippet_cfg.h"

static struct snippet_set set;
static char err[256];

static int parse(const char *text) { return snippet_cfg_parse(&set, text, strlen(text), 10, "t.cfg", err, sizeof(err)); }

static void test_good(void **state)
{
    (void)state;
    const char *t = "[snippet add_chain]\r\n"
                    "code = 48 01 c0   # add rax, rax\r\n"
                    "\n"
                    "# a comment line\n"
                    "[snippet imul]\n"
                    "  code=480faf\n"
                    "code = c0\n"
                    "init = 48 31 c0\n"
                    "unroll = 1000\n"
                    "loop = 10\n"
                    "warmup = 0\n"
                    "events = INST_RETIRED:ANY_P, BR_INST_RETIRED:ALL_BRANCHES\n"
                    "differencing = off\n"
                    "aggregate = min\n"
                    "timeout_ms = 250\n";
    assert_int_equal(parse(t), 0);
    assert_int_equal(set.n, 2);
    const struct snippet *a = &set.s[0], *b = &set.s[1];
    assert_string_equal(a->name, "add_chain");
    assert_int_equal(a->code_len, 3);
    assert_memory_equal(a->code, "\x48\x01\xc0", 3);
    /* defaults */
    assert_int_equal(a->unroll, 100);
    assert_int_equal(a->loop, 0);
    assert_int_equal(a->warmup, 5);
    assert_true(a->differencing);
    assert_int_equal(a->aggregate, SNIPPET_AGG_MEDIAN);
    assert_int_equal(a->timeout_ms, 5000);
    assert_int_equal(a->init_len, 0);
    assert_int_equal(a->n_events, 0);
    assert_int_equal(a->line, 10);
    /* code lines append; every key */
    assert_int_equal(b->code_len, 4);
    assert_memory_equal(b->code, "\x48\x0f\xaf\xc0", 4);
    assert_int_equal(b->init_len, 3);
    assert_int_equal(b->unroll, 1000);
    assert_int_equal(b->loop, 10);
    assert_int_equal(b->warmup, 0);
    assert_int_equal(b->n_events, 2);
    assert_string_equal(b->events[0], "INST_RETIRED:ANY_P");
    assert_string_equal(b->events[1], "BR_INST_RETIRED:ALL_BRANCHES");
    assert_false(b->differencing);
    assert_int_equal(b->aggregate, SNIPPET_AGG_MIN);
    assert_int_equal(b->timeout_ms, 250);
    assert_int_equal(b->line, 14);
    assert_int_equal(snippet_iters_per_call(b), 10000);
    assert_int_equal(snippet_iters_per_call(a), 100);
    /* no sections at all */
    assert_int_equal(snippet_cfg_parse(&set, NULL, 0, 1, "t.cfg", err, sizeof(err)), 0);
    assert_int_equal(set.n, 0);
}

/* Each hostile text fails with an error naming the file, the line and the substring. */
static void expect(const char *text, unsigned line, const char *what)
{
    set.n = 99;
    int rc = parse(text);
    if (rc != -1 || set.n != 0)
        fail_msg("accepted: %s", text);
    char where[32];
    snprintf(where, sizeof(where), "t.cfg:%u: ", line);
    if (strncmp(err, where, strlen(where)) || !strstr(err, what))
        fail_msg("for %s\n got: %s\n want: %s...%s", text, err, where, what);
    assert_null(strchr(err, '\n'));
}

static void test_hostile(void **state)
{
    (void)state;
    expect("[snippet a]\ncode = 4\n", 11, "odd number of hex digits");
    expect("[snippet a]\ncode = 48 0x01\n", 11, "not a hex digit");
    expect("[snippet a]\ncode = 48 0\n", 11, "odd number");
    expect("[snippet a]\ncode =\n", 11, "no bytes");
    expect("[snippet a]\ninit = 90\n", 10, "has no code");
    expect("[snippet a]\ncode = 90\n[snippet b]\n", 12, "'b' has no code");
    expect("[snippet a]\ncode = 90\nfoo = 1\n", 12, "unknown snippet key 'foo'");
    expect("[snippet a]\ncode = 90\nunroll = 0\n", 12, "out of range 1..100000");
    expect("[snippet a]\ncode = 90\nunroll = 100001\n", 12, "out of range");
    expect("[snippet a]\ncode = 90\nunroll = -1\n", 12, "not a decimal number");
    expect("[snippet a]\ncode = 90\nloop = 99999999999999999999999\n", 12, "out of range");
    expect("[snippet a]\ncode = 90\ntimeout_ms = 0\n", 12, "out of range");
    expect("[snippet a]\ncode = 90\naggregate = mean\n", 12, "not median|min");
    expect("[snippet a]\ncode = 90\ndifferencing = maybe\n", 12, "not on|off");
    expect("[snippet a]\ncode = 90\nevents = A,,B\n", 12, "empty event name");
    expect("[snippet a]\ncode = 90\nevents = A,B,C,D,E,F,G,H,I\n", 12, "more than 8 events");
    expect("[snippet a]\ncode = 90\ncode\n", 12, "missing '='");
    expect("code = 90\n", 10, "before any [snippet NAME] header");
    expect("[snipet a]\ncode = 90\n", 10, "unknown section");
    expect("[snippet]\n", 10, "needs a name");
    expect("[snippet A-b]\n", 10, "only a-z, 0-9 and _");
    expect("[snippet aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n", 10, "longer than 31");
    expect("[snippet a\n", 10, "no closing ']'");
    expect("[snippet a]\ncode = 90\n[snippet a]\ncode = 90\n", 12, "defined twice (first on line 10)");
    {
        static const char nul[] = "[snippet a]\ncode = 90\0\n";
        assert_int_equal(snippet_cfg_parse(&set, nul, sizeof(nul) - 1, 10, "t.cfg", err, sizeof(err)), -1);
        assert_non_null(strstr(err, "t.cfg:11: NUL byte"));
    }
    /* 2 x unroll copies of a long snippet exceed the generated-code cap */
    {
        char t[4096] = "[snippet big]\nunroll = 100000\n";
        strcat(t, "code = ");
        for (int i = 0; i < 40; i++)
            strcat(t, "90");
        strcat(t, "\n");
        expect(t, 10, "exceeds");
    }
    /* more than SNIPPET_CODE_MAX bytes over several lines */
    {
        static char t[SNIPPET_CODE_MAX * 3 + 256];
        strcpy(t, "[snippet big]\nunroll = 1\n");
        for (int l = 0; l < 40; l++) {
            strcat(t, "code = ");
            for (int i = 0; i < 60; i++)
                strcat(t, "90");
            strcat(t, "\n");
        }
        expect(t, 46, "more than 2048 bytes");
    }
    /* more than SNIPPET_MAX snippets */
    {
        char t[2048] = "";
        for (int i = 0; i <= SNIPPET_MAX; i++) {
            char s[48];
            snprintf(s, sizeof(s), "[snippet s%d]\ncode = 90\n", i);
            strcat(t, s);
        }
        expect(t, 10 + 2 * SNIPPET_MAX, "more than 16 snippets");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
