/* report.h - the machine-description records (run, cpu, topology, memory, acpi) and their text tables. */
#ifndef PMB_REPORT_H
#define PMB_REPORT_H

#include "kernel/json.h"

void report_run(void);
void report_machine(void);
void report_caches_json(struct json *j);
void report_pmu_json(struct json *j);

#endif
