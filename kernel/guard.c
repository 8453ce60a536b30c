/* guard.c - the guard in force and the location of an address in its regions. */
#include "kernel/guard.h"
#include "kernel/fmt.h"

static struct guard cur;
static volatile bool active;

void guard_set(const struct guard *g)
{
    active = false;
    if (!g)
        return;
    cur = *g;
    if (cur.n > GUARD_MAX_REGIONS)
        cur.n = GUARD_MAX_REGIONS;
    __atomic_store_n(&active, true, __ATOMIC_RELEASE);
}

const struct guard *guard_current(void) { return __atomic_load_n(&active, __ATOMIC_ACQUIRE) ? &cur : NULL; }

bool guard_locate(uint64_t addr, const char **part, size_t *off)
{
    const struct guard *g = guard_current();
    if (!g)
        return false;
    for (size_t i = 0; i < g->n; i++) {
        const struct guard_region *r = &g->r[i];
        if (r->len && addr >= r->start && addr - r->start < r->len) {
            size_t o = (size_t)(addr - r->start);
            *part = r->part;
            *off = r->period ? o % r->period : o;
            return true;
        }
    }
    return false;
}

void guard_json(struct json *j, uint64_t addr)
{
    const struct guard *g = guard_current();
    if (!g)
        return;
    const char *part;
    size_t off;
    json_key(j, g->what ? g->what : "guard");
    json_obj_begin(j);
    json_kv_str(j, "name", g->name ? g->name : "");
    if (guard_locate(addr, &part, &off)) {
        json_kv_str(j, "part", part);
        json_kv_uint(j, "offset", off);
    } else {
        json_kv_str(j, "part", "outside");
    }
    json_obj_end(j);
}

void guard_timeout_json(struct json *j, uint32_t timeout_ms, bool have_rip, uint64_t rip, const char *action)
{
    const struct guard *g = guard_current();
    const char *what = g && g->what ? g->what : "guarded code", *name = g && g->name ? g->name : "";
    char kind[48], msg[200];
    fmt_snprintf(kind, sizeof(kind), "%s_timeout", g && g->what ? g->what : "watchdog");
    json_kv_str(j, "what", kind);
    json_kv_uint(j, "timeout_ms", timeout_ms);
    if (have_rip) {
        json_kv_hex(j, "rip", rip);
        guard_json(j, rip);
    } else if (g) {
        json_key(j, what);
        json_obj_begin(j);
        json_kv_str(j, "name", name);
        json_obj_end(j);
    }
    fmt_snprintf(msg, sizeof(msg), "%s '%s' did not return within %u ms; %s", what, name, timeout_ms, action);
    json_kv_str(j, "message", msg);
}
