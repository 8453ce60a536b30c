/* test_config.c - kernel/config.c: every key, both front ends, precedence and hostile input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/config.h"

static char err[256];

static int parse_file(struct config *c, const char *text)
{
    return config_parse_file(c, text, strlen(text), "pmubench.cfg", err, sizeof(err));
}

static int parse_args(struct config *c, const char *args)
{
    return config_parse_args(c, args, "load options", err, sizeof(err));
}

/* A file that must be rejected with exactly `msg`, leaving the config untouched. */
static void file_error(const char *text, size_t len, const char *msg)
{
    struct config c, before;
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "profile=full\nbaud=9600\n"), 0);
    before = c;
    int rc = config_parse_file(&c, text, len, "pmubench.cfg", err, sizeof(err));
    if (rc != -1 || strcmp(err, msg) != 0)
        fail_msg("file \"%.60s\": rc %d, error \"%s\", expected \"%s\"", text, rc, err, msg);
    assert_memory_equal(&c, &before, sizeof(c));
    assert_null(strchr(err, '\n'));
}

static void file_error_s(const char *text, const char *msg)
{
    file_error(text, strlen(text), msg);
}

static void args_error(const char *args, const char *msg)
{
    struct config c, before;
    config_defaults(&c);
    before = c;
    int rc = parse_args(&c, args);
    if (rc != -1 || strcmp(err, msg) != 0)
        fail_msg("args \"%.60s\": rc %d, error \"%s\", expected \"%s\"", args, rc, err, msg);
    assert_memory_equal(&c, &before, sizeof(c));
}

static void to_json(const struct config *c, char *buf, size_t cap)
{
    struct json j;
    json_init(&j, buf, cap);
    config_to_json(c, &j);
    assert_false(j.overflow);
}

/* ---- defaults and the key table ----------------------------------------------------------- */

static void test_defaults(void **state)
{
    (void)state;
    struct config c;
    memset(&c, 0xA5, sizeof(c));
    config_defaults(&c);
    assert_int_equal(c.profile, PROFILE_AUTO);
    assert_int_equal(c.serial_port, CFG_SERIAL_AUTO);
    assert_int_equal(c.baud, 115200);
    assert_int_equal(c.on_finish, FINISH_SHUTDOWN);
    assert_string_equal(c.bench, "all");
    assert_int_equal(c.max_bytes, 0);
    assert_false(c.trace_msr);
    assert_string_equal(c.pmu_assume, "");
    assert_string_equal(c.events, "");
    assert_false(c.acpi_dump);
    assert_int_equal(c.max_cpus, 0);
    assert_int_equal(c.seed, 0x9e3779b97f4a7c15ull);
    assert_string_equal(c.serialize, "lfence");
    assert_int_equal(c.time_budget_ms, 0);
    assert_int_equal(c.turbo, CFG_TURBO_LEAVE);
    assert_int_equal(c.set_mask, 0);

    char buf[1024];
    to_json(&c, buf, sizeof(buf));
    assert_string_equal(buf,
                        "{\"profile\":\"auto\",\"serial\":\"auto\",\"baud\":115200,"
                        "\"on_finish\":\"shutdown\",\"bench\":\"all\",\"max_bytes\":0,"
                        "\"trace_msr\":false,\"pmu_assume\":\"none\",\"events\":\"\","
                        "\"acpi_dump\":false,\"max_cpus\":0,\"seed\":\"0x9e3779b97f4a7c15\","
                        "\"serialize\":\"lfence\",\"time_budget_ms\":0,\"crash_test\":\"none\","
                        "\"turbo\":\"leave\",\"sweep_top\":0,\"samples\":\"auto\"}");
}

static void test_key_help(void **state)
{
    (void)state;
    size_t i;
    const char *name, *values, *help;
    for (i = 0; (help = config_key_help(i, &name, &values)) != NULL; i++) {
        assert_true(strlen(help) > 10);
        assert_true(strlen(values) > 0);
        assert_non_null(config_key_default(i));
        for (size_t k = 0; k < i; k++) {
            const char *other;
            config_key_help(k, &other, NULL);
            assert_string_not_equal(name, other);
        }
        /* Every key's default, given explicitly, parses and changes nothing but set_mask and where it was set. */
        struct config d, c;
        config_defaults(&d);
        c = d;
        char line[300];
        snprintf(line, sizeof(line), "%s = \"%s\"\n", name, config_key_default(i));
        assert_int_equal(parse_file(&c, line), 0);
        assert_int_equal(c.set_mask, 1u << i);
        assert_string_equal(c.key_origin[i], "pmubench.cfg");
        assert_int_equal(c.key_line[i], 1);
        c.set_mask = 0;
        c.key_origin[i] = NULL;
        c.key_line[i] = 0;
        assert_memory_equal(&c, &d, sizeof(c));
    }
    assert_int_equal(i, CFG_KEY_COUNT);
    assert_null(config_key_help(CFG_KEY_COUNT, &name, &values));
    assert_null(config_key_default(CFG_KEY_COUNT));
}

/* ---- the file syntax ---------------------------------------------------------------------- */

static void test_file_all_keys(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    const char *text = "# pmubench configuration\n"
                       "profile = quick\n"
                       "serial = com2\n"
                       "baud = 57600\n"
                       "on_finish = reboot\n"
                       "bench = lat, bw ,tlb_walk\n"
                       "max_bytes = 64 MiB\n"
                       "trace_msr = yes\n"
                       "pmu_assume = amd_fam10h\n"
                       "events = INST_RETIRED.ANY,0x412e   # two events\n"
                       "acpi_dump = on\n"
                       "max_cpus = 4096\n"
                       "seed = 0xDEADbeef12345678\n"
                       "serialize = cpuid\n"
                       "time_budget_ms = 600000\n"
                       "crash_test = nested\n"
                       "turbo = off\n"
                       "sweep_top = 2G\n"
                       "samples = normal\n";
    assert_int_equal(parse_file(&c, text), 0);
    assert_int_equal(c.profile, PROFILE_QUICK);
    assert_int_equal(c.serial_port, 0x2F8);
    assert_int_equal(c.baud, 57600);
    assert_int_equal(c.on_finish, FINISH_REBOOT);
    assert_string_equal(c.bench, "lat,bw,tlb_walk");
    assert_int_equal(c.max_bytes, 64ull << 20);
    assert_true(c.trace_msr);
    assert_string_equal(c.pmu_assume, "amd_fam10h");
    assert_string_equal(c.events, "INST_RETIRED.ANY,0x412e");
    assert_true(c.acpi_dump);
    assert_int_equal(c.max_cpus, 4096);
    assert_int_equal(c.seed, 0xdeadbeef12345678ull);
    assert_string_equal(c.serialize, "cpuid");
    assert_int_equal(c.time_budget_ms, 600000);
    assert_string_equal(c.crash_test, "nested");
    assert_int_equal(c.turbo, CFG_TURBO_OFF);
    assert_int_equal(c.sweep_top, 2ull << 30);
    assert_int_equal(c.samples, CFG_SAMPLES_NORMAL);
    assert_int_equal(c.set_mask, (1u << CFG_KEY_COUNT) - 1);

    char buf[1024];
    to_json(&c, buf, sizeof(buf));
    assert_string_equal(buf,
                        "{\"profile\":\"quick\",\"serial\":\"0x2f8\",\"baud\":57600,"
                        "\"on_finish\":\"reboot\",\"bench\":\"lat,bw,tlb_walk\","
                        "\"max_bytes\":67108864,\"trace_msr\":true,\"pmu_assume\":\"amd_fam10h\","
                        "\"events\":\"INST_RETIRED.ANY,0x412e\",\"acpi_dump\":true,"
                        "\"max_cpus\":4096,\"seed\":\"0xdeadbeef12345678\","
                        "\"serialize\":\"cpuid\",\"time_budget_ms\":600000,\"crash_test\":\"nested\","
                        "\"turbo\":\"off\",\"sweep_top\":2147483648,\"samples\":\"normal\"}");
}

/* The sections: everything from the first '[' line on is kept, unparsed, for their owners (bench/snippet_cfg.h);
 * the keys before it still count, lines after it are not keys even when they look like them. */
static void test_sections(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    assert_null(c.sections);
    const char *t = "profile=full\n# note\n  [snippet a]\ncode = 90\nprofile = quick\n";
    assert_int_equal(parse_file(&c, t), 0);
    assert_int_equal(c.profile, PROFILE_FULL);
    assert_non_null(c.sections);
    assert_int_equal(c.sections - t, strlen("profile=full\n# note\n"));
    assert_int_equal(c.sections_len, strlen(t) - (size_t)(c.sections - t));
    assert_int_equal(c.sections_line, 3);
    /* a section line longer than CFG_LINE_MAX is not the key parser's business */
    char big[600];
    memset(big, '9', sizeof(big));
    memcpy(big, "[snippet b]\ncode = ", 19);
    big[sizeof(big) - 1] = 0;
    config_defaults(&c);
    assert_int_equal(parse_file(&c, big), 0);
    assert_int_equal(c.sections_line, 1);
    /* a bad key before the sections is still an error */
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "bogus=1\n[snippet a]\n"), -1);
}

static void test_file_syntax(void **state)
{
    (void)state;
    struct config c;

    /* CRLF, CR-only, no final line end, BOM, blank and whitespace-only lines, tabs. */
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "\xEF\xBB\xBFprofile=full\r\n\r\n \t \r\nbaud\t=\t300\rmax_cpus=2"),
                     0);
    assert_int_equal(c.profile, PROFILE_FULL);
    assert_int_equal(c.baud, 300);
    assert_int_equal(c.max_cpus, 2);
    assert_int_equal(c.set_mask, CFG_SET(CFG_KEY_PROFILE) | CFG_SET(CFG_KEY_BAUD) |
                                     CFG_SET(CFG_KEY_MAX_CPUS));

    /* Comments: whole line, indented, after whitespace; a '#' glued to text is data. */
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "#profile=full\n   # baud=300\nevents = a#b # note\n"), 0);
    assert_int_equal(c.profile, PROFILE_AUTO);
    assert_int_equal(c.baud, 115200);
    assert_string_equal(c.events, "a#b");
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "events = \"x # y\" # the quotes keep the hash\n"), 0);
    assert_string_equal(c.events, "x # y");
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "events=#\n"), 0); /* '#' right after '=' is the value */
    assert_string_equal(c.events, "#");

    /* Duplicate key: the last one wins. Keys and words are case-insensitive. */
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "profile=quick\nPROFILE=Full\n"), 0);
    assert_int_equal(c.profile, PROFILE_FULL);

    /* Empty text and a file of comments change nothing. */
    struct config d;
    config_defaults(&c);
    d = c;
    assert_int_equal(config_parse_file(&c, "", 0, "pmubench.cfg", err, sizeof(err)), 0);
    assert_int_equal(parse_file(&c, "\n\n# only comments\n"), 0);
    assert_memory_equal(&c, &d, sizeof(c));

    /* events may be emptied again; quotes around an empty value. */
    assert_int_equal(parse_file(&c, "events = x\nevents = \"\"\n"), 0);
    assert_string_equal(c.events, "");
}

static void test_file_lines_limits(void **state)
{
    (void)state;
    struct config c;
    char text[600];

    /* 255 characters is the longest accepted line. */
    memset(text, ' ', sizeof(text));
    memcpy(text, "events=", 7);
    memset(text + 7, 'e', 248);
    text[255] = '\n';
    config_defaults(&c);
    assert_int_equal(config_parse_file(&c, text, 256, "pmubench.cfg", err, sizeof(err)), 0);
    assert_int_equal(strlen(c.events), 248);
    text[255] = 'e';
    text[256] = '\n';
    file_error(text, 257, "pmubench.cfg:1: line too long (256 characters, at most 255)");
    /* ...also on a later line and without a line end. */
    memmove(text + 2, text, 256);
    text[0] = '#';
    text[1] = '\n';
    file_error(text, 258, "pmubench.cfg:2: line too long (256 characters, at most 255)");
    char huge[100000];
    memset(huge, 'a', sizeof(huge));
    file_error(huge, sizeof(huge), "pmubench.cfg:1: line too long (100000 characters, at most 255)");

    /* NUL bytes, with the line they are on. */
    file_error("profile=quick\nbaud=9600\0\n", 24, "pmubench.cfg:2: NUL byte in line (is this a text file?)");
    file_error("\0", 1, "pmubench.cfg:1: NUL byte in line (is this a text file?)");
    /* Line numbers count CRLF and CR line ends once each. */
    file_error_s("a=1", "pmubench.cfg:1: unknown key 'a'");
    file_error_s("\r\n\r\nbogus=1", "pmubench.cfg:3: unknown key 'bogus'");
    file_error_s("\r\r\rbogus=1", "pmubench.cfg:4: unknown key 'bogus'");
}

static void test_file_errors(void **state)
{
    (void)state;
    /* The messages the contract spells out. */
    file_error_s("profile=quick\n\nbnch=lat\n",
                 "pmubench.cfg:3: unknown key 'bnch' (did you mean 'bench'?)");
    file_error_s("\n\n\n\nbaud = 9600x\n",
                 "pmubench.cfg:5: bad value '9600x' for 'baud': expected a number of bits/s dividing 115200");

    file_error_s("profile\n", "pmubench.cfg:1: missing '=' in 'profile' (expected key = value)");
    file_error_s("= quick\n", "pmubench.cfg:1: empty key before '='");
    file_error_s("profile =\n", "pmubench.cfg:1: empty value for 'profile': expected auto|quick|full");
    file_error_s("profile = \"\"\n", "pmubench.cfg:1: empty value for 'profile': expected auto|quick|full");
    file_error_s("events = \"abc\n", "pmubench.cfg:1: unterminated quote in value for 'events'");
    file_error_s("events = \"\n", "pmubench.cfg:1: unterminated quote in value for 'events'");
    /* A bad line late in the file: nothing from the good lines before it is applied. */
    file_error_s("profile=quick\nmax_cpus=3\nmax_cpus=4097\n",
                 "pmubench.cfg:3: bad value '4097' for 'max_cpus': expected a number 0..4096");
}

static void test_did_you_mean(void **state)
{
    (void)state;
    file_error_s("sed=1", "pmubench.cfg:1: unknown key 'sed' (did you mean 'seed'?)");
    file_error_s("serialise=cpuid",
                 "pmubench.cfg:1: unknown key 'serialise' (did you mean 'serialize'?)");
    file_error_s("max_cpu=1", "pmubench.cfg:1: unknown key 'max_cpu' (did you mean 'max_cpus'?)");
    file_error_s("bnech=all", "pmubench.cfg:1: unknown key 'bnech' (did you mean 'bench'?)");
    file_error_s("onfinish=halt", "pmubench.cfg:1: unknown key 'onfinish' (did you mean 'on_finish'?)");
    file_error_s("Baud_=300", "pmubench.cfg:1: unknown key 'Baud_' (did you mean 'baud'?)");
    /* Nothing close: no guess. */
    file_error_s("xyz=1", "pmubench.cfg:1: unknown key 'xyz'");
    file_error_s("b=1", "pmubench.cfg:1: unknown key 'b'");
    file_error_s("completely_unrelated=1", "pmubench.cfg:1: unknown key 'completely_unrelated'");
}

/* ---- values ------------------------------------------------------------------------------- */

struct good {
    const char *line;
    size_t off, size;
    uint64_t want;
};

#define OFF(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)

static void test_numeric_values(void **state)
{
    (void)state;
    static const struct good cases[] = {
        {"serial=auto", OFF(serial_port), (uint64_t)(int64_t)-1},
        {"serial=none", OFF(serial_port), 0},
        {"serial=0", OFF(serial_port), 0},
        {"serial=COM1", OFF(serial_port), 0x3F8},
        {"serial=com2", OFF(serial_port), 0x2F8},
        {"serial=com3", OFF(serial_port), 0x3E8},
        {"serial=com4", OFF(serial_port), 0x2E8},
        {"serial=0x2e8", OFF(serial_port), 0x2E8},
        {"serial=760", OFF(serial_port), 760},
        {"serial=0xffff", OFF(serial_port), 0xffff},
        {"baud=115200", OFF(baud), 115200},
        {"baud=50", OFF(baud), 50},
        {"baud=75", OFF(baud), 75},
        {"baud=9600", OFF(baud), 9600},
        {"baud=38400", OFF(baud), 38400},
        {"max_bytes=0", OFF(max_bytes), 0},
        {"max_bytes=4096", OFF(max_bytes), 4096},
        {"max_bytes=0x1000", OFF(max_bytes), 4096},
        {"max_bytes=1k", OFF(max_bytes), 1024},
        {"max_bytes=1K", OFF(max_bytes), 1024},
        {"max_bytes=3KiB", OFF(max_bytes), 3072},
        {"max_bytes=2M", OFF(max_bytes), 2ull << 20},
        {"max_bytes=5MiB", OFF(max_bytes), 5ull << 20},
        {"max_bytes=1G", OFF(max_bytes), 1ull << 30},
        {"max_bytes=12 GiB", OFF(max_bytes), 12ull << 30},
        {"max_bytes=1T", OFF(max_bytes), 1ull << 40},
        {"max_bytes=16777215TiB", OFF(max_bytes), 16777215ull << 40},
        {"max_bytes=18446744073709551615", OFF(max_bytes), UINT64_MAX},
        {"sweep_top=0", OFF(sweep_top), 0},
        {"sweep_top=4K", OFF(sweep_top), 4096},
        {"sweep_top=256M", OFF(sweep_top), 256ull << 20},
        {"sweep_top=2 GiB", OFF(sweep_top), 2ull << 30},
        {"max_cpus=0", OFF(max_cpus), 0},
        {"max_cpus=0x10", OFF(max_cpus), 16},
        {"seed=0", OFF(seed), 0},
        {"seed=18446744073709551615", OFF(seed), UINT64_MAX},
        {"seed=0xffffffffffffffff", OFF(seed), UINT64_MAX},
        {"seed=0X00000000000000000000000001", OFF(seed), 1},
        {"time_budget_ms=0", OFF(time_budget_ms), 0},
        {"time_budget_ms=1500", OFF(time_budget_ms), 1500},
        {"trace_msr=1", OFF(trace_msr), 1},
        {"trace_msr=TRUE", OFF(trace_msr), 1},
        {"trace_msr=On", OFF(trace_msr), 1},
        {"acpi_dump=yes", OFF(acpi_dump), 1},
        {"acpi_dump=0", OFF(acpi_dump), 0},
        {"acpi_dump=false", OFF(acpi_dump), 0},
        {"acpi_dump=no", OFF(acpi_dump), 0},
        {"acpi_dump=off", OFF(acpi_dump), 0},
        {"on_finish=halt", OFF(on_finish), FINISH_HALT},
        {"on_finish=shutdown", OFF(on_finish), FINISH_SHUTDOWN},
        {"profile=auto", OFF(profile), PROFILE_AUTO},
        {"turbo=off", OFF(turbo), CFG_TURBO_OFF},
        {"turbo=OFF", OFF(turbo), CFG_TURBO_OFF},
        {"turbo=leave", OFF(turbo), CFG_TURBO_LEAVE},
        {"samples=auto", OFF(samples), CFG_SAMPLES_AUTO},
        {"samples=Minimal", OFF(samples), CFG_SAMPLES_MINIMAL},
        {"samples=NORMAL", OFF(samples), CFG_SAMPLES_NORMAL},
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct config c;
        config_defaults(&c);
        if (i % 2 == 0)
            c.trace_msr = c.acpi_dump = true; /* so "false" really has to clear them */
        if (parse_file(&c, cases[i].line) != 0)
            fail_msg("'%s' rejected: %s", cases[i].line, err);
        uint64_t got = 0;
        const char *f = (const char *)&c + cases[i].off;
        switch (cases[i].size) {
        case 1: got = *(const uint8_t *)f; break;
        case 4: got = *(const uint32_t *)f; break;
        default: got = *(const uint64_t *)f; break;
        }
        if (cases[i].size == 4 && cases[i].off == offsetof(struct config, serial_port))
            got = (uint64_t)(int64_t)c.serial_port;
        if (got != cases[i].want)
            fail_msg("'%s' gave %llu, expected %llu", cases[i].line, (unsigned long long)got,
                     (unsigned long long)cases[i].want);
    }
}

static void test_bad_values(void **state)
{
    (void)state;
    static const struct {
        const char *line, *msg;
    } cases[] = {
        {"profile=fast", "bad value 'fast' for 'profile': expected auto|quick|full"},
        {"turbo=on", "bad value 'on' for 'turbo': expected leave|off"},
        {"turbo=0", "bad value '0' for 'turbo': expected leave|off"},
        {"turbo=disable", "bad value 'disable' for 'turbo': expected leave|off"},
        {"samples=full", "bad value 'full' for 'samples': expected auto|minimal|normal"},
        {"samples=min", "bad value 'min' for 'samples': expected auto|minimal|normal"},
        {"profile=quick full", "bad value 'quick full' for 'profile': expected auto|quick|full"},
        {"serial=com5", "bad value 'com5' for 'serial': expected auto|none|com1..com4|0xNNN|port number"},
        {"serial=0x10000", "bad value '0x10000' for 'serial': expected an I/O port number 0..0xffff"},
        {"serial=-1", "bad value '-1' for 'serial': expected auto|none|com1..com4|0xNNN|port number"},
        {"serial=0x", "bad value '0x' for 'serial': expected auto|none|com1..com4|0xNNN|port number"},
        {"baud=115201", "bad value '115201' for 'baud': expected a number of bits/s dividing 115200"},
        {"baud=7", "bad value '7' for 'baud': expected a number of bits/s dividing 115200"},
        {"baud=0", "bad value '0' for 'baud': expected a number of bits/s dividing 115200"},
        {"baud=25", "bad value '25' for 'baud': expected a number of bits/s dividing 115200"},
        {"baud=230400", "bad value '230400' for 'baud': expected a number of bits/s dividing 115200"},
        {"baud=99999999999999999999999", "bad value '99999999999999999999999' for 'baud': expected a number of bits/s dividing 115200"},
        {"on_finish=poweroff", "bad value 'poweroff' for 'on_finish': expected shutdown|reboot|halt"},
        {"bench=,lat", "bad value ',lat' for 'bench': expected a comma-separated list of benchmark names [a-z0-9_]"},
        {"bench=lat,", "bad value 'lat,' for 'bench': expected a comma-separated list of benchmark names [a-z0-9_]"},
        {"bench=lat,,bw", "bad value 'lat,,bw' for 'bench': expected a comma-separated list of benchmark names [a-z0-9_]"},
        {"bench=la-t", "bad value 'la-t' for 'bench': expected a comma-separated list of benchmark names [a-z0-9_]"},
        {"bench=lat bw", "bad value 'lat bw' for 'bench': expected a comma-separated list of benchmark names [a-z0-9_]"},
        {"sweep_top=4095", "bad value '4095' for 'sweep_top': too small (0, or at least 4K: the smallest working set the sweep can end at)"},
        {"sweep_top=1K", "bad value '1K' for 'sweep_top': too small (0, or at least 4K: the smallest working set the sweep can end at)"},
        {"sweep_top=big", "bad value 'big' for 'sweep_top': expected 0 or a byte count of at least 4K, optionally with K M G T or KiB MiB GiB TiB"},
        {"max_bytes=10KB", "bad value '10KB' for 'max_bytes': expected a byte count, optionally with K M G T or KiB MiB GiB TiB"},
        {"max_bytes=10 Mi", "bad value '10 Mi' for 'max_bytes': expected a byte count, optionally with K M G T or KiB MiB GiB TiB"},
        {"max_bytes=5X", "bad value '5X' for 'max_bytes': expected a byte count, optionally with K M G T or KiB MiB GiB TiB"},
        {"max_bytes=K", "bad value 'K' for 'max_bytes': expected a byte count, optionally with K M G T or KiB MiB GiB TiB"},
        {"max_bytes=-1", "bad value '-1' for 'max_bytes': expected a byte count, optionally with K M G T or KiB MiB GiB TiB"},
        {"max_bytes=1.5G", "bad value '1.5G' for 'max_bytes': expected a byte count, optionally with K M G T or KiB MiB GiB TiB"},
        {"max_bytes=16777216T", "bad value '16777216T' for 'max_bytes': too large (at most 2^64-1 bytes)"},
        {"max_bytes=18446744073709551616", "bad value '18446744073709551616' for 'max_bytes': too large (at most 2^64-1 bytes)"},
        {"max_bytes=99999999999999999999K", "bad value '99999999999999999999K' for 'max_bytes': too large (at most 2^64-1 bytes)"},
        {"trace_msr=2", "bad value '2' for 'trace_msr': expected 0|1|true|false|yes|no|on|off"},
        {"trace_msr=maybe", "bad value 'maybe' for 'trace_msr': expected 0|1|true|false|yes|no|on|off"},
        {"pmu_assume=skl", "bad value 'skl' for 'pmu_assume': expected none|nhm|wsm|amd_fam10h|amd_fam15h|netburst"},
        {"max_cpus=4097", "bad value '4097' for 'max_cpus': expected a number 0..4096"},
        {"max_cpus=-0", "bad value '-0' for 'max_cpus': expected a number 0..4096"},
        {"max_cpus=1e3", "bad value '1e3' for 'max_cpus': expected a number 0..4096"},
        {"seed=18446744073709551616", "bad value '18446744073709551616' for 'seed': expected a decimal or 0x hex number below 2^64"},
        {"seed=0x1ffffffffffffffff", "bad value '0x1ffffffffffffffff' for 'seed': expected a decimal or 0x hex number below 2^64"},
        {"seed=0xg", "bad value '0xg' for 'seed': expected a decimal or 0x hex number below 2^64"},
        {"serialize=mfence", "bad value 'mfence' for 'serialize': expected lfence|cpuid"},
        {"time_budget_ms=600001", "bad value '600001' for 'time_budget_ms': expected a number 0..600000"},
        {"time_budget_ms=4294967296", "bad value '4294967296' for 'time_budget_ms': expected a number 0..600000"},
    };
    char want[300];
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        snprintf(want, sizeof(want), "pmubench.cfg:1: %s", cases[i].msg);
        file_error_s(cases[i].line, want);
        snprintf(want, sizeof(want), "load options: %s", cases[i].msg);
        char arg[300];
        /* The same value through the load options, quoted so blanks survive. */
        const char *eq = strchr(cases[i].line, '=');
        snprintf(arg, sizeof(arg), "%.*s=\"%s\"", (int)(eq - cases[i].line), cases[i].line, eq + 1);
        args_error(arg, want);
    }
}

static void test_text_values(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "bench = LAT , Bw_2,x\n"), 0);
    assert_string_equal(c.bench, "lat,bw_2,x");
    assert_int_equal(parse_file(&c, "pmu_assume = nhm\n"), 0);
    assert_string_equal(c.pmu_assume, "nhm");
    assert_int_equal(parse_file(&c, "pmu_assume = NetBurst\n"), 0);
    assert_string_equal(c.pmu_assume, "netburst");
    assert_int_equal(parse_file(&c, "pmu_assume = none\n"), 0);
    assert_string_equal(c.pmu_assume, "");

    /* bench holds 255 characters; events 511 (only the load options have room for that). */
    char arg[700];
    memcpy(arg, "bench=", 6);
    memset(arg + 6, 'b', 255);
    arg[261] = 0;
    assert_int_equal(parse_args(&c, arg), 0);
    assert_int_equal(strlen(c.bench), 255);
    arg[261] = 'b';
    arg[262] = 0;
    args_error(arg, "load options: bad value 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...' for 'bench': "
                    "list too long (at most 255 characters)");
    memcpy(arg, "events=", 7);
    memset(arg + 7, 'e', 511);
    arg[518] = 0;
    assert_int_equal(parse_args(&c, arg), 0);
    assert_int_equal(strlen(c.events), 511);
    arg[518] = 'e';
    arg[519] = 0;
    args_error(arg, "load options: bad value 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee...' for 'events': "
                    "too long (at most 511 characters)");
}

/* ---- load options ------------------------------------------------------------------------- */

static void test_args(void **state)
{
    (void)state;
    struct config c;

    config_defaults(&c);
    assert_int_equal(parse_args(&c, "fs0:\\EFI\\BOOT\\pmubench.efi profile=quick  bench=lat\tbaud=9600"), 0);
    assert_int_equal(c.profile, PROFILE_QUICK);
    assert_string_equal(c.bench, "lat");
    assert_int_equal(c.baud, 9600);

    /* No image path (a boot entry's optional data): the first token is an option. */
    config_defaults(&c);
    assert_int_equal(parse_args(&c, "on_finish=halt"), 0);
    assert_int_equal(c.on_finish, FINISH_HALT);

    /* Quotes keep blanks, anywhere in the token. */
    config_defaults(&c);
    assert_int_equal(parse_args(&c, "\"\\EFI\\my dir\\pmubench.efi\" events=\"a b  c\" "
                                    "bench=\"lat, bw\" pm\"u_assume=ws\"m"),
                     0);
    assert_string_equal(c.events, "a b  c");
    assert_string_equal(c.bench, "lat,bw");
    assert_string_equal(c.pmu_assume, "wsm");

    /* Nothing at all. */
    struct config d;
    config_defaults(&c);
    d = c;
    assert_int_equal(parse_args(&c, ""), 0);
    assert_int_equal(parse_args(&c, "   \t "), 0);
    assert_int_equal(parse_args(&c, NULL), 0);
    assert_int_equal(parse_args(&c, "pmubench.efi"), 0);
    assert_memory_equal(&c, &d, sizeof(c));

    args_error("pmubench.efi profile=quick stray", "load options: expected key=value, got 'stray'");
    args_error("profile=quick pmubench.efi", "load options: expected key=value, got 'pmubench.efi'");
    args_error("x.efi events=\"a b", "load options: unterminated quote in 'events=\"a b'");
    args_error("x.efi =quick", "load options: empty key in '=quick'");
    args_error("x.efi baud=", "load options: empty value for 'baud': expected a number of bits/s dividing 115200");
    args_error("x.efi profile=fast", "load options: bad value 'fast' for 'profile': expected auto|quick|full");
    args_error("x.efi bnch=lat", "load options: unknown key 'bnch' (did you mean 'bench'?)");
    /* A token too long for any value. */
    static char huge[5000];
    memcpy(huge, "events=", 7);
    memset(huge + 7, 'e', sizeof(huge) - 8);
    args_error(huge, "load options: option 'events=eeeeeeeeeeeeeeeeeeeeeeeeeeeeee...' too long (at most 639 characters)");
    huge[0] = '"';
    args_error(huge, "load options: unterminated quote in '\"vents=eeeeeeeeeeeeeeeeeeeeeeeeeeeeee...'");
}

static void test_precedence(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "profile = full\nbaud = 9600\nbench = lat\n"), 0);
    assert_int_equal(parse_args(&c, "pmubench.efi profile=quick seed=7"), 0);
    assert_int_equal(c.profile, PROFILE_QUICK); /* option beats file */
    assert_int_equal(c.baud, 9600);             /* file beats default */
    assert_string_equal(c.bench, "lat");
    assert_int_equal(c.seed, 7);
    assert_int_equal(c.on_finish, FINISH_SHUTDOWN); /* default stays */
    assert_int_equal(c.set_mask, CFG_SET(CFG_KEY_PROFILE) | CFG_SET(CFG_KEY_BAUD) |
                                     CFG_SET(CFG_KEY_BENCH) | CFG_SET(CFG_KEY_SEED));
    /* A bad option leaves the file's values in place. */
    assert_int_equal(parse_args(&c, "x.efi baud=300 profile=nope"), -1);
    assert_int_equal(c.baud, 9600);
    assert_int_equal(c.profile, PROFILE_QUICK);
}

/* ---- error reporting ---------------------------------------------------------------------- */

static void test_error_buffer(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    /* Truncated to the buffer, still terminated; NULL is allowed. */
    char small[12];
    memset(small, 'Z', sizeof(small));
    assert_int_equal(config_parse_file(&c, "bnch=1", 6, "pmubench.cfg", small, sizeof(small)), -1);
    assert_string_equal(small, "pmubench.cf");
    assert_int_equal(config_parse_file(&c, "bnch=1", 6, "pmubench.cfg", NULL, 0), -1);
    assert_int_equal(config_parse_args(&c, "a b", NULL, NULL, 0), -1);
    assert_int_equal(config_parse_file(&c, "x", 1, NULL, err, sizeof(err)), -1);
    assert_string_equal(err, "pmubench.cfg:1: missing '=' in 'x' (expected key = value)");
    /* Success clears a stale message. */
    assert_int_equal(parse_file(&c, "profile=quick"), 0);
    assert_string_equal(err, "");

    /* Control characters and long text in a message are defanged: it stays one short line. */
    file_error_s("profile=\x1b[31mred\x7f", "pmubench.cfg:1: bad value '?[31mred?' for 'profile': expected auto|quick|full");
    file_error_s("\x01k\xff" "ey=1", "pmubench.cfg:1: unknown key '?k?ey'");
}

/* Random garbage: never crashes, always one NUL-terminated line, failures change nothing. */
static void test_fuzz(void **state)
{
    (void)state;
    static const char *pieces[] = {"profile", "=", "quick", " ", "\"", "#", "\n", "\r", "\r\n",
                                   "baud", "9600", "0x", "K", "GiB", ",", "bench", "lat", "\t",
                                   "\xff", "\x01", "seed", "99999999999999999999", "events", "\0"};
    uint64_t s = 4242;
    for (int iter = 0; iter < 30000; iter++) {
        char text[400];
        size_t n = 0;
        int parts = 1 + (int)(s % 30);
        for (int k = 0; k < parts; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            const char *p = pieces[(s >> 40) % ARRAY_SIZE(pieces)];
            size_t pl = *p ? strlen(p) : 1;
            if (n + pl >= sizeof(text))
                break;
            memcpy(text + n, p, pl);
            n += pl;
        }
        text[n] = 0;
        struct config c, before;
        config_defaults(&c);
        before = c;
        memset(err, 'Z', sizeof(err));
        int rc = config_parse_file(&c, text, n, "f", err, sizeof(err));
        assert_true(rc == 0 || rc == -1);
        assert_non_null(memchr(err, 0, sizeof(err)));
        assert_null(strchr(err, '\n'));
        if (rc == -1) {
            assert_memory_equal(&c, &before, sizeof(c));
            assert_true(strlen(err) > 3);
        }
        rc = config_parse_args(&c, text, "o", err, sizeof(err));
        assert_true(rc == 0 || rc == -1);
        assert_null(strchr(err, '\n'));
        assert_true(c.bench[sizeof(c.bench) - 1] == 0 && c.events[sizeof(c.events) - 1] == 0);
    }
}

/* A value that parses but is refused later (bench= naming an unknown benchmark) is blamed on where it was set. */
/* samples=: auto is minimal exactly when emulated (QEMU TCG); minimal and normal hold whatever the machine, and each
 * choice says why (nothing for auto on a machine that is not emulated, the run record then has no why) */
static void test_minimal_samples_rule(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_true(config_minimal_samples(CFG_SAMPLES_AUTO, true, &why));
    assert_non_null(strstr(why, "auto: QEMU TCG"));
    assert_false(config_minimal_samples(CFG_SAMPLES_AUTO, false, &why));
    assert_string_equal(why, "");
    assert_true(config_minimal_samples(CFG_SAMPLES_MINIMAL, true, &why));
    assert_string_equal(why, "config: samples=minimal");
    assert_true(config_minimal_samples(CFG_SAMPLES_MINIMAL, false, &why));
    assert_string_equal(why, "config: samples=minimal");
    assert_false(config_minimal_samples(CFG_SAMPLES_NORMAL, true, &why));
    assert_non_null(strstr(why, "config: samples=normal under QEMU TCG"));
    assert_false(config_minimal_samples(CFG_SAMPLES_NORMAL, false, &why));
    assert_string_equal(why, "config: samples=normal");
}

static void test_blame_names_origin_and_line(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    assert_int_equal(parse_file(&c, "# lab\nprofile = quick\nbench = latency,frob\n"), 0);
    char e[320] = "bad value for 'bench': unknown benchmark 'frob'";
    assert_int_equal(config_blame(&c, CFG_KEY_BENCH, e, sizeof(e)), -1);
    assert_string_equal(e, "pmubench.cfg:3: bad value for 'bench': unknown benchmark 'frob'");
    /* the load options set it last: their origin, no line */
    assert_int_equal(parse_args(&c, "bench=frob"), 0);
    snprintf(e, sizeof(e), "unknown benchmark 'frob'");
    config_blame(&c, CFG_KEY_BENCH, e, sizeof(e));
    assert_string_equal(e, "load options: unknown benchmark 'frob'");
    /* never set: the defaults */
    snprintf(e, sizeof(e), "x");
    config_blame(&c, CFG_KEY_SEED, e, sizeof(e));
    assert_string_equal(e, "defaults: x");
    /* a failed parse leaves the earlier origin */
    assert_int_equal(parse_file(&c, "bench = a\nbogus = 1\n"), -1);
    snprintf(e, sizeof(e), "y");
    config_blame(&c, CFG_KEY_BENCH, e, sizeof(e));
    assert_string_equal(e, "load options: y");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_key_help),
        cmocka_unit_test(test_file_all_keys),
        cmocka_unit_test(test_file_syntax),
        cmocka_unit_test(test_file_lines_limits),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_numeric_values),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_text_values),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_sections),
        cmocka_unit_test(test_error_buffer),
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_blame_names_origin_and_line),
        cmocka_unit_test(test_minimal_samples_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
