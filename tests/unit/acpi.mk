UNIT_TESTS += test_acpi
test_acpi_SRCS := tests/unit/test_acpi.c kernel/acpi.c
