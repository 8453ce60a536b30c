/* record.h - the output contract: JSON Lines records, counted and CRC-checked, closed by an end record. */
#ifndef PMB_RECORD_H
#define PMB_RECORD_H

#include "kernel/json.h"

/*
 * Every machine-readable record is one serial line holding one JSON object with a "type" field.
 * A run starts with {"type":"run",...} and ends with
 *   {"type":"end","status":"ok"|"error"|"crashed","records":N,"crc32":"xxxxxxxx"}
 * N counts the records before it, crc32 is the IEEE CRC-32 (as zlib) over those record lines,
 * each as emitted from { to } plus one \n, 8 lowercase hex digits.
 */

#define RECORD_MAX 16384     /* longest record line, excluding the line end */
#define RECORD_TYPE_MAX 32   /* longest "type" value kept for the overflow record */

/* Receives one line without its '\n'; it writes line + "\r\n" (serial) or "\n" (file). */
typedef void (*record_sink_fn)(const char *line, size_t len, void *ctx);

struct record_stream {
    record_sink_fn sink;
    void *ctx;
    uint32_t crc;   /* over every emitted record line + '\n' */
    uint32_t count; /* records emitted (the end record excluded) */
    bool ended;     /* record_finish ran: everything after is dropped */
    bool open;      /* between record_begin and record_end */
    char type[RECORD_TYPE_MAX];
    struct json j;
    char buf[RECORD_MAX];
};

void record_stream_init(struct record_stream *rs, record_sink_fn sink, void *ctx);

/*
 * Opens {"type":"<type>" and returns the writer for the remaining fields. If a record is already
 * open (a crash report interrupting one), that partial record is abandoned: neither emitted nor
 * counted. Never returns NULL: after record_finish it returns a writer whose output is dropped.
 */
struct json *record_begin(struct record_stream *rs, const char *type);

/*
 * Closes the object (and any container left open), adds line + '\n' to the CRC, counts it and
 * hands it to the sink. A record that did not fit in RECORD_MAX is replaced by
 * {"type":"record_overflow","orig_type":"<type>","bytes":N} (counted), N being the length the
 * full line would have had. Does nothing when no record is open or after record_finish.
 */
void record_end(struct record_stream *rs);

/* Drops the open record, if any, without emitting or counting it. */
void record_abort(struct record_stream *rs);

/* Emits the end record (not counted) once; later calls do nothing. An open record is abandoned. */
void record_finish(struct record_stream *rs, const char *status);

#endif
