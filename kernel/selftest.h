/* selftest.h - start-up checks of the platform itself (exception fixups), reported as a record. */
#ifndef PMB_SELFTEST_H
#define PMB_SELFTEST_H

/* Runs faulting probes through the fixup table and emits a `selftest` record. Returns failures. */
int selftest_fixups(void);
/* Remaps a buffer with 4 KiB, 2 MiB and (if supported) 1 GiB pages and checks it; `selftest` record. */
int selftest_paging(void);
/* Runs a probe job on every AP (right CPU, caches on, SSE usable); `selftest` record. */
int selftest_smp(void);

#endif
