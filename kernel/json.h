/* json.h - a JSON writer into a caller buffer: one compact, pure-ASCII line, never past cap. */
#ifndef PMB_JSON_H
#define PMB_JSON_H

#include "kernel/klib.h"

#define JSON_MAX_DEPTH 32

/*
 * Commas are inserted automatically. Once anything does not fit (or nesting goes deeper than
 * JSON_MAX_DEPTH, a container is closed that was never opened, or json_raw is handed a control
 * character) `overflow` is set, and nothing
 * more is written: the buffer then holds a NUL-terminated prefix, never a spliced-together text.
 * `want` keeps counting the bytes the complete output would need, so callers can report it.
 */
struct json {
    char *buf;
    size_t cap, len;     /* len: bytes in buf, excluding the NUL */
    size_t want;         /* bytes the output would have with unlimited room */
    int depth;           /* open containers */
    uint64_t need_comma; /* bit d: the container at depth d already holds a value */
    uint64_t is_array;   /* bit d: the container at depth d is an array */
    bool after_key;      /* a key was written, its value comes next */
    bool overflow;
};

void json_init(struct json *j, char *buf, size_t cap);

void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
/* Closes whatever containers are still open (innermost first), with the right bracket each. */
void json_close_all(struct json *j);

void json_key(struct json *j, const char *k);

/* Strings: " and \ escaped, control characters as \n \t \r \b \f or \u00XX, and bytes >= 0x7f as
 * \u00XX (each byte taken as Latin-1), so the output is printable ASCII. NULL writes null. */
void json_str(struct json *j, const char *s);
void json_strn(struct json *j, const char *s, size_t n); /* n bytes; NULs are escaped too */
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
/* Shortest text that reads back as exactly v (fmt_double_shortest); inf and nan become null. */
void json_double(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
void json_hex(struct json *j, uint64_t v); /* the string "0x1a2b" (lowercase, no leading zeros) */
/* A pre-built JSON value, copied as is (the caller vouches that it is valid JSON). One holding a
 * control character (a newline would split the line) sets overflow instead. NULL writes null. */
void json_raw(struct json *j, const char *fragment);

void json_kv_str(struct json *j, const char *k, const char *v);
void json_kv_int(struct json *j, const char *k, int64_t v);
void json_kv_uint(struct json *j, const char *k, uint64_t v);
void json_kv_double(struct json *j, const char *k, double v);
void json_kv_bool(struct json *j, const char *k, bool v);
void json_kv_hex(struct json *j, const char *k, uint64_t v);
void json_kv_null(struct json *j, const char *k);
/* v when `valid`, else null: a measured value that may not exist. */
void json_kv_double_or_null(struct json *j, const char *k, bool valid, double v);
void json_kv_raw(struct json *j, const char *k, const char *fragment);

#endif
