/* out.c - serial text output with CR/LF translation, and the record stream's serial sink. */
#include "kernel/out.h"
#include "kernel/fmt.h"

static struct serial_port *port;
static struct record_stream rs;
static bool at_line_start = true;

static void raw_putc(char c)
{
    if (port)
        serial_putc(port, c);
}

static void text_putc(char c, void *ctx)
{
    (void)ctx;
    if (c == '\n') {
        raw_putc('\r');
        raw_putc('\n');
        at_line_start = true;
        return;
    }
    if (at_line_start && c == '{')
        raw_putc(' ');
    at_line_start = false;
    raw_putc(c);
}

static void record_sink(const char *line, size_t len, void *ctx)
{
    (void)ctx;
    if (!at_line_start) {
        raw_putc('\r');
        raw_putc('\n');
    }
    for (size_t i = 0; i < len; i++)
        raw_putc(line[i]);
    raw_putc('\r');
    raw_putc('\n');
    at_line_start = true;
}

void out_init(struct serial_port *s)
{
    port = s;
    if (!rs.sink)
        record_stream_init(&rs, record_sink, NULL);
}

struct record_stream *out_records(void) { return &rs; }

void kvprintf(const char *fmt, va_list ap) { fmt_vcbprintf(text_putc, NULL, fmt, ap); }

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvprintf(fmt, ap);
    va_end(ap);
}

struct json *rec_begin(const char *type) { return record_begin(&rs, type); }
void rec_end(void) { record_end(&rs); }
void rec_abort(void) { record_abort(&rs); }
void out_finish(const char *status) { record_finish(&rs, status); }

void rec_message(const char *type, const char *what, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct json *j = rec_begin(type);
    json_kv_str(j, "what", what);
    json_kv_str(j, "message", msg);
    rec_end();
}
