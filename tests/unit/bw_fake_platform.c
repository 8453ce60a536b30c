/* bw_fake_platform.c - bench/platform.h for host unit tests of the bandwidth/branch/penalty code: malloc'd
 * buffers, one CPU (or a scripted CPU list), a fixed TSC rate, and records kept in memory for the test to
 * inspect. Not a timing environment: tests assert structure, never values. */
#include <sys/mman.h>
#include "tests/unit/bw_fake_platform.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct fake_platform FAKE = {
    .cfg = {.quick = true, .seed = 1, .serialize = TIMING_LFENCE, .platform = "fake"},
    .tsc_hz = 2000000000ull,
    .ratio = 1.0,
    .ncpus = 1,
    .nodes = 1,
    .alloc_limit = 1ull << 30,
};

static char rec_buf[16384];
static struct json rec_json;
static bool rec_open;

void fake_reset(void)
{
    for (size_t i = 0; i < FAKE.nrec; i++)
        free(FAKE.rec[i]);
    FAKE.nrec = 0;
    FAKE.allocs = 0;
    FAKE.live_allocs = 0;
    FAKE.text_lines = 0;
}

size_t fake_count(const char *type)
{
    char want[64];
    snprintf(want, sizeof(want), "{\"type\":\"%s\"", type);
    size_t n = 0;
    for (size_t i = 0; i < FAKE.nrec; i++)
        n += !strncmp(FAKE.rec[i], want, strlen(want)) && (FAKE.rec[i][strlen(want)] == ',' ||
                                                         FAKE.rec[i][strlen(want)] == '}');
    return n;
}

const char *fake_find(const char *type, const char *needle, size_t nth)
{
    char want[64];
    snprintf(want, sizeof(want), "{\"type\":\"%s\"", type);
    for (size_t i = 0; i < FAKE.nrec; i++)
        if (!strncmp(FAKE.rec[i], want, strlen(want)) && (!needle || strstr(FAKE.rec[i], needle)) && nth-- == 0)
            return FAKE.rec[i];
    return NULL;
}

int plat_alloc(struct plat_buf *b, uint64_t bytes, uint64_t page_bytes, int node, const char *why)
{
    (void)why;
    memset(b, 0, sizeof(*b));
    b->node = -1;
    if (!bytes || bytes > FAKE.alloc_limit || (FAKE.fail_page && page_bytes == FAKE.fail_page))
        return -1;
    uint64_t align = page_bytes > 4096 && page_bytes < (1ull << 30) ? page_bytes : 4096;
    uint64_t len = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, len);
    if (!p)
        return -1;
    memset(p, 0, len);
    b->ptr = p;
    b->bytes = len;
    b->page_bytes = page_bytes > 1 && page_bytes != FAKE.short_page ? page_bytes : 4096;
    b->page_how = "fake";
    b->node = node < 0 ? 0 : node;
    FAKE.allocs++;
    FAKE.live_allocs++;
    return 0;
}

void plat_free(struct plat_buf *b)
{
    if (!b || !b->ptr)
        return;
    if (b->priv_remapped)
        munmap(b->ptr, b->priv_len); /* plat_alloc_code's mapping */
    else
        free(b->ptr);
    memset(b, 0, sizeof(*b));
    b->node = -1;
    FAKE.live_allocs--;
}

uint64_t plat_alloc_limit(int node)
{
    (void)node;
    return FAKE.alloc_limit;
}

bool plat_page_ok(uint64_t page_bytes) { return page_bytes != FAKE.fail_page; }

uint32_t plat_cpu_count(void) { return FAKE.ncpus; }

bool plat_cpu(uint32_t i, struct plat_cpu *out)
{
    if (i >= FAKE.ncpus)
        return false;
    *out = (struct plat_cpu){.id = i, .apic_id = i, .node = (int)(i % FAKE.nodes), .package = 0, .core = i};
    return true;
}

uint32_t plat_node_count(void) { return FAKE.nodes; }
uint64_t plat_node_bytes(int node) { return node >= 0 && (uint32_t)node < FAKE.nodes ? FAKE.alloc_limit : 0; }
int plat_node_distance(int from, int to) { return from == to ? 10 : 20; }

/* Jobs on "other CPUs" run inline, one after another: enough for the code paths, not for timing. */
int plat_run_on(uint32_t cpu_id, plat_fn fn, void *arg)
{
    if (cpu_id >= FAKE.ncpus)
        return -1;
    fn(arg);
    return 0;
}

/* Other CPUs are threads (the bandwidth jobs spin on a release flag, so they must really run concurrently). */
struct fake_job {
    pthread_t t;
    plat_fn fn;
    void *arg;
    bool running;
};
static struct fake_job jobs[64];

static void *job_main(void *p)
{
    struct fake_job *j = p;
    j->fn(j->arg);
    return NULL;
}

int plat_start(uint32_t cpu_id, plat_fn fn, void *arg)
{
    if (cpu_id == 0 || cpu_id >= FAKE.ncpus || cpu_id >= 64 || jobs[cpu_id].running)
        return -1;
    jobs[cpu_id] = (struct fake_job){.fn = fn, .arg = arg, .running = true};
    if (pthread_create(&jobs[cpu_id].t, NULL, job_main, &jobs[cpu_id]) != 0) {
        jobs[cpu_id].running = false;
        return -1;
    }
    FAKE.started++;
    return 0;
}

int plat_wait(uint32_t cpu_id)
{
    if (cpu_id >= 64 || !jobs[cpu_id].running)
        return -1;
    pthread_join(jobs[cpu_id].t, NULL);
    jobs[cpu_id].running = false;
    return 0;
}

uint64_t plat_tsc_hz(void) { return FAKE.tsc_hz; }
double plat_core_tsc_ratio(void) { return FAKE.ratio; }
const char *plat_core_tsc_method(void) { return "fake"; }
const struct cpu_info *plat_cpuinfo(void) { return &FAKE.cpu; }

size_t plat_tsc_sources(struct plat_tsc_source *out, size_t max)
{
    size_t n = FAKE.ntsc_src < max ? FAKE.ntsc_src : max;
    memcpy(out, FAKE.tsc_src, n * sizeof(*out));
    return n;
}

int plat_core_clock(uint32_t cpu_id, struct core_clock *c)
{
    static unsigned calls_on[8];
    if (FAKE.clock_calls == 0)
        memset(calls_on, 0, sizeof(calls_on));
    FAKE.clock_calls++;
    if (cpu_id >= 8 || cpu_id >= FAKE.ncpus || FAKE.clock[cpu_id].ratio <= 0)
        return -1;
    *c = FAKE.clock[cpu_id];
    if (calls_on[cpu_id]++)
        c->ratio += FAKE.clock_drift;
    return 0;
}
const struct plat_config *plat_config(void) { return &FAKE.cfg; }

struct json *plat_rec_begin(const char *type)
{
    rec_open = true;
    json_init(&rec_json, rec_buf, sizeof(rec_buf));
    json_obj_begin(&rec_json);
    json_kv_str(&rec_json, "type", type);
    return &rec_json;
}

void plat_rec_end(void)
{
    if (!rec_open)
        return;
    json_close_all(&rec_json);
    rec_open = false;
    if (FAKE.nrec < FAKE_MAX_RECORDS)
        FAKE.rec[FAKE.nrec++] = strdup(rec_json.overflow ? "{\"type\":\"record_overflow\"}" : rec_buf);
}

static char text_ring[FAKE_TEXT_KEEP][512]; /* the latest plat_printf calls */

void plat_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (FAKE.echo) {
        va_list cp;
        va_copy(cp, ap);
        vprintf(fmt, cp);
        va_end(cp);
    }
    vsnprintf(text_ring[FAKE.text_lines % FAKE_TEXT_KEEP], sizeof(text_ring[0]), fmt, ap);
    va_end(ap);
    FAKE.text_lines++;
}

const char *fake_text_find(const char *needle)
{
    size_t n = FAKE.text_lines < FAKE_TEXT_KEEP ? FAKE.text_lines : FAKE_TEXT_KEEP;
    for (size_t i = 0; i < n; i++)
        if (strstr(text_ring[i], needle))
            return text_ring[i];
    return NULL;
}

/* ---- code the user brought: an RWX mapping, the guard recorded (no watchdog: the tests' snippets return) ---- */

int plat_alloc_code(struct plat_buf *b, uint64_t bytes, const char *why)
{
    (void)why;
    memset(b, 0, sizeof(*b));
    size_t len = (size_t)((bytes + 4095) & ~4095ull);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    b->ptr = p;
    b->bytes = len;
    b->priv_len = len;
    b->priv_remapped = true; /* plat_free: munmap, not free */
    FAKE.allocs++;
    FAKE.live_allocs++;
    return 0;
}

int plat_guard_run(const struct guard *g, void (*fn)(void *ctx), void *ctx, size_t ctx_len, char *why, size_t whylen)
{
    (void)ctx_len;
    if (FAKE.no_watchdog) {
        snprintf(why, whylen, "no watchdog: fake platform told so");
        return PLAT_GUARD_NOT_RUN;
    }
    guard_set(g);
    FAKE.guards++;
    fn(ctx);
    guard_set(NULL);
    return PLAT_GUARD_RAN;
}
