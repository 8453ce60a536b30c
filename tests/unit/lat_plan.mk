UNIT_TESTS += test_lat_plan
test_lat_plan_SRCS := tests/unit/test_lat_plan.c bench/lat_plan.c bench/cache_sizes.c kernel/fmt.c
