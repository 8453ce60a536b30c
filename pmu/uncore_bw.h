/* uncore_bw.h - memory bandwidth from the uncore (Nehalem/Westmere QMC/QHL) or the AMD northbridge, per socket. */
#ifndef PMB_PMU_UNCORE_BW_H
#define PMB_PMU_UNCORE_BW_H

#include "kernel/klib.h"

#define UNCORE_BW_MAX_COUNTERS 8 /* uncore PMC0-7 ([SDM] 18.8.2); family 15h has 4 NB counters */
#define UNCORE_BW_MAX_SOCKETS 16

/* One load per 64-byte line of [buf, buf + bytes) (returns their sum, so the loads stay), and one
 * store per line: the known streams of the bandwidth step and the self-test's uncore check. */
uint64_t pmu_stream_read(const void *buf, size_t bytes);
void pmu_stream_write(void *buf, size_t bytes, uint64_t v);

/*
 * The `pmu` benchmark's bandwidth step, per socket (per northbridge on AMD). For every socket: a CPU
 * of that socket, a stream buffer of `bytes` allocated on that CPU's NUMA node (the memory whose
 * controller is counted), and on that CPU the socket's counters around one read pass and one write
 * pass over it:
 *   Nehalem/Westmere  uncore UNC_QMC_NORMAL_READS.ANY, UNC_QMC_WRITES.FULL.ANY ([PAG] Table 32),
 *                     UNC_QHL_REQUESTS.LOCAL/REMOTE_READS/WRITES (Table 31), the uncore clock;
 *                     bytes = 64 x lines ([PAG] "Measuring Bandwidth From the Uncore")
 *   AMD family 10h    the northbridge events on the core counters of a core of that node ([AMD]
 *                     4.2.2): System_read 6CH/07H x 64, System_write 6DH/01H x 16, DRAM accesses
 *                     E0H/07H (DCT0) + E0H/38H (DCT1) x 64
 *   AMD family 15h    the same DRAM accesses on the northbridge counters (MSRC001_0240..), where
 *                     CPUID 8000_0001h:ECX[24] PerfCtrExtNB says they exist
 * A socket's counters are programmed by a CPU on it: the BSP's socket through pmu/counting.h, any
 * other through the same MSR sequence run on that socket's CPU (its pmu_measure record is emitted by
 * the BSP with "cpu" naming where the accesses happen). Records: one `pmu_counting` per socket
 * (what uncore_bandwidth | dram_bandwidth, socket, node, cpu, bytes, elapsed_tsc, the counters,
 * read/write(/dram)_bytes_per_s) and one `uncore_bandwidth` summary: per socket, the total, and every
 * socket not read with the reason. Models without such counters get the summary with status
 * "unavailable" and the reason. Call on the BSP with no record open.
 */
void pmu_uncore_bandwidth(size_t bytes);

/* Family 10h DRAM controllers ganged: F2x110 DRAM Controller Select Low (bus 0, device 18H + node,
 * function 2, offset 110H) bit 4 DctGangEn, "both DCTs ganged to form a single 128-bit interface"
 * (BKDG 31116). */
#define AMD10_PCI_DEV_NODE0 0x18
#define AMD10_PCI_FN_DRAM 2
#define AMD10_F2X110 0x110
#define AMD10_F2X110_DCT_GANG_EN (1u << 4)

/* 64-byte DRAM accesses of a family 10h node from its DRAM-accesses counts on DCT0 (E0H/07H) and DCT1
 * (E0H/38H). Unganged (ganged 0) the DCTs serve different lines: the sum. Ganged (1) one 64-byte line
 * is one 128-bit access that DCT0 controls on both channels (AGESA's address translation maps every
 * address to DCT0's chip selects then, the channel being address bit 3: the two 64-bit halves); the
 * BKDG does not say whether DCT1's event logic counts that lockstep half too, so DCT0 alone, which is
 * right either way (the record keeps both counts: dct1 ~ dct0 means both count, ~0 means once).
 * Unknown (-1: no northbridge device answers, e.g. an emulator): the sum. */
static inline uint64_t pmu_amd10_dram_lines(uint64_t dct0, uint64_t dct1, int ganged)
{
    return ganged > 0 ? dct0 : dct0 + dct1;
}

#endif
