UNIT_TESTS += test_cpuid
test_cpuid_SRCS := tests/unit/test_cpuid.c kernel/cpuid.c
