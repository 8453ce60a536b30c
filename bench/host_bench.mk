# host_bench.mk - `make host-bench`: the benchmarks built as a Linux program (build/host-bench/pmubench-host).
# Same bench/ sources as the UEFI image, with bench/hosted/platform_linux.c in place of bench/platform_kernel.c,
# and the kernel's record stream (record.c, json.c, crc32.c, fmt.c) and config parser for the same output.

# This fragment is included before the Makefile's own targets: keep "all" the default goal.
.DEFAULT_GOAL := all

HOST_BENCH := build/host-bench/pmubench-host
HOST_BENCH_SRCS := bench/hosted/main.c bench/hosted/platform_linux.c bench/bench_select.c \
	bench/latency.c bench/lat_common.c bench/lat_plan.c bench/lat_sweep.c bench/lat_table2.c \
	bench/lat_c2c.c bench/lat_numa.c bench/bandwidth.c bench/cache_sizes.c bench/bw_kernels.c bench/bw_smbios.c bench/branch.c \
	bench/penalty.c bench/cycle_accounting.c measure/chain.c measure/chase.c measure/engine.c measure/stats_json.c measure/stats.c measure/knee.c measure/rand.c \
	kernel/record.c kernel/json.c kernel/crc32.c kernel/fmt.c kernel/config.c kernel/cpuid.c
HOST_BENCH_HDRS := $(wildcard measure/*.h bench/*.h bench/hosted/*.h) kernel/record.h kernel/json.h kernel/config.h \
	kernel/cpuid.h kernel/fmt.h kernel/klib.h kernel/crc32.h
# -O2 like the kernel (the timed loop must compile to the same 64 dependent loads); no sanitizers: they
# would sit inside the measured code.
HOST_BENCH_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -DPMB_HOST -I. -pthread \
	-DPMB_VERSION=\"$(VERSION)\" -DPMB_GITREV=\"$(GITREV)\"

host-bench: $(HOST_BENCH)

$(HOST_BENCH): $(HOST_BENCH_SRCS) $(HOST_BENCH_HDRS) bench/host_bench.mk
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(CC) $(HOST_BENCH_CFLAGS) -o $@ $(HOST_BENCH_SRCS) -lm
