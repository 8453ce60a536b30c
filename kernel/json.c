/* json.c - compact JSON writer with automatic commas and hard bounds. */
#include "kernel/json.h"
#include "kernel/fmt.h"

void json_init(struct json *j, char *buf, size_t cap)
{
    memset(j, 0, sizeof(*j));
    j->buf = buf;
    j->cap = cap;
    if (cap)
        buf[0] = '\0';
    else
        j->overflow = true;
}

/* Appends n bytes, or marks overflow and stops writing for good (but keeps counting). */
static void put(struct json *j, const char *s, size_t n)
{
    j->want += n;
    if (j->overflow)
        return;
    if (n >= j->cap - j->len) { /* room for n bytes plus the NUL? */
        j->overflow = true;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void putc1(struct json *j, char c)
{
    put(j, &c, 1);
}

/* Separator before a value (or a key) in the current container. */
static void before_value(struct json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    uint64_t bit = 1ull << j->depth;
    if (j->need_comma & bit)
        putc1(j, ',');
    j->need_comma |= bit;
}

static void container_open(struct json *j, char c, bool array)
{
    before_value(j);
    if (j->depth >= JSON_MAX_DEPTH) {
        j->overflow = true;
        return;
    }
    putc1(j, c);
    j->depth++;
    uint64_t bit = 1ull << j->depth;
    j->need_comma &= ~bit;
    if (array)
        j->is_array |= bit;
    else
        j->is_array &= ~bit;
}

static void container_close(struct json *j, char c)
{
    if (j->depth <= 0) {
        j->overflow = true; /* unbalanced: the text can no longer be valid */
        return;
    }
    j->after_key = false;
    putc1(j, c);
    j->depth--;
}

void json_obj_begin(struct json *j) { container_open(j, '{', false); }
void json_obj_end(struct json *j) { container_close(j, '}'); }
void json_arr_begin(struct json *j) { container_open(j, '[', true); }
void json_arr_end(struct json *j) { container_close(j, ']'); }

void json_close_all(struct json *j)
{
    while (j->depth > 0) {
        if (j->after_key)
            json_null(j); /* a dangling key still needs a value */
        container_close(j, (j->is_array >> j->depth) & 1 ? ']' : '}');
    }
}

static void put_escaped(struct json *j, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    putc1(j, '"');
    size_t run = 0; /* bytes that need no escape, copied in one piece */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            continue;
        put(j, s + run, i - run);
        run = i + 1;
        char e[6] = {'\\', 0};
        size_t len = 2;
        switch (c) {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\n': e[1] = 'n'; break;
        case '\t': e[1] = 't'; break;
        case '\r': e[1] = 'r'; break;
        case '\b': e[1] = 'b'; break;
        case '\f': e[1] = 'f'; break;
        default:
            e[1] = 'u';
            e[2] = '0';
            e[3] = '0';
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            len = 6;
            break;
        }
        put(j, e, len);
    }
    put(j, s + run, n - run);
    putc1(j, '"');
}

void json_key(struct json *j, const char *k)
{
    before_value(j);
    put_escaped(j, k ? k : "", k ? strlen(k) : 0);
    putc1(j, ':');
    j->after_key = true;
}

void json_strn(struct json *j, const char *s, size_t n)
{
    before_value(j);
    put_escaped(j, s, n);
}

void json_str(struct json *j, const char *s)
{
    if (!s) {
        json_null(j);
        return;
    }
    json_strn(j, s, strlen(s));
}

static void put_u64(struct json *j, uint64_t v, bool neg)
{
    char d[21];
    int n = sizeof(d);
    do {
        d[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        d[--n] = '-';
    put(j, d + n, sizeof(d) - (size_t)n);
}

void json_int(struct json *j, int64_t v)
{
    before_value(j);
    put_u64(j, v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0);
}

void json_uint(struct json *j, uint64_t v)
{
    before_value(j);
    put_u64(j, v, false);
}

void json_double(struct json *j, double v)
{
    /* JSON has no inf/nan (RFC 8259 section 6); v - v is 0 only for finite v. */
    if (v - v != 0 || v != v) {
        json_null(j);
        return;
    }
    char t[FMT_DOUBLE_SHORTEST_MAX];
    int n;
    /* Integral values print as integers ("60", not "6e+01"): exact below 2^53, easier to read. */
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    if (v > -9007199254740992.0 && v < 9007199254740992.0 && v == (double)(int64_t)v && bits != (1ULL << 63))
        n = fmt_snprintf(t, sizeof(t), "%lld", (long long)v);
    else
        n = fmt_double_shortest(t, sizeof(t), v);
    before_value(j);
    put(j, t, (size_t)n);
}

void json_bool(struct json *j, bool v)
{
    before_value(j);
    if (v)
        put(j, "true", 4);
    else
        put(j, "false", 5);
}

void json_null(struct json *j)
{
    before_value(j);
    put(j, "null", 4);
}

void json_hex(struct json *j, uint64_t v)
{
    char d[19];
    int n = sizeof(d);
    do {
        d[--n] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    d[--n] = 'x';
    d[--n] = '0';
    before_value(j);
    putc1(j, '"');
    put(j, d + n, sizeof(d) - (size_t)n);
    putc1(j, '"');
}

void json_raw(struct json *j, const char *fragment)
{
    if (!fragment) {
        json_null(j);
        return;
    }
    before_value(j);
    size_t n = strlen(fragment);
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)fragment[i] < 0x20) {
            j->overflow = true; /* a line break would split the record line */
            return;
        }
    }
    put(j, fragment, n);
}

void json_kv_str(struct json *j, const char *k, const char *v) { json_key(j, k); json_str(j, v); }
void json_kv_int(struct json *j, const char *k, int64_t v) { json_key(j, k); json_int(j, v); }
void json_kv_uint(struct json *j, const char *k, uint64_t v) { json_key(j, k); json_uint(j, v); }
void json_kv_double(struct json *j, const char *k, double v) { json_key(j, k); json_double(j, v); }
void json_kv_bool(struct json *j, const char *k, bool v) { json_key(j, k); json_bool(j, v); }
void json_kv_hex(struct json *j, const char *k, uint64_t v) { json_key(j, k); json_hex(j, v); }
void json_kv_null(struct json *j, const char *k) { json_key(j, k); json_null(j); }
void json_kv_double_or_null(struct json *j, const char *k, bool valid, double v)
{
    if (valid)
        json_kv_double(j, k, v);
    else
        json_kv_null(j, k);
}
void json_kv_raw(struct json *j, const char *k, const char *fragment)
{
    json_key(j, k);
    json_raw(j, fragment);
}
