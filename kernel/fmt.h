/* fmt.h - freestanding printf family (C99 semantics, exact double conversion) for text and JSON output. */
#ifndef PMB_FMT_H
#define PMB_FMT_H

#include "kernel/klib.h"

/*
 * Supported: flags - 0 + space #, width and precision (number or *), length hh h l ll z j t,
 * conversions d i u x X o c s p % f F e E g G. Doubles are converted exactly (every digit is the
 * true decimal expansion, rounded half-to-even), as glibc does. %p prints 0x... ("(nil)" for NULL),
 * %s of NULL prints "(null)". %n, %a and L are not supported: an unsupported conversion is copied
 * to the output verbatim. Return values follow C99: the number of characters the full output
 * has (excluding the NUL), or -1 if that exceeds INT_MAX.
 */

/* Where fmt_vcbprintf sends each character. */
typedef void (*fmt_putc_fn)(char c, void *ctx);

/* Writes at most size-1 characters and always NUL-terminates when size > 0 (buf may be NULL if size is 0). */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int fmt_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Unbounded output through a callback (serial console). */
int fmt_vcbprintf(fmt_putc_fn f, void *ctx, const char *fmt, va_list ap);
int fmt_cbprintf(fmt_putc_fn f, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The shortest round-tripping form of a finite v: exactly what "%.*g" prints for the smallest
 * precision P in 1..17 whose output reads back (correctly rounded) as v. Non-finite v prints as
 * "%g" would ("inf", "-nan", ...); JSON callers must map those to null themselves.
 * Needs at most 25 bytes (FMT_DOUBLE_SHORTEST_MAX including the NUL).
 */
#define FMT_DOUBLE_SHORTEST_MAX 32
int fmt_double_shortest(char *buf, size_t size, double v);

#endif
