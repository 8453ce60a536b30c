UNIT_TESTS += test_rand test_chain test_stats test_knee test_chase
test_rand_SRCS := tests/unit/test_rand.c bench/rand.c
test_chain_SRCS := tests/unit/test_chain.c bench/chain.c bench/rand.c
test_stats_SRCS := tests/unit/test_stats.c bench/stats.c bench/rand.c
test_knee_SRCS := tests/unit/test_knee.c bench/knee.c bench/stats.c bench/rand.c
test_chase_SRCS := tests/unit/test_chase.c bench/chase.c bench/chain.c bench/stats.c bench/rand.c
