/* klib.h - the few libc-like helpers the freestanding kernel needs; on the host they are libc's. */
#ifndef PMB_KLIB_H
#define PMB_KLIB_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdarg.h>

#ifdef PMB_HOST
#include <string.h>
#else
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define IS_POW2(x) ((x) != 0 && ((x) & ((x) - 1)) == 0)

#define KiB(x) ((uint64_t)(x) << 10)
#define MiB(x) ((uint64_t)(x) << 20)
#define GiB(x) ((uint64_t)(x) << 30)

/* Attributes for measured code (sel4bench FASTFN / CACHESENSFN). */
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#define TIMED_FN __attribute__((noinline, aligned(64)))
#define NORETURN __attribute__((noreturn))
#define PACKED __attribute__((packed))
#define UNUSED __attribute__((unused))

/* Case-insensitive ASCII helpers used by parsers. */
static inline int kl_tolower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }
static inline bool kl_isspace(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }
static inline bool kl_isdigit(int c) { return c >= '0' && c <= '9'; }

#endif
