UNIT_TESTS += test_pmm
test_pmm_SRCS := tests/unit/test_pmm.c kernel/pmm.c
