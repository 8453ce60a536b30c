/* bw_fake_platform.h - the fake bench/platform.h the bandwidth/branch/penalty host tests link against: its knobs and the records it kept. */
#ifndef PMB_TESTS_BW_FAKE_PLATFORM_H
#define PMB_TESTS_BW_FAKE_PLATFORM_H

#include "bench/platform.h"

#define FAKE_MAX_RECORDS 4096

struct fake_platform {
    struct plat_config cfg;
    struct cpu_info cpu;   /* caches and features the code sees */
    uint64_t tsc_hz;
    double ratio;
    uint32_t ncpus, nodes;
    uint64_t alloc_limit;  /* largest allocation granted */
    uint64_t fail_page;    /* plat_alloc with this page size fails (0: none) */
    uint64_t short_page;   /* plat_alloc asked for this page size succeeds with 4 KiB pages (0: none), as
                              a THP request that the kernel did not honour */
    bool echo;             /* print the text output */
    bool no_watchdog;      /* plat_guard_run refuses (a machine with one CPU) */
    size_t guards;         /* plat_guard_run calls that ran */
    /* clocks (bench/clock.c): the TSC rate sources, and the core clock each CPU measures (by CPU id) */
    struct plat_tsc_source tsc_src[4];
    size_t ntsc_src;
    struct core_clock clock[8];
    size_t clock_calls;    /* plat_core_clock calls so far */
    double clock_drift;    /* added to every CPU's ratio on each call after the first on that CPU */
    /* out */
    char *rec[FAKE_MAX_RECORDS]; /* emitted records, each one JSON line */
    size_t nrec;
    size_t allocs, live_allocs, text_lines, started;
};
extern struct fake_platform FAKE;

void fake_reset(void);
/* Records of a type, and the nth one of a type that contains needle (NULL: any). */
size_t fake_count(const char *type);
const char *fake_find(const char *type, const char *needle, size_t nth);
/* One of the latest FAKE_TEXT_KEEP plat_printf texts that contains needle, or NULL. */
#define FAKE_TEXT_KEEP 256
const char *fake_text_find(const char *needle);

#endif
