# bandwidth.mk - host tests of the bandwidth, branch, penalty and cycle-accounting benchmarks. The benchmark
# code runs against tests/unit/bw_fake_platform.c (malloc'd buffers, pthreads as CPUs, records kept in memory).
BW_TEST_BENCH := bench/bandwidth.c bench/cache_sizes.c bench/bw_kernels.c bench/bw_smbios.c bench/branch.c bench/penalty.c \
	bench/cycle_accounting.c measure/chain.c measure/chase.c measure/engine.c measure/stats_json.c measure/stats.c measure/rand.c \
	kernel/json.c kernel/fmt.c tests/unit/bw_fake_platform.c

UNIT_TESTS += test_bw_kernels test_bw_smbios test_branch test_penalty test_cycle_accounting test_bandwidth
test_bw_kernels_SRCS := tests/unit/test_bw_kernels.c bench/bw_kernels.c
test_bw_smbios_SRCS := tests/unit/test_bw_smbios.c bench/bw_smbios.c
test_branch_SRCS := tests/unit/test_branch.c $(BW_TEST_BENCH)
test_penalty_SRCS := tests/unit/test_penalty.c $(BW_TEST_BENCH)
test_cycle_accounting_SRCS := tests/unit/test_cycle_accounting.c $(BW_TEST_BENCH)
test_bandwidth_SRCS := tests/unit/test_bandwidth.c $(BW_TEST_BENCH)
test_branch_LIBS := -pthread
test_penalty_LIBS := -pthread
test_cycle_accounting_LIBS := -pthread
test_bandwidth_LIBS := -pthread
