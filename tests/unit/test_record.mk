UNIT_TESTS += test_record
test_record_SRCS := tests/unit/test_record.c kernel/record.c kernel/crc32.c kernel/json.c kernel/fmt.c
