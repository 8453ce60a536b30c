/* serialize.h - how a timestamp read is fenced against the code it times (no asm: pure-logic code may include it). */
#ifndef PMB_MEASURE_SERIALIZE_H
#define PMB_MEASURE_SERIALIZE_H

/* How a timestamp read is fenced against the code it times (docs/measurement.md, "Serialization").
 * LFENCE (default): "lfence; rdtsc; lfence". LFENCE waits until all earlier instructions have completed
 *   locally and keeps later ones from starting (SDM Vol. 2B RDTSC: "execute LFENCE immediately after
 *   RDTSC"), so the dependent loads being timed cannot leak across the read. A few tens of cycles.
 *   On AMD LFENCE is dispatch-serializing only with DE_CFG (MSR C001_1029) bit 1 set (AMD, "Software
 *   Techniques for Managing Speculation on AMD Processors"); where that bit is not set, use CPUID.
 * CPUID: "cpuid; rdtsc; cpuid". CPUID is serializing on every x86 (SDM Vol. 3A, "Serializing
 *   Instructions") but costs ~100-200 cycles and traps to the hypervisor in a VM (microseconds, noisy):
 *   bare metal only. */
enum timing_serialize {
    TIMING_LFENCE = 0,
    TIMING_CPUID = 1,
};

#ifndef TIMING_DEFAULT_SERIALIZE
#define TIMING_DEFAULT_SERIALIZE TIMING_LFENCE
#endif

#endif
