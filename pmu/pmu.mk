# pmu.mk - event tables generated at build time from libpfm4 (scripts/gen_pmu_events.c).
# build/host/gen_pmu_events is a host program (links -lpfm); it writes freestanding C that the
# kernel compiles like any other source. Host unit tests list build/gen/pmu_events.c in SRCS.
KERNEL_GEN_SRCS += build/gen/pmu_events.c

# This fragment is included before the Makefile's own targets: keep "all" the default goal.
.DEFAULT_GOAL := all

LIBPFM_PKG_VERSION := $(shell dpkg-query -W -f='$${Version}' libpfm4 2>/dev/null)
PMU_GEN_DEPS := scripts/gen_pmu_events.c pmu/encode.c pmu/encode.h pmu/msr_pmu.h pmu/event.h kernel/klib.h

build/host/gen_pmu_events: $(PMU_GEN_DEPS)
	@mkdir -p build/host
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -DPMB_HOST -I. -o $@ scripts/gen_pmu_events.c pmu/encode.c -lpfm

# One run writes both files (grouped target, GNU make >= 4.3).
build/gen/pmu_events.c build/gen/pmu_events.h &: build/host/gen_pmu_events
	@mkdir -p build/gen
	build/host/gen_pmu_events --pkg-version "$(LIBPFM_PKG_VERSION)" build/gen/pmu_events.c build/gen/pmu_events.h

.PHONY: pmu-events
pmu-events: build/gen/pmu_events.c
