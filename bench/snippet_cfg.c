/* snippet_cfg.c - parser of the [snippet NAME] sections: strict, one-line errors naming the line, nothing half-parsed. */
#include "bench/snippet_cfg.h"
#include "kernel/config.h"
#include "kernel/fmt.h"

struct where {
    const char *origin;
    unsigned line;
    char *err;
    size_t errlen;
};

static int fail(const struct where *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const struct where *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    config_verror(w->origin, w->line, w->err, w->errlen, fmt, ap);
    va_end(ap);
    return -1;
}


static bool blank(char c) { return c == ' ' || c == '\t'; }

static void trim(const char **s, size_t *n)
{
    while (*n && blank(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && blank((*s)[*n - 1]))
        (*n)--;
}

static bool eq(const char *s, size_t n, const char *word) { return strlen(word) == n && !memcmp(s, word, n); }

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Appends the hex bytes of v to buf (at *len, at most cap). Blanks may separate bytes, never split one. */
static int parse_hex(const struct where *w, const char *key, const char *v, size_t n, uint8_t *buf, size_t *len,
                     size_t cap)
{
    size_t i = 0, got = 0;
    while (i < n) {
        if (blank(v[i])) {
            i++;
            continue;
        }
        int hi = hexval(v[i]);
        if (hi < 0)
            return fail(w, "%s: '%c' at column %zu is not a hex digit (machine code as hex bytes, e.g. 48 01 c0)", key,
                        (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?', i + 1);
        if (i + 1 < n && !blank(v[i + 1]) && hexval(v[i + 1]) < 0)
            return fail(w, "%s: '%c' at column %zu is not a hex digit (machine code as hex bytes, e.g. 48 01 c0)", key,
                        (v[i + 1] >= 0x20 && v[i + 1] < 0x7f) ? v[i + 1] : '?', i + 2);
        if (i + 1 >= n || hexval(v[i + 1]) < 0)
            return fail(w, "%s: odd number of hex digits at column %zu (every byte is two digits)", key, i + 1);
        if (*len >= cap)
            return fail(w, "%s: more than %zu bytes", key, cap);
        buf[(*len)++] = (uint8_t)(hi << 4 | hexval(v[i + 1]));
        got++;
        i += 2;
    }
    if (!got)
        return fail(w, "%s: no bytes (machine code as hex bytes, e.g. 48 01 c0)", key);
    return 0;
}

static int parse_uint(const struct where *w, const char *key, const char *v, size_t n, uint64_t lo, uint64_t hi,
                      uint32_t *out)
{
    uint64_t x = 0;
    if (!n)
        return fail(w, "%s: empty value (expected a number %llu..%llu)", key, (unsigned long long)lo,
                    (unsigned long long)hi);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return fail(w, "%s: '%s' is not a decimal number", key, config_quote(v, n).s);
        x = x * 10 + (uint64_t)(v[i] - '0');
        if (x > hi)
            return fail(w, "%s: %s is out of range %llu..%llu", key, config_quote(v, n).s, (unsigned long long)lo,
                        (unsigned long long)hi);
    }
    if (x < lo)
        return fail(w, "%s: %s is out of range %llu..%llu", key, config_quote(v, n).s, (unsigned long long)lo,
                    (unsigned long long)hi);
    *out = (uint32_t)x;
    return 0;
}

static int parse_events(const struct where *w, struct snippet *s, const char *v, size_t n)
{
    s->n_events = 0;
    size_t i = 0;
    while (i <= n && n) {
        size_t j = i;
        while (j < n && v[j] != ',')
            j++;
        const char *e = v + i;
        size_t en = j - i;
        trim(&e, &en);
        if (!en)
            return fail(w, "events: empty event name in the list");
        for (size_t k = 0; k < en; k++)
            if (e[k] <= 0x20 || e[k] >= 0x7f || e[k] == '"')
                return fail(w, "events: '%s' has a character not allowed in an event specifier", config_quote(e, en).s);
        if (en >= SNIPPET_EVENT_LEN)
            return fail(w, "events: '%s' is longer than %d characters", config_quote(e, en).s, SNIPPET_EVENT_LEN - 1);
        if (s->n_events >= SNIPPET_EVENTS_MAX)
            return fail(w, "events: more than %d events", SNIPPET_EVENTS_MAX);
        memcpy(s->events[s->n_events], e, en);
        s->events[s->n_events][en] = '\0';
        s->n_events++;
        i = j + 1;
    }
    return 0;
}

static void snippet_defaults(struct snippet *s)
{
    memset(s, 0, sizeof(*s));
    s->unroll = 100;
    s->warmup = 5;
    s->differencing = true;
    s->aggregate = SNIPPET_AGG_MEDIAN;
    s->timeout_ms = 5000;
}

static int set_key(const struct where *w, struct snippet *s, const char *k, size_t kn, const char *v, size_t vn)
{
    if (eq(k, kn, "code"))
        return parse_hex(w, "code", v, vn, s->code, &s->code_len, SNIPPET_CODE_MAX);
    if (eq(k, kn, "init"))
        return parse_hex(w, "init", v, vn, s->init, &s->init_len, SNIPPET_INIT_MAX);
    if (eq(k, kn, "unroll"))
        return parse_uint(w, "unroll", v, vn, 1, SNIPPET_UNROLL_MAX, &s->unroll);
    if (eq(k, kn, "loop"))
        return parse_uint(w, "loop", v, vn, 0, SNIPPET_LOOP_MAX, &s->loop);
    if (eq(k, kn, "warmup"))
        return parse_uint(w, "warmup", v, vn, 0, SNIPPET_WARMUP_MAX, &s->warmup);
    if (eq(k, kn, "timeout_ms"))
        return parse_uint(w, "timeout_ms", v, vn, 1, SNIPPET_TIMEOUT_MAX_MS, &s->timeout_ms);
    if (eq(k, kn, "events"))
        return parse_events(w, s, v, vn);
    if (eq(k, kn, "differencing")) {
        if (eq(v, vn, "on") || eq(v, vn, "1") || eq(v, vn, "true") || eq(v, vn, "yes"))
            s->differencing = true;
        else if (eq(v, vn, "off") || eq(v, vn, "0") || eq(v, vn, "false") || eq(v, vn, "no"))
            s->differencing = false;
        else
            return fail(w, "differencing: '%s' is not on|off", config_quote(v, vn).s);
        return 0;
    }
    if (eq(k, kn, "aggregate")) {
        if (eq(v, vn, "median"))
            s->aggregate = SNIPPET_AGG_MEDIAN;
        else if (eq(v, vn, "min"))
            s->aggregate = SNIPPET_AGG_MIN;
        else
            return fail(w, "aggregate: '%s' is not median|min", config_quote(v, vn).s);
        return 0;
    }
    return fail(w, "unknown snippet key '%s' (code, init, unroll, loop, warmup, events, differencing, aggregate, "
                   "timeout_ms)",
                config_quote(k, kn).s);
}

/* A finished section: code given, the generated variants within bounds. */
static int check_snippet(const struct where *w, const struct snippet *s)
{
    struct where at = *w;
    at.line = s->line;
    if (!s->code_len)
        return fail(&at, "snippet '%s' has no code = line", s->name);
    /* The 2n variant holds 2 x unroll copies (bench/snippet_gen.h). */
    if ((uint64_t)s->code_len * s->unroll * 2 + s->init_len > SNIPPET_GEN_MAX)
        return fail(&at, "snippet '%s': %zu code bytes x unroll %u x 2 exceeds %u bytes of generated code", s->name,
                    s->code_len, s->unroll, SNIPPET_GEN_MAX);
    return 0;
}

int snippet_cfg_parse(struct snippet_set *out, const char *text, size_t len, unsigned line, const char *origin,
                      char *err, size_t errlen)
{
    static struct snippet_set tmp; /* ~80 KiB: not on a kernel stack */
    struct where w = {origin ? origin : "pmubench.cfg", line ? line : 1, err, errlen};
    struct snippet *cur = NULL;
    if (err && errlen)
        err[0] = '\0';
    memset(&tmp, 0, sizeof(tmp));
    out->n = 0;
    size_t i = 0;
    while (text && i < len) {
        size_t start = i;
        while (i < len && text[i] != '\n' && text[i] != '\r') {
            if (text[i] == '\0')
                return fail(&w, "NUL byte in line (is this a text file?)");
            i++;
        }
        const char *s = text + start;
        size_t n = i - start;
        if (i < len && text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
            i++;
        if (i < len)
            i++;
        /* '#' comments: at the start or after a blank. */
        for (size_t k = 0; k < n; k++)
            if (s[k] == '#' && (k == 0 || blank(s[k - 1]))) {
                n = k;
                break;
            }
        trim(&s, &n);
        if (n == 0) {
            w.line++;
            continue;
        }
        if (s[0] == '[') {
            if (cur && check_snippet(&w, cur) < 0)
                return -1;
            if (s[n - 1] != ']')
                return fail(&w, "section header '%s' has no closing ']'", config_quote(s, n).s);
            const char *h = s + 1;
            size_t hn = n - 2;
            trim(&h, &hn);
            size_t kw = 0;
            while (kw < hn && !blank(h[kw]))
                kw++;
            if (!eq(h, kw, "snippet"))
                return fail(&w, "unknown section '[%s]' (expected [snippet NAME])", config_quote(h, hn).s);
            const char *nm = h + kw;
            size_t nn = hn - kw;
            trim(&nm, &nn);
            if (!nn)
                return fail(&w, "[snippet] needs a name: [snippet NAME], NAME of [a-z0-9_]");
            if (nn > SNIPPET_NAME_MAX)
                return fail(&w, "snippet name '%s' is longer than %d characters", config_quote(nm, nn).s, SNIPPET_NAME_MAX);
            for (size_t k = 0; k < nn; k++)
                if (!((nm[k] >= 'a' && nm[k] <= 'z') || (nm[k] >= '0' && nm[k] <= '9') || nm[k] == '_'))
                    return fail(&w, "snippet name '%s': only a-z, 0-9 and _ are allowed", config_quote(nm, nn).s);
            for (size_t k = 0; k < tmp.n; k++)
                if (eq(nm, nn, tmp.s[k].name))
                    return fail(&w, "snippet '%s' is defined twice (first on line %u)", tmp.s[k].name, tmp.s[k].line);
            if (tmp.n >= SNIPPET_MAX)
                return fail(&w, "more than %d snippets", SNIPPET_MAX);
            cur = &tmp.s[tmp.n++];
            snippet_defaults(cur);
            memcpy(cur->name, nm, nn);
            cur->name[nn] = '\0';
            cur->line = w.line;
            w.line++;
            continue;
        }
        if (!cur)
            return fail(&w, "'%s' before any [snippet NAME] header", config_quote(s, n).s);
        const char *eqp = NULL;
        for (size_t k = 0; k < n && !eqp; k++)
            if (s[k] == '=')
                eqp = s + k;
        if (!eqp)
            return fail(&w, "missing '=' in '%s' (expected key = value)", config_quote(s, n).s);
        const char *k = s, *v = eqp + 1;
        size_t kn = (size_t)(eqp - s), vn = n - kn - 1;
        trim(&k, &kn);
        trim(&v, &vn);
        if (vn >= 2 && v[0] == '"' && v[vn - 1] == '"') {
            v++;
            vn -= 2;
        }
        if (set_key(&w, cur, k, kn, v, vn) < 0)
            return -1;
        w.line++;
    }
    if (cur && check_snippet(&w, cur) < 0)
        return -1;
    memcpy(out, &tmp, sizeof(tmp));
    return 0;
}
