UNIT_TESTS += test_json
test_json_SRCS := tests/unit/test_json.c kernel/json.c kernel/fmt.c
