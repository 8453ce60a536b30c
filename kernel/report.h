/* report.h - the machine-description records (run, cpu, smp, topology, memory, acpi) and their text tables. */
#ifndef PMB_REPORT_H
#define PMB_REPORT_H

#include "kernel/json.h"

/* The `run` record (the first record of every run), in two halves around the keys the layer above adds
 * (app/: "pmu"): report_run_begin opens it and writes the machine description (kernel/run_desc.h) up to
 * the caches; report_run_end(j) writes profile, config, firmware and serial, closes it and prints the
 * summary lines. */
struct json *report_run_begin(void);
void report_run_end(struct json *j);
/* The cpu, smp, topology, memory and acpi records (and acpi_table with acpi_dump=1), with their tables. */
void report_machine(void);

#endif
