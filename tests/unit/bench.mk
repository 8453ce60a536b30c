UNIT_TESTS += test_rand test_chain test_stats test_knee test_chase test_engine
test_rand_SRCS := tests/unit/test_rand.c measure/rand.c
test_chain_SRCS := tests/unit/test_chain.c measure/chain.c measure/rand.c
test_stats_SRCS := tests/unit/test_stats.c measure/stats.c measure/rand.c
test_knee_SRCS := tests/unit/test_knee.c measure/knee.c measure/stats.c measure/rand.c
test_chase_SRCS := tests/unit/test_chase.c measure/chase.c measure/engine.c measure/chain.c measure/stats.c measure/rand.c
test_engine_SRCS := tests/unit/test_engine.c measure/engine.c measure/stats.c
