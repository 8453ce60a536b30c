/* out.h - everything the kernel prints: human-readable text and the JSON record stream, both on serial. */
#ifndef PMB_OUT_H
#define PMB_OUT_H

#include "kernel/klib.h"
#include "kernel/serial.h"
#include "kernel/json.h"
#include "kernel/record.h"

void out_init(struct serial_port *s);

/* Text. A human-readable line never starts with '{' (records do): such a line gets a leading space. */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kvprintf(const char *fmt, va_list ap);

/* Records: rec_begin returns the writer positioned after "type"; rec_end emits the line. */
struct json *rec_begin(const char *type);
void rec_end(void);
void rec_abort(void);
/* Emit the end record (once). */
void out_finish(const char *status);
struct record_stream *out_records(void);

/* A record carrying a one-line message of a given kind (error, warning, note). */
void rec_message(const char *type, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
