# pmu.mk - host unit tests for the PMU layer (pmu/). The generated event tables come from
# build/gen/pmu_events.c (pmu/pmu.mk); test_pmu_libpfm also links libpfm4 to compare encodings.
PMU_TEST_GEN := build/gen/pmu_events.c
LIBPFM_SO := $(shell $(CC) -print-file-name=libpfm.so)

UNIT_TESTS += test_pmu_encode test_pmu_event test_pmu_model test_pmu_sched test_pmu_pebs test_pmu_lbr test_pmu_libpfm
test_pmu_encode_SRCS := tests/unit/test_pmu_encode.c pmu/encode.c pmu/event.c $(PMU_TEST_GEN)
test_pmu_event_SRCS := tests/unit/test_pmu_event.c pmu/event.c pmu/encode.c $(PMU_TEST_GEN)
test_pmu_model_SRCS := tests/unit/test_pmu_model.c pmu/pmu_model.c
test_pmu_sched_SRCS := tests/unit/test_pmu_sched.c pmu/sched.c pmu/event.c pmu/encode.c $(PMU_TEST_GEN)
test_pmu_pebs_SRCS := tests/unit/test_pmu_pebs.c pmu/pebs.c
test_pmu_lbr_SRCS := tests/unit/test_pmu_lbr.c pmu/lbr.c
test_pmu_libpfm_SRCS := tests/unit/test_pmu_libpfm.c pmu/event.c pmu/encode.c $(PMU_TEST_GEN) $(LIBPFM_SO)
