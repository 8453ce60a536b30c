/* config.c - key table, value parsers and the two front ends (config file, load options). */
#include "kernel/config.h"
#include "kernel/fmt.h"

/* How a value is parsed and stored; each key's row in the table names one. */
enum cfg_kind {
    K_ENUM,   /* one word of `values`, stored as its index in an int-sized enum */
    K_WORD,   /* one word of `values`, stored as text ("none" stored as "") */
    K_SERIAL, /* auto|none|com1..com4|port number */
    K_BAUD,   /* divisor of 115200 */
    K_LIST,   /* comma-separated identifiers */
    K_SIZE,   /* byte count with binary suffix */
    K_BOOL,
    K_TEXT,   /* free text, may be empty */
    K_UINT,   /* number 0..max, decimal or 0x hex, stored in `size` bytes */
};

struct cfg_key {
    const char *name;
    enum cfg_kind kind;
    uint16_t off, size; /* field in struct config */
    uint64_t max;       /* K_UINT: the largest value; K_SIZE: the smallest one besides 0 (0: any) */
    const char *values; /* K_ENUM/K_WORD: the accepted words; others: what is expected */
    const char *def;    /* the default, as text the parser accepts (config_defaults parses it) */
    const char *help;
};

#define FIELD(f) (uint16_t)offsetof(struct config, f), (uint16_t)sizeof(((struct config *)0)->f)

static const struct cfg_key keys[CFG_KEY_COUNT] = {
    [CFG_KEY_PROFILE] = {"profile", K_ENUM, FIELD(profile), 0, "auto|quick|full", "auto",
                         "measurement effort: quick for a smoke run, full for every point"},
    [CFG_KEY_SERIAL] = {"serial", K_SERIAL, FIELD(serial_port), 0,
                        "auto|none|com1..com4|0xNNN|port number", "auto",
                        "serial port for output: auto uses the ACPI SPCR port, else COM1 (0x3F8)"},
    [CFG_KEY_BAUD] = {"baud", K_BAUD, FIELD(baud), 0, "a number of bits/s dividing 115200",
                      "115200", "serial line speed (8N1)"},
    [CFG_KEY_ON_FINISH] = {"on_finish", K_ENUM, FIELD(on_finish), 0, "shutdown|reboot|halt",
                           "shutdown", "what the machine does after the end record"},
    [CFG_KEY_BENCH] = {"bench", K_LIST, FIELD(bench), 0,
                       "a comma-separated list of benchmark names [a-z0-9_]", "all",
                       "benchmarks to run, in order; all runs every one"},
    [CFG_KEY_MAX_BYTES] = {"max_bytes", K_SIZE, FIELD(max_bytes), 0,
                           "a byte count, optionally with K M G T or KiB MiB GiB TiB", "0",
                           "largest working set any benchmark may use; 0 means no cap"},
    [CFG_KEY_TRACE_MSR] = {"trace_msr", K_BOOL, FIELD(trace_msr), 0,
                           "0|1|true|false|yes|no|on|off", "off",
                           "emit a record for every MSR write (debugging)"},
    [CFG_KEY_PMU_ASSUME] = {"pmu_assume", K_WORD, FIELD(pmu_assume), 0,
                            "none|nhm|wsm|amd_fam10h|amd_fam15h|netburst", "none",
                            "drive the PMU as this model regardless of CPUID (for emulators)"},
    [CFG_KEY_EVENTS] = {"events", K_TEXT, FIELD(events), 0, "text of at most 511 characters", "",
                        "extra PMU events to count, checked by the PMU code; empty for none"},
    [CFG_KEY_ACPI_DUMP] = {"acpi_dump", K_BOOL, FIELD(acpi_dump), 0,
                           "0|1|true|false|yes|no|on|off", "off",
                           "emit the raw ACPI tables as records"},
    [CFG_KEY_MAX_CPUS] = {"max_cpus", K_UINT, FIELD(max_cpus), 4096, "a number 0..4096", "0",
                          "CPUs to bring up, the boot CPU included; 0 means all"},
    [CFG_KEY_SEED] = {"seed", K_UINT, FIELD(seed), UINT64_MAX,
                      "a decimal or 0x hex number below 2^64", "0x9e3779b97f4a7c15",
                      "seed for the random pointer chains, so runs are reproducible"},
    [CFG_KEY_SERIALIZE] = {"serialize", K_WORD, FIELD(serialize), 0, "lfence|cpuid", "lfence",
                           "instruction that fences rdtsc/rdpmc around measured code"},
    [CFG_KEY_TIME_BUDGET_MS] = {"time_budget_ms", K_UINT, FIELD(time_budget_ms), 600000,
                                "a number 0..600000", "0",
                                "time per measured point in ms; 0 takes the profile's default"},
    [CFG_KEY_CRASH_TEST] = {"crash_test", K_WORD, FIELD(crash_test), 0, "none|ud|gp|pf|nested|ap_ud|ap_hang", "none",
                            "fault on purpose after the machine description, to test crash reports"},
    [CFG_KEY_TURBO] = {"turbo", K_ENUM, FIELD(turbo), 0, "leave|off", "leave",
                       "turbo as the firmware left it, or off on every CPU for steady clocks"},
    [CFG_KEY_SWEEP_TOP] = {"sweep_top", K_SIZE, FIELD(sweep_top), 4096,
                           "0 or a byte count of at least 4K, optionally with K M G T or KiB MiB GiB TiB", "0",
                           "largest working set of the latency sweep (lat_mem_rd's size); 0 means 4x the LLC"},
    [CFG_KEY_SAMPLES] = {"samples", K_ENUM, FIELD(samples), 0, "auto|minimal|normal", "auto",
                         "minimal: every benchmark takes its minimum samples; auto: minimal under QEMU TCG only"},
};

_Static_assert(CFG_KEY_COUNT <= 32, "set_mask has one bit per key");
_Static_assert(sizeof(enum cfg_profile) == sizeof(int) && sizeof(enum cfg_finish) == sizeof(int) &&
                   sizeof(enum cfg_turbo) == sizeof(int) && sizeof(enum cfg_samples) == sizeof(int),
               "K_ENUM stores an int");

/* ---- small text helpers ------------------------------------------------------------------- */

static bool word_eq(const char *a, size_t na, const char *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (kl_tolower((unsigned char)a[i]) != kl_tolower((unsigned char)b[i]))
            return false;
    return true;
}

/* Index of v in "w0|w1|...", or -1. */
static int word_index(const char *words, const char *v, size_t n)
{
    for (int i = 0; *words; i++) {
        size_t wl = 0;
        while (words[wl] && words[wl] != '|')
            wl++;
        if (word_eq(words, wl, v, n))
            return i;
        words += wl;
        if (*words == '|')
            words++;
    }
    return -1;
}

/* The i-th word of "w0|w1|..." into out. */
static void word_at(const char *words, int i, char *out, size_t cap)
{
    for (; i > 0 && *words; words++)
        if (*words == '|')
            i--;
    size_t n = 0;
    while (words[n] && words[n] != '|' && n + 1 < cap) {
        out[n] = words[n];
        n++;
    }
    out[n] = '\0';
}

static void trim(const char **s, size_t *n)
{
    while (*n && kl_isspace((unsigned char)**s))
        (*s)++, (*n)--;
    while (*n && kl_isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* Digits of a decimal or 0x-hex number; false when there are none or it exceeds 2^64-1. */
static bool parse_number(const char *s, size_t n, size_t *used, uint64_t *out)
{
    size_t i = 0;
    unsigned base = 10;
    uint64_t v = 0;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    }
    size_t start = i;
    for (; i < n; i++) {
        int c = kl_tolower((unsigned char)s[i]), d;
        if (kl_isdigit(c))
            d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            return false;
        v = v * base + (uint64_t)d;
    }
    if (i == start)
        return false;
    *used = i;
    *out = v;
    return true;
}

static bool parse_whole_number(const char *s, size_t n, uint64_t *out)
{
    size_t used;
    return parse_number(s, n, &used, out) && used == n;
}

/* ---- value parsers: NULL on success, else the reason (NULL reason text = the key's values) --- */

static const char *const EXPECTED = "";

static void store_text(struct config *c, const struct cfg_key *k, const char *v, size_t n)
{
    char *dst = (char *)c + k->off;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static const char *set_value(struct config *c, const struct cfg_key *k, const char *v, size_t n)
{
    void *field = (char *)c + k->off;
    uint64_t num;

    switch (k->kind) {
    case K_ENUM: {
        int i = word_index(k->values, v, n);
        if (i < 0)
            return EXPECTED;
        *(int *)field = i;
        return NULL;
    }
    case K_WORD: {
        int i = word_index(k->values, v, n);
        if (i < 0)
            return EXPECTED;
        char w[32];
        word_at(k->values, i, w, sizeof(w));
        if (strcmp(w, "none") == 0)
            w[0] = '\0';
        if (strlen(w) >= k->size)
            return EXPECTED; /* cannot happen with the table as written */
        store_text(c, k, w, strlen(w));
        return NULL;
    }
    case K_SERIAL: {
        /* PC COM port bases, as every BIOS since the IBM PC/AT assigns them. */
        static const int com[4] = {0x3F8, 0x2F8, 0x3E8, 0x2E8};
        if (word_eq(v, n, "auto", 4)) {
            *(int *)field = CFG_SERIAL_AUTO;
        } else if (word_eq(v, n, "none", 4)) {
            *(int *)field = CFG_SERIAL_NONE;
        } else if (n == 4 && word_eq(v, 3, "com", 3) && v[3] >= '1' && v[3] <= '4') {
            *(int *)field = com[v[3] - '1'];
        } else if (parse_whole_number(v, n, &num)) {
            if (num > 0xFFFF)
                return "expected an I/O port number 0..0xffff";
            *(int *)field = (int)num;
        } else {
            return EXPECTED;
        }
        return NULL;
    }
    case K_BAUD:
        /* The 16550 divisor latch divides a 115200 baud base clock. */
        if (!parse_whole_number(v, n, &num) || num < 50 || num > 115200 || 115200 % num)
            return EXPECTED;
        *(uint32_t *)field = (uint32_t)num;
        return NULL;
    case K_LIST: {
        char out[sizeof(c->bench)];
        size_t len = 0, i = 0;
        for (;;) {
            while (i < n && kl_isspace((unsigned char)v[i]))
                i++;
            size_t item = 0;
            while (i < n && v[i] != ',' && !kl_isspace((unsigned char)v[i])) {
                int ch = kl_tolower((unsigned char)v[i]);
                if (!((ch >= 'a' && ch <= 'z') || kl_isdigit(ch) || ch == '_'))
                    return EXPECTED;
                if (len + 1 >= sizeof(out))
                    return "list too long (at most 255 characters)";
                out[len++] = (char)ch;
                item++;
                i++;
            }
            while (i < n && kl_isspace((unsigned char)v[i]))
                i++;
            if (item == 0)
                return EXPECTED; /* empty item: ",," or a leading/trailing comma */
            if (i == n)
                break;
            if (v[i] != ',')
                return EXPECTED; /* two names separated by blanks only */
            i++;
            if (len + 1 >= sizeof(out))
                return "list too long (at most 255 characters)";
            out[len++] = ',';
        }
        store_text(c, k, out, len);
        return NULL;
    }
    case K_SIZE: {
        static const struct {
            const char *s;
            unsigned shift;
        } suffix[] = {{"", 0},   {"k", 10},   {"K", 10},   {"KiB", 10}, {"M", 20},
                      {"MiB", 20}, {"G", 30}, {"GiB", 30}, {"T", 40},  {"TiB", 40}};
        size_t used;
        if (!parse_number(v, n, &used, &num)) {
            if (n && kl_isdigit((unsigned char)v[0]))
                return "too large (at most 2^64-1 bytes)";
            return EXPECTED;
        }
        const char *s = v + used;
        size_t sn = n - used;
        trim(&s, &sn);
        for (size_t i = 0; i < ARRAY_SIZE(suffix); i++) {
            if (sn == strlen(suffix[i].s) && memcmp(s, suffix[i].s, sn) == 0) {
                if (num > (UINT64_MAX >> suffix[i].shift))
                    return "too large (at most 2^64-1 bytes)";
                if (num && k->max && (num << suffix[i].shift) < k->max)
                    return "too small (0, or at least 4K: the smallest working set the sweep can end at)";
                *(uint64_t *)field = num << suffix[i].shift;
                return NULL;
            }
        }
        return EXPECTED;
    }
    case K_BOOL: {
        int i = word_index("0|1|false|true|no|yes|off|on", v, n);
        if (i < 0)
            return EXPECTED;
        *(bool *)field = i & 1;
        return NULL;
    }
    case K_TEXT:
        if (n >= k->size)
            return "too long (at most 511 characters)";
        store_text(c, k, v, n);
        return NULL;
    case K_UINT:
        if (!parse_whole_number(v, n, &num) || num > k->max)
            return EXPECTED;
        if (k->size == sizeof(uint64_t))
            *(uint64_t *)field = num;
        else
            *(uint32_t *)field = (uint32_t)num;
        return NULL;
    }
    return EXPECTED;
}

/* ---- errors ------------------------------------------------------------------------------- */

/* Where an error is reported: "<origin>:<line>: " (line 0: "<origin>: "). */
struct where {
    const char *origin;
    unsigned line;
    char *err;
    size_t errlen;
};

struct cfg_quoted config_quote(const char *s, size_t n)
{
    struct cfg_quoted q;
    size_t i, m = n > 40 ? 37 : n;
    for (i = 0; i < m; i++) {
        unsigned char ch = (unsigned char)s[i];
        q.s[i] = (ch < 0x20 || ch >= 0x7f) ? '?' : (char)ch;
    }
    if (m < n) {
        memcpy(q.s + i, "...", 3);
        i += 3;
    }
    q.s[i] = '\0';
    return q;
}

int config_verror(const char *origin, unsigned line, char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (!err || !errlen)
        return -1;
    origin = origin ? origin : "config";
    int n = line ? fmt_snprintf(err, errlen, "%s:%u: ", origin, line) : fmt_snprintf(err, errlen, "%s: ", origin);
    if (n >= 0 && (size_t)n < errlen)
        fmt_vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    return -1;
}

static int fail(const struct where *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const struct where *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    config_verror(w->origin, w->line, w->err, w->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Optimal string alignment distance (Levenshtein plus adjacent swaps), case-insensitive. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t d[3][33]; /* rows i-2, i-1, i; nb <= 32 */
    for (size_t j = 0; j <= nb; j++)
        d[1][j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t *cur = d[(i + 1) % 3], *prev = d[i % 3], *pp = d[(i + 2) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            int ca = kl_tolower((unsigned char)a[i - 1]), cb = kl_tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ca != cb);
            best = MIN(best, prev[j] + 1);
            best = MIN(best, cur[j - 1] + 1);
            if (i > 1 && j > 1 && ca == kl_tolower((unsigned char)b[j - 2]) &&
                kl_tolower((unsigned char)a[i - 2]) == cb)
                best = MIN(best, pp[j - 2] + 1);
            cur[j] = best;
        }
    }
    return d[(na + 1) % 3][nb];
}

static const struct cfg_key *find_key(const char *k, size_t n)
{
    for (size_t i = 0; i < CFG_KEY_COUNT; i++)
        if (word_eq(keys[i].name, strlen(keys[i].name), k, n))
            return &keys[i];
    return NULL;
}

static int unknown_key(const struct where *w, const char *k, size_t n)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    if (n <= 32) {
        for (size_t i = 0; i < CFG_KEY_COUNT; i++) {
            size_t d = edit_distance(k, n, keys[i].name, strlen(keys[i].name));
            if (d < best_d) {
                best_d = d;
                best = keys[i].name;
            }
        }
    }
    /* Suggest only close matches: 1 edit for short names, 2 for longer ones. */
    if (best && best_d <= (strlen(best) >= 5 ? 2u : 1u) && best_d < n)
        return fail(w, "unknown key '%s' (did you mean '%s'?)", config_quote(k, n).s, best);
    return fail(w, "unknown key '%s'", config_quote(k, n).s);
}

/* Applies one key/value pair, both already trimmed and unquoted. */
static int apply(struct config *c, const struct where *w, const char *k, size_t kn, const char *v,
                 size_t vn)
{
    const struct cfg_key *key = find_key(k, kn);
    if (!key)
        return unknown_key(w, k, kn);
    if (vn == 0 && key->kind != K_TEXT)
        return fail(w, "empty value for '%s': expected %s", key->name, key->values);
    const char *why = set_value(c, key, v, vn);
    if (why == EXPECTED)
        return fail(w, "bad value '%s' for '%s': expected %s", config_quote(v, vn).s, key->name,
                    key->values);
    if (why)
        return fail(w, "bad value '%s' for '%s': %s", config_quote(v, vn).s, key->name, why);
    c->set_mask |= CFG_SET(key - keys);
    c->key_origin[key - keys] = w->origin;
    c->key_line[key - keys] = w->line;
    return 0;
}

int config_blame(const struct config *c, enum cfg_key_id id, char *err, size_t errlen)
{
    char msg[320];
    if (!err || !errlen || (unsigned)id >= CFG_KEY_COUNT)
        return -1;
    fmt_snprintf(msg, sizeof(msg), "%s", err);
    const char *origin = c->key_origin[id] ? c->key_origin[id] : "defaults";
    if (c->key_line[id])
        fmt_snprintf(err, errlen, "%s:%u: %s", origin, c->key_line[id], msg);
    else
        fmt_snprintf(err, errlen, "%s: %s", origin, msg);
    return -1;
}

/* ---- front ends --------------------------------------------------------------------------- */

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < CFG_KEY_COUNT; i++)
        set_value(c, &keys[i], keys[i].def, strlen(keys[i].def));
    c->set_mask = 0;
}

/* One config file line (no line end): comment, blank, or key = value. */
static int parse_line(struct config *c, const struct where *w, const char *s, size_t n)
{
    /* '#' starts a comment at the start of the line or after a blank, outside quotes. */
    bool in_quote = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            in_quote = !in_quote;
        else if (s[i] == '#' && !in_quote && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
            n = i;
            break;
        }
    }
    trim(&s, &n);
    if (n == 0)
        return 0;
    const char *eq = NULL;
    for (size_t i = 0; i < n && !eq; i++)
        if (s[i] == '=')
            eq = s + i;
    if (!eq)
        return fail(w, "missing '=' in '%s' (expected key = value)", config_quote(s, n).s);
    const char *k = s, *v = eq + 1;
    size_t kn = (size_t)(eq - s), vn = n - kn - 1;
    trim(&k, &kn);
    trim(&v, &vn);
    if (kn == 0)
        return fail(w, "empty key before '='");
    if (vn && v[0] == '"') {
        if (vn < 2 || v[vn - 1] != '"')
            return fail(w, "unterminated quote in value for '%s'", config_quote(k, kn).s);
        v++;
        vn -= 2;
    }
    return apply(c, w, k, kn, v, vn);
}

int config_parse_file(struct config *c, const char *text, size_t len, const char *origin, char *err,
                      size_t errlen)
{
    struct config tmp = *c; /* all or nothing: *c changes only if the whole file is good */
    struct where w = {origin ? origin : "pmubench.cfg", 1, err, errlen};
    size_t i = 0;
    if (err && errlen)
        err[0] = '\0';
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        i = 3; /* UTF-8 byte order mark, as Windows editors write it */
    while (i < len) {
        size_t start = i;
        while (i < len && text[i] != '\n' && text[i] != '\r') {
            if (text[i] == '\0')
                return fail(&w, "NUL byte in line (is this a text file?)");
            i++;
        }
        size_t n = i - start;
        if (n > CFG_LINE_MAX)
            return fail(&w, "line too long (%zu characters, at most %d)", n, CFG_LINE_MAX);
        const char *first = text + start;
        size_t fn = n;
        trim(&first, &fn);
        if (fn && first[0] == '[') {
            /* The sections: everything from here on belongs to their parsers (config.h). */
            tmp.sections = text + start;
            tmp.sections_len = len - start;
            tmp.sections_line = w.line;
            break;
        }
        if (parse_line(&tmp, &w, text + start, n) < 0)
            return -1;
        if (i < len && text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
            i++;
        if (i < len)
            i++;
        w.line++;
    }
    *c = tmp;
    return 0;
}

#define CFG_TOKEN_MAX 640 /* longest load option token: a key and a 511-character events value */

int config_parse_args(struct config *c, const char *args, const char *origin, char *err,
                      size_t errlen)
{
    struct config tmp = *c;
    struct where w = {origin ? origin : "load options", 0, err, errlen};
    char tok[CFG_TOKEN_MAX];
    bool first = true;
    if (err && errlen)
        err[0] = '\0';
    if (!args)
        return 0;
    const char *p = args;
    for (;;) {
        while (kl_isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *start = p;
        size_t n = 0;
        bool in_quote = false, too_long = false;
        for (; *p && (in_quote || !kl_isspace((unsigned char)*p)); p++) {
            if (*p == '"') {
                in_quote = !in_quote;
                continue;
            }
            if (n + 1 < sizeof(tok))
                tok[n++] = *p;
            else
                too_long = true;
        }
        if (in_quote)
            return fail(&w, "unterminated quote in '%s'", config_quote(start, (size_t)(p - start)).s);
        if (too_long)
            return fail(&w, "option '%s' too long (at most %d characters)",
                        config_quote(start, (size_t)(p - start)).s, CFG_TOKEN_MAX - 1);
        tok[n] = '\0';
        const char *eq = strchr(tok, '=');
        if (!eq) {
            if (first) { /* the image path the UEFI shell puts first */
                first = false;
                continue;
            }
            return fail(&w, "expected key=value, got '%s'", config_quote(tok, n).s);
        }
        first = false;
        const char *k = tok, *v = eq + 1;
        size_t kn = (size_t)(eq - tok), vn = n - kn - 1;
        trim(&k, &kn);
        trim(&v, &vn);
        if (kn == 0)
            return fail(&w, "empty key in '%s'", config_quote(tok, n).s);
        if (apply(&tmp, &w, k, kn, v, vn) < 0)
            return -1;
    }
    *c = tmp;
    return 0;
}

/* ---- output ------------------------------------------------------------------------------- */

bool config_minimal_samples(enum cfg_samples samples, bool emulated, const char **why)
{
    switch (samples) {
    case CFG_SAMPLES_MINIMAL:
        *why = "config: samples=minimal";
        return true;
    case CFG_SAMPLES_NORMAL:
        *why = emulated ? "config: samples=normal under QEMU TCG (every sample taken; emulated timing means nothing)"
                        : "config: samples=normal";
        return false;
    case CFG_SAMPLES_AUTO:
    default:
        *why = emulated ? "auto: QEMU TCG (hypervisor CPUID leaf): emulated timing means nothing" : "";
        return emulated;
    }
}

void config_to_json(const struct config *c, struct json *j)
{
    json_obj_begin(j);
    for (size_t i = 0; i < CFG_KEY_COUNT; i++) {
        const struct cfg_key *k = &keys[i];
        const void *field = (const char *)c + k->off;
        char w[32];
        json_key(j, k->name);
        switch (k->kind) {
        case K_ENUM:
            word_at(k->values, *(const int *)field, w, sizeof(w));
            json_str(j, w);
            break;
        case K_WORD:
            json_str(j, *(const char *)field ? (const char *)field : "none");
            break;
        case K_SERIAL: {
            int port = *(const int *)field;
            if (port == CFG_SERIAL_AUTO)
                json_str(j, "auto");
            else if (port == CFG_SERIAL_NONE)
                json_str(j, "none");
            else
                json_hex(j, (uint64_t)(unsigned)port);
            break;
        }
        case K_BAUD:
            json_uint(j, *(const uint32_t *)field);
            break;
        case K_LIST:
        case K_TEXT:
            json_str(j, (const char *)field);
            break;
        case K_SIZE:
            json_uint(j, *(const uint64_t *)field);
            break;
        case K_BOOL:
            json_bool(j, *(const bool *)field);
            break;
        case K_UINT:
            /* 64-bit values as hex strings: JSON readers with double numbers would round them. */
            if (k->size == sizeof(uint64_t))
                json_hex(j, *(const uint64_t *)field);
            else
                json_uint(j, *(const uint32_t *)field);
            break;
        }
    }
    json_obj_end(j);
}

const char *config_key_help(size_t i, const char **name, const char **values)
{
    if (i >= CFG_KEY_COUNT)
        return NULL;
    if (name)
        *name = keys[i].name;
    if (values)
        *values = keys[i].values;
    return keys[i].help;
}

const char *config_key_default(size_t i)
{
    return i < CFG_KEY_COUNT ? keys[i].def : NULL;
}
