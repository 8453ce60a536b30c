/* bench_select.c - the bench= list parser, over any benchmark table. Pure: no I/O. */
#include "bench/bench_select.h"
#include "bench/bench.h"
#include "kernel/fmt.h"

/* "a|b|c": the rows this program can run. */
static void runnable_names(const struct bench_desc *t, size_t n, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t k = 0; k < n && o < len; k++)
        if (t[k].run)
            o += (size_t)fmt_snprintf(buf + o, len - o, "%s%s", o ? "|" : "", t[k].name);
}

int bench_select_in(const struct bench_desc *t, size_t n, const char *list, bool *sel, char *err, size_t errlen)
{
    memset(sel, 0, n * sizeof(bool));
    if (!strcmp(list, "all") || list[0] == 0) {
        for (size_t i = 0; i < n; i++)
            sel[i] = t[i].run != NULL && !t[i].explicit_only;
        return 0;
    }
    if (!strcmp(list, "none"))
        return 0;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        size_t i;
        for (i = 0; i < n; i++)
            if (strlen(t[i].name) == len && !strncmp(t[i].name, p, len))
                break;
        if (i == n || !t[i].run) {
            char known[256];
            runnable_names(t, n, known, sizeof(known));
            if (i == n)
                fmt_snprintf(err, errlen, "bad value for 'bench': unknown benchmark '%.*s' (known: all|none|%s)",
                             (int)len, p, known);
            else
                fmt_snprintf(err, errlen, "bad value for 'bench': benchmark '%.*s' runs only in the UEFI image "
                             "(here: all|none|%s)", (int)len, p, known);
            return -1;
        }
        sel[i] = true;
        p += len + (e ? 1 : 0);
    }
    return 0;
}
