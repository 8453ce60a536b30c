/* record.c - builds record lines, keeps the running count and CRC, and writes the end record. */
#include "kernel/record.h"
#include "kernel/crc32.h"

void record_stream_init(struct record_stream *rs, record_sink_fn sink, void *ctx)
{
    rs->sink = sink;
    rs->ctx = ctx;
    rs->crc = 0;
    rs->count = 0;
    rs->ended = false;
    rs->open = false;
    rs->type[0] = '\0';
    json_init(&rs->j, rs->buf, sizeof(rs->buf));
}

/* Hands one finished line to the sink; counted lines also enter the CRC. */
static void emit(struct record_stream *rs, const char *line, size_t len, bool counted)
{
    if (counted) {
        rs->crc = crc32_update(rs->crc, line, len);
        rs->crc = crc32_update(rs->crc, "\n", 1);
        rs->count++;
    }
    if (rs->sink)
        rs->sink(line, len, rs->ctx);
}

struct json *record_begin(struct record_stream *rs, const char *type)
{
    /* Starting over abandons whatever was being built (an interrupted record). */
    rs->open = !rs->ended;
    json_init(&rs->j, rs->buf, sizeof(rs->buf));
    size_t n = 0;
    if (type)
        for (; type[n] && n < sizeof(rs->type) - 1; n++)
            rs->type[n] = type[n];
    rs->type[n] = '\0';
    json_obj_begin(&rs->j);
    json_kv_str(&rs->j, "type", type);
    return &rs->j;
}

void record_end(struct record_stream *rs)
{
    if (!rs->open || rs->ended)
        return;
    rs->open = false;
    json_close_all(&rs->j);
    if (!rs->j.overflow) {
        emit(rs, rs->buf, rs->j.len, true);
        return;
    }
    size_t bytes = rs->j.want;
    json_init(&rs->j, rs->buf, sizeof(rs->buf));
    json_obj_begin(&rs->j);
    json_kv_str(&rs->j, "type", "record_overflow");
    json_kv_str(&rs->j, "orig_type", rs->type);
    json_kv_uint(&rs->j, "bytes", bytes);
    json_obj_end(&rs->j);
    emit(rs, rs->buf, rs->j.len, true);
}

void record_abort(struct record_stream *rs)
{
    rs->open = false;
}

void record_finish(struct record_stream *rs, const char *status)
{
    if (rs->ended)
        return;
    rs->open = false;
    rs->ended = true;
    json_init(&rs->j, rs->buf, sizeof(rs->buf));
    json_obj_begin(&rs->j);
    json_kv_str(&rs->j, "type", "end");
    json_kv_str(&rs->j, "status", status);
    json_kv_uint(&rs->j, "records", rs->count);
    char hex[9];
    for (int i = 0; i < 8; i++)
        hex[i] = "0123456789abcdef"[(rs->crc >> (28 - 4 * i)) & 15];
    hex[8] = '\0';
    json_kv_str(&rs->j, "crc32", hex);
    json_obj_end(&rs->j);
    emit(rs, rs->buf, rs->j.len, false);
}
