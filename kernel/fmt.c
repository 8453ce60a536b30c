/* fmt.c - freestanding printf: integers, strings and exactly converted doubles. */
#include "kernel/fmt.h"

#define FMT_INT_MAX 0x7fffffff

/* Where characters go: a bounded buffer, a callback, or nowhere (counting only). */
struct out {
    char *buf;
    size_t size;
    fmt_putc_fn putc;
    void *ctx;
    size_t n; /* characters produced so far, including those that did not fit */
};

static void out_c(struct out *o, char c)
{
    if (o->buf) {
        if (o->n + 1 < o->size)
            o->buf[o->n] = c;
    } else if (o->putc) {
        o->putc(c, o->ctx);
    }
    o->n++;
}

static void out_rep(struct out *o, char c, int count)
{
    for (; count > 0; count--)
        out_c(o, c);
}

static void out_str(struct out *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        out_c(o, s[i]);
}

/* One parsed conversion specification. */
struct spec {
    bool left, plus, space, alt, zero;
    int width;
    int prec; /* -1: not given */
    char conv;
};

/* Pads for a field of `len` characters: spaces before (right-justified) or after (left-justified). */
static void pad_before(struct out *o, const struct spec *s, int len)
{
    if (!s->left)
        out_rep(o, ' ', s->width - len);
}

static void pad_after(struct out *o, const struct spec *s, int len)
{
    if (s->left)
        out_rep(o, ' ', s->width - len);
}

/* ---- integers ----------------------------------------------------------------------------- */

static void fmt_integer(struct out *o, const struct spec *s, uint64_t u, bool neg, bool is_signed)
{
    char dig[24]; /* 2^64 in octal is 22 digits */
    int nd = 0;
    unsigned base = 10;
    bool upper = s->conv == 'X';
    if (s->conv == 'x' || s->conv == 'X' || s->conv == 'p')
        base = 16;
    else if (s->conv == 'o')
        base = 8;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    bool was_zero = u == 0;

    /* C11 7.21.6.1: precision 0 with value 0 prints no digits. */
    if (!(u == 0 && s->prec == 0)) {
        do {
            dig[nd++] = digits[u % base];
            u /= base;
        } while (u);
    }

    char prefix[3];
    int np = 0;
    if (is_signed) {
        if (neg)
            prefix[np++] = '-';
        else if (s->plus)
            prefix[np++] = '+';
        else if (s->space)
            prefix[np++] = ' ';
    }
    if (base == 16 && s->alt && !was_zero) {
        prefix[np++] = '0';
        prefix[np++] = upper ? 'X' : 'x';
    }

    int zeros = s->prec > nd ? s->prec - nd : 0;
    /* '#' with o: the first digit printed must be 0. */
    if (base == 8 && s->alt && zeros == 0 && (nd == 0 || dig[nd - 1] != '0'))
        zeros = 1;
    int len = np + zeros + nd;
    if (s->zero && !s->left && s->prec < 0 && s->width > len) {
        zeros += s->width - len;
        len = s->width;
    }
    pad_before(o, s, len);
    out_str(o, prefix, (size_t)np);
    out_rep(o, '0', zeros);
    while (nd > 0)
        out_c(o, dig[--nd]);
    pad_after(o, s, len);
}

/* ---- doubles ------------------------------------------------------------------------------ */

/*
 * A finite double is m * 2^e2 exactly. We turn that into the exact decimal expansion with a
 * small base-10^9 bignum: for e2 >= 0 the integer m << e2, for e2 < 0 the integer m * 5^-e2
 * with the decimal point moved -e2 places (m * 2^-k == m * 5^k / 10^k). The worst case,
 * 2^55 * 5^1076, has 769 digits, which bounds both arrays below.
 */
#define DEC_LIMBS 96
#define DEC_DIGITS_MAX 800
#define BASE1E9 1000000000u

static void big_mul(uint32_t *x, int *n, uint32_t f)
{
    uint64_t carry = 0;
    for (int i = 0; i < *n; i++) {
        uint64_t t = (uint64_t)x[i] * f + carry;
        x[i] = (uint32_t)(t % BASE1E9);
        carry = t / BASE1E9;
    }
    while (carry && *n < DEC_LIMBS) {
        x[(*n)++] = (uint32_t)(carry % BASE1E9);
        carry /= BASE1E9;
    }
}

/* Decimal digits of a value: 0.d[0]d[1]...d[nd-1] x 10^dp, no trailing zeros, nd == 0 for zero.
 * sticky: digits beyond the ones stored (beyond maxd) were not all zero. */
struct dec {
    char *d;
    int nd, dp;
    bool sticky;
};

static void dec_exact(struct dec *r, uint64_t m, int e2, int maxd)
{
    uint32_t x[DEC_LIMBS];
    int n = 0, k = 0;
    static const uint32_t pow5[14] = {1,       5,        25,        125,        625,
                                      3125,    15625,    78125,     390625,     1953125,
                                      9765625, 48828125, 244140625, 1220703125};

    r->nd = 0;
    r->dp = 0;
    r->sticky = false;
    if (m == 0)
        return;
    while (m) {
        x[n++] = (uint32_t)(m % BASE1E9);
        m /= BASE1E9;
    }
    for (int left = e2; left > 0; left -= 29)
        big_mul(x, &n, 1u << (left > 29 ? 29 : left));
    if (e2 < 0) {
        k = -e2;
        for (int left = k; left > 0; left -= 13)
            big_mul(x, &n, pow5[left > 13 ? 13 : left]);
    }

    /* Most significant limb without leading zeros, the others as 9 digits each. */
    char top[10];
    int nt = 0;
    for (uint32_t t = x[n - 1]; t; t /= 10)
        top[nt++] = (char)('0' + t % 10);
    r->dp = nt + 9 * (n - 1) - k;

    int nd = 0;
    for (int i = nt - 1; i >= 0; i--) {
        if (nd < maxd)
            r->d[nd++] = top[i];
        else if (top[i] != '0')
            r->sticky = true;
    }
    for (int l = n - 2; l >= 0; l--) {
        char nine[9];
        uint32_t t = x[l];
        for (int i = 8; i >= 0; i--, t /= 10)
            nine[i] = (char)('0' + t % 10);
        for (int i = 0; i < 9; i++) {
            if (nd < maxd)
                r->d[nd++] = nine[i];
            else if (nine[i] != '0')
                r->sticky = true;
        }
    }
    while (nd > 0 && r->d[nd - 1] == '0')
        nd--;
    r->nd = nd;
}

/*
 * Keep `keep` significant digits (keep may be <= 0: the rounding position lies above the first
 * digit), rounding half to even on the exact value, as glibc does in the default rounding mode.
 * Requires keep < the maxd the digits were produced with.
 */
static void dec_round(struct dec *r, int keep)
{
    if (keep >= r->nd)
        return;
    if (keep < 0) {
        r->nd = 0;
        r->dp = 0;
        return;
    }
    int rd = r->d[keep] - '0';
    bool up;
    if (rd != 5)
        up = rd > 5;
    else if (keep + 1 < r->nd || r->sticky)
        up = true;
    else
        up = keep > 0 && ((r->d[keep - 1] - '0') & 1);
    r->sticky = false;
    r->nd = keep;
    if (up) {
        int i = keep - 1;
        while (i >= 0 && r->d[i] == '9')
            i--;
        if (i < 0) {
            r->d[0] = '1';
            r->nd = 1;
            r->dp++;
        } else {
            r->d[i]++;
            r->nd = i + 1;
        }
    }
    while (r->nd > 0 && r->d[r->nd - 1] == '0')
        r->nd--;
    if (r->nd == 0)
        r->dp = 0;
}

static char dec_digit(const struct dec *r, int i)
{
    return (i >= 0 && i < r->nd) ? r->d[i] : '0';
}

union dbits {
    double d;
    uint64_t u;
};

/* Splits a finite double into |v| = m * 2^e2; returns the biased exponent (0x7ff: inf/nan). */
static int dbl_split(double v, bool *neg, uint64_t *m, int *e2)
{
    union dbits b = {.d = v};
    int bexp = (int)((b.u >> 52) & 0x7ff);
    uint64_t frac = b.u & ((1ull << 52) - 1);
    *neg = b.u >> 63;
    if (bexp == 0) {
        *m = frac;
        *e2 = -1074;
    } else {
        *m = frac | (1ull << 52);
        *e2 = bexp - 1075;
    }
    return bexp;
}

/* Digits printed after the point for %f (prec) of a rounded value. */
static void emit_fixed(struct out *o, const struct dec *r, int prec, bool point)
{
    if (r->dp <= 0) {
        out_c(o, '0');
    } else {
        for (int i = 0; i < r->dp; i++)
            out_c(o, dec_digit(r, i));
    }
    if (point)
        out_c(o, '.');
    for (int j = 0; j < prec; j++)
        out_c(o, dec_digit(r, r->dp + j));
}

static int fixed_len(const struct dec *r, int prec, bool point)
{
    return (r->dp > 0 ? r->dp : 1) + (point ? 1 : 0) + prec;
}

static void emit_exp(struct out *o, const struct dec *r, int prec, bool point, char e)
{
    int x = r->nd ? r->dp - 1 : 0;
    out_c(o, dec_digit(r, 0));
    if (point)
        out_c(o, '.');
    for (int j = 1; j <= prec; j++)
        out_c(o, dec_digit(r, j));
    out_c(o, e);
    out_c(o, x < 0 ? '-' : '+');
    if (x < 0)
        x = -x;
    if (x >= 100)
        out_c(o, (char)('0' + x / 100));
    out_c(o, (char)('0' + x / 10 % 10));
    out_c(o, (char)('0' + x % 10));
}

static int exp_len(const struct dec *r, int prec, bool point)
{
    int x = r->nd ? r->dp - 1 : 0;
    if (x < 0)
        x = -x;
    return 1 + (point ? 1 : 0) + prec + 2 + (x >= 100 ? 3 : 2);
}

static void fmt_double(struct out *o, const struct spec *s, double v)
{
    bool neg, upper = s->conv == 'F' || s->conv == 'E' || s->conv == 'G';
    uint64_t m;
    int e2;
    int bexp = dbl_split(v, &neg, &m, &e2);
    char sign = neg ? '-' : s->plus ? '+' : s->space ? ' ' : 0;
    int ns = sign ? 1 : 0;

    if (bexp == 0x7ff) {
        const char *t = m & ((1ull << 52) - 1) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
        pad_before(o, s, ns + 3);
        if (sign)
            out_c(o, sign);
        out_str(o, t, 3);
        pad_after(o, s, ns + 3);
        return;
    }

    char digits[DEC_DIGITS_MAX];
    struct dec r = {.d = digits};
    dec_exact(&r, m, e2, DEC_DIGITS_MAX);

    int prec = s->prec < 0 ? 6 : s->prec;
    char style = (char)kl_tolower(s->conv);
    if (style == 'g') {
        int p = prec ? prec : 1;
        /* C11 7.21.6.1: X is the exponent %e would print with precision P-1. */
        dec_round(&r, p);
        int x = r.nd ? r.dp - 1 : 0;
        if (p > x && x >= -4) {
            style = 'f';
            prec = p - 1 - x;
            if (!s->alt) {
                int frac = r.nd - r.dp; /* significant digits after the point */
                prec = MIN(prec, MAX(frac, 0));
            }
        } else {
            style = 'e';
            prec = p - 1;
            if (!s->alt)
                prec = MIN(prec, MAX(r.nd - 1, 0));
        }
    } else if (style == 'f') {
        /* Keep every digit down to 10^-prec; beyond DEC_DIGITS_MAX all digits are zero anyway. */
        if ((int64_t)r.dp + prec < DEC_DIGITS_MAX)
            dec_round(&r, r.dp + prec);
    } else {
        if (prec + 1 < DEC_DIGITS_MAX)
            dec_round(&r, prec + 1);
    }

    bool point = prec > 0 || s->alt;
    int len = ns + (style == 'f' ? fixed_len(&r, prec, point) : exp_len(&r, prec, point));
    int zeros = 0;
    if (s->zero && !s->left && s->width > len) {
        zeros = s->width - len;
        len = s->width;
    }
    pad_before(o, s, len);
    if (sign)
        out_c(o, sign);
    out_rep(o, '0', zeros);
    if (style == 'f')
        emit_fixed(o, &r, prec, point);
    else
        emit_exp(o, &r, prec, point, upper ? 'E' : 'e');
    pad_after(o, s, len);
}

/* ---- the format loop ---------------------------------------------------------------------- */

static int parse_num(const char **p)
{
    int v = 0;
    while (kl_isdigit(**p)) {
        if (v < 100000000) /* clamp absurd widths instead of overflowing */
            v = v * 10 + (**p - '0');
        (*p)++;
    }
    return v;
}

enum { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_J, LEN_T };

static int64_t arg_signed(va_list *ap, int len)
{
    switch (len) {
    case LEN_HH: return (signed char)va_arg(*ap, int);
    case LEN_H: return (short)va_arg(*ap, int);
    case LEN_L: return va_arg(*ap, long);
    case LEN_LL: return va_arg(*ap, long long);
    case LEN_Z: return (int64_t)va_arg(*ap, long); /* signed size_t */
    case LEN_J: return va_arg(*ap, int64_t);        /* intmax_t */
    case LEN_T: return (int64_t)va_arg(*ap, ptrdiff_t);
    default: return va_arg(*ap, int);
    }
}

static uint64_t arg_unsigned(va_list *ap, int len)
{
    switch (len) {
    case LEN_HH: return (unsigned char)va_arg(*ap, unsigned int);
    case LEN_H: return (unsigned short)va_arg(*ap, unsigned int);
    case LEN_L: return va_arg(*ap, unsigned long);
    case LEN_LL: return va_arg(*ap, unsigned long long);
    case LEN_Z: return va_arg(*ap, size_t);
    case LEN_J: return va_arg(*ap, uint64_t); /* uintmax_t */
    case LEN_T: return (uint64_t)va_arg(*ap, ptrdiff_t);
    default: return va_arg(*ap, unsigned int);
    }
}

static void fmt_core(struct out *o, const char *fmt, va_list ap_in)
{
    va_list ap;
    va_copy(ap, ap_in);
    while (*fmt) {
        if (*fmt != '%') {
            out_c(o, *fmt++);
            continue;
        }
        const char *start = fmt++;
        struct spec s = {.prec = -1};
        for (;; fmt++) {
            if (*fmt == '-')
                s.left = true;
            else if (*fmt == '+')
                s.plus = true;
            else if (*fmt == ' ')
                s.space = true;
            else if (*fmt == '#')
                s.alt = true;
            else if (*fmt == '0')
                s.zero = true;
            else
                break;
        }
        if (*fmt == '*') {
            fmt++;
            s.width = va_arg(ap, int);
            if (s.width < 0) {
                s.left = true;
                s.width = s.width == -FMT_INT_MAX - 1 ? FMT_INT_MAX : -s.width;
            }
        } else {
            s.width = parse_num(&fmt);
        }
        if (*fmt == '.') {
            fmt++;
            if (*fmt == '*') {
                fmt++;
                s.prec = va_arg(ap, int);
                if (s.prec < 0)
                    s.prec = -1; /* a negative precision is taken as if omitted */
            } else {
                s.prec = parse_num(&fmt);
            }
        }
        int len = LEN_NONE;
        switch (*fmt) {
        case 'h':
            fmt++;
            len = LEN_H;
            if (*fmt == 'h') {
                fmt++;
                len = LEN_HH;
            }
            break;
        case 'l':
            fmt++;
            len = LEN_L;
            if (*fmt == 'l') {
                fmt++;
                len = LEN_LL;
            }
            break;
        case 'z': fmt++; len = LEN_Z; break;
        case 'j': fmt++; len = LEN_J; break;
        case 't': fmt++; len = LEN_T; break;
        default: break;
        }
        s.conv = *fmt;
        if (s.conv)
            fmt++;
        switch (s.conv) {
        case 'd':
        case 'i': {
            int64_t v = arg_signed(&ap, len);
            fmt_integer(o, &s, v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0, true);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
        case 'o':
            fmt_integer(o, &s, arg_unsigned(&ap, len), false, false);
            break;
        case 'p': {
            void *p = va_arg(ap, void *);
            if (!p) {
                pad_before(o, &s, 5);
                out_str(o, "(nil)", 5);
                pad_after(o, &s, 5);
            } else {
                s.alt = true;
                fmt_integer(o, &s, (uint64_t)(uintptr_t)p, false, false);
            }
            break;
        }
        case 'c': {
            char c = (char)va_arg(ap, int);
            pad_before(o, &s, 1);
            out_c(o, c);
            pad_after(o, &s, 1);
            break;
        }
        case 's': {
            const char *str = va_arg(ap, const char *);
            if (!str)
                str = "(null)";
            size_t n = 0; /* never read past the precision: the string need not be terminated */
            while ((s.prec < 0 || n < (size_t)s.prec) && str[n])
                n++;
            int w = n > FMT_INT_MAX ? FMT_INT_MAX : (int)n;
            pad_before(o, &s, w);
            out_str(o, str, n);
            pad_after(o, &s, w);
            break;
        }
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G':
            fmt_double(o, &s, va_arg(ap, double));
            break;
        case '%':
            out_c(o, '%');
            break;
        default:
            /* Unsupported or truncated specification: show it as written. */
            out_str(o, start, (size_t)(fmt - start));
            break;
        }
    }
    va_end(ap);
}

static int result(size_t n)
{
    return n > FMT_INT_MAX ? -1 : (int)n;
}

int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = {.buf = size ? buf : NULL, .size = size};
    fmt_core(&o, fmt, ap);
    if (size)
        buf[o.n < size ? o.n : size - 1] = '\0';
    return result(o.n);
}

int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

int fmt_vcbprintf(fmt_putc_fn f, void *ctx, const char *fmt, va_list ap)
{
    struct out o = {.putc = f, .ctx = ctx};
    fmt_core(&o, fmt, ap);
    return result(o.n);
}

int fmt_cbprintf(fmt_putc_fn f, void *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vcbprintf(f, ctx, fmt, ap);
    va_end(ap);
    return n;
}

/* ---- shortest round trip ------------------------------------------------------------------ */

/* Compares two positive decimals (nd > 0 both). */
static int dec_cmp(const struct dec *a, const struct dec *b)
{
    if (a->dp != b->dp)
        return a->dp < b->dp ? -1 : 1;
    int n = MAX(a->nd, b->nd);
    for (int i = 0; i < n; i++) {
        char x = dec_digit(a, i), y = dec_digit(b, i);
        if (x != y)
            return x < y ? -1 : 1;
    }
    if (a->sticky != b->sticky)
        return a->sticky ? 1 : -1;
    return 0;
}

#define SHORT_DIGITS 24 /* > 17 + 1, so rounding to <= 17 digits sees the exact first dropped digit */

int fmt_double_shortest(char *buf, size_t size, double v)
{
    bool neg;
    uint64_t m;
    int e2;
    int bexp = dbl_split(v, &neg, &m, &e2);
    if (bexp == 0x7ff || m == 0)
        return fmt_snprintf(buf, size, "%g", v);

    /*
     * Every decimal strictly between the midpoints to the neighbouring doubles reads back as v;
     * the midpoints themselves do too when m is even (ties go to even). Below a power of two the
     * lower neighbour is only half as far away.
     */
    char dv[SHORT_DIGITS], dl[SHORT_DIGITS], dh[SHORT_DIGITS], dc[SHORT_DIGITS];
    struct dec val = {.d = dv}, lo = {.d = dl}, hi = {.d = dh};
    dec_exact(&val, m, e2, SHORT_DIGITS);
    if (m == (1ull << 52) && bexp > 1)
        dec_exact(&lo, 4 * m - 1, e2 - 2, SHORT_DIGITS);
    else
        dec_exact(&lo, 2 * m - 1, e2 - 1, SHORT_DIGITS);
    dec_exact(&hi, 2 * m + 1, e2 - 1, SHORT_DIGITS);
    bool inclusive = (m & 1) == 0;

    int p;
    for (p = 1; p < 17; p++) {
        struct dec c = {.d = dc};
        memcpy(dc, dv, sizeof(dc));
        c.nd = val.nd;
        c.dp = val.dp;
        c.sticky = val.sticky;
        dec_round(&c, p);
        int cl = dec_cmp(&c, &lo), ch = dec_cmp(&c, &hi);
        if ((cl > 0 || (inclusive && cl == 0)) && (ch < 0 || (inclusive && ch == 0)))
            break;
    }
    return fmt_snprintf(buf, size, "%.*g", p, v);
}
