/* bench_select.h - parse a bench= list against a benchmark table (shared by the image and the hosted runner). */
#ifndef PMB_BENCH_SELECT_H
#define PMB_BENCH_SELECT_H

#include "kernel/klib.h"

struct bench_desc;

/* "all" (or empty), "none", or comma-separated names of t[0..n). Fills sel[0..n); returns 0, or -1 with
 * a one-line error naming the unknown benchmark and listing the known ones. A row without a run function
 * (image-only, in the hosted runner) is never selected: "all" skips it, naming it is an error. */
int bench_select_in(const struct bench_desc *t, size_t n, const char *list, bool *sel, char *err, size_t errlen);

#endif
