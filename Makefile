# pmubench - build the UEFI image, host tests, QEMU boot tests and the USB image.
# `make run` boots it under QEMU; `make test` runs every test. See README.md.
#
# One Makefile, in this order: flags; the UEFI image; the generated PMU event tables; host unit tests (one table);
# the hosted runner; layer check, QEMU, USB and signing. Every object is compiled with -MMD -MP: gcc writes the
# headers it read into a .d file beside the object and make includes those (end of file), so editing a header
# rebuilds exactly the objects that include it. Everything built goes under $(BUILD), except $(GEN) (below).

.DEFAULT_GOAL := all

PYTHON   ?= /usr/bin/python3
CC       := gcc
LD       := ld
OBJCOPY  := objcopy
BUILD    := build
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GITREV   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# The objects that print the revision (PMB_GITREV) depend on this stamp, rewritten only when HEAD moved, so a
# run record never names the revision of an older build (make sees no change in a -D flag by itself).
GITREV_STAMP := $(BUILD)/gitrev.stamp
$(shell mkdir -p $(BUILD); [ "$$(cat $(GITREV_STAMP) 2>/dev/null)" = "$(GITREV)" ] || echo "$(GITREV)" > $(GITREV_STAMP))

EFI_INC  := /usr/include/efi
EFI_LIB  := /usr/lib
EFI_CRT0 := $(EFI_LIB)/crt0-efi-x86_64.o

# Generated PMU event tables. Fixed at build/gen, not under $(BUILD): pmu/pmu.c and pmu/counting.c include them
# as "build/gen/pmu_events.h" (found through -I.), the rest as "pmu_events.h" (through -I$(GEN)).
GEN      := build/gen
GEN_SRCS := $(GEN)/pmu_events.c $(GEN)/pmu_events.h

DEPFLAGS := -MMD -MP

# Freestanding kernel flags: -fpic because the whole image is one relocatable PE (gnu-efi's model),
# no red zone because exceptions arrive on the current stack, no stack protector (no runtime for it).
KCFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-builtin-printf -fpic \
           -fvisibility=hidden -fno-stack-protector -fno-stack-check -fno-strict-aliasing -fno-common \
           -mno-red-zone -fshort-wchar -DGNU_EFI_USE_MS_ABI -I. -I$(GEN) \
           -DPMB_VERSION=\"$(VERSION)\" -DPMB_GITREV=\"$(GITREV)\"
LDFLAGS := -nostdlib -znocombreloc -T linker.ld -shared -Bsymbolic --no-undefined

# Host unit tests: pure logic only, with sanitizers.
HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -DPMB_HOST -I. -I$(GEN) \
               -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# The hosted runner: -O2 like the kernel (the timed loop must compile to the same 64 dependent loads); no
# sanitizers, they would sit inside the measured code.
HOST_BENCH_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -DPMB_HOST -I. -pthread \
                     -DPMB_VERSION=\"$(VERSION)\" -DPMB_GITREV=\"$(GITREV)\"

# Host tools run at build time (the event-table generator): no sanitizers, libpfm4 leaks by design.
TOOL_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -DPMB_HOST -I.

.PHONY: all efi mb2 run test unit boot-test usb deps clean fixtures sign host-bench pmu-events check-layers
all: efi
efi: $(BUILD)/pmubench.efi

# ---- the UEFI image ---------------------------------------------------------------------------------------------
# The image is every .c and .S under IMAGE_DIRS (subfolders included) plus the generated event tables, minus
# HOST_ONLY_SRCS: code that lives beside the image's but only the hosted runner or the unit tests link (make
# patterns; a file listed here says "host-only" in its opening comment).
IMAGE_DIRS     := boot kernel measure bench pmu app
HOST_ONLY_SRCS := bench/hosted/%
# The BIOS boot stage (Multiboot2): only build/pmubench.mb2.elf links these (below, "the Multiboot2 ELF").
MB2_ONLY_SRCS  := boot/mb2_%

image_find = $(filter-out $(HOST_ONLY_SRCS) $(MB2_ONLY_SRCS),$(foreach d,$(IMAGE_DIRS),$(sort $(shell find $(d) -name '$(1)' 2>/dev/null))))
IMAGE_C_SRCS := $(call image_find,*.c) $(GEN)/pmu_events.c
IMAGE_S_SRCS := $(call image_find,*.S)
OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(IMAGE_C_SRCS)) $(patsubst %.S,$(BUILD)/obj/%.o,$(IMAGE_S_SRCS))

# Per-object extra flags. boot/ is the only code that sees gnu-efi's headers. klib implements memcpy/memset:
# keep gcc from turning its loops back into calls to themselves.
# ("private": not passed on to prerequisites such as the generated header.)
$(BUILD)/obj/boot/%.o:      private EXTRA_CFLAGS := -I$(EFI_INC) -I$(EFI_INC)/x86_64 -I$(EFI_INC)/protocol
$(BUILD)/obj/kernel/klib.o: private EXTRA_CFLAGS := -fno-builtin -fno-tree-loop-distribute-patterns
$(BUILD)/obj/boot/mb2_string.o: private EXTRA_CFLAGS := -fno-builtin -fno-tree-loop-distribute-patterns

# The generated header is order-only: it must exist before the first compile (no .d files yet); after that
# the .d files say which objects actually include it.
$(BUILD)/obj/%.o: %.c | $(GEN)/pmu_events.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KCFLAGS) $(EXTRA_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(KCFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/pmubench.so: $(OBJS) linker.ld
	@echo "  LD      $@"
	@$(LD) $(LDFLAGS) $(EFI_CRT0) $(OBJS) -L$(EFI_LIB) -lefi -lgnuefi -o $@

$(BUILD)/pmubench.efi: $(BUILD)/pmubench.so
	@$(OBJCOPY) -j .text -j .data -j .dynamic -j .dynsym -j .rela -j .reloc \
	    --target efi-app-x86_64 --subsystem=10 $< $@
	@echo "built $@ ($$(stat -c %s $@) bytes)"

# ---- the Multiboot2 ELF (BIOS boot through GRUB) ---------------------------------------------------------------
# The same objects as the UEFI image, the UEFI stage (boot/efi_main.c) swapped for the Multiboot2 one
# (MB2_ONLY_SRCS), linked static at 1 MiB by boot/mb2.ld. No second compile: the objects are -fpic with hidden
# visibility, so every reference is PC-relative or through a GOT slot the static link fills in, and the ELF
# needs no run-time relocation (`make mb2` fails if it would: --no-undefined, no dynamic sections kept).
MB2_ELF  := $(BUILD)/pmubench.mb2.elf
MB2_SRCS := $(sort $(shell find boot -name 'mb2_*.c' -o -name 'mb2_*.S'))
MB2_OBJS := $(filter-out $(BUILD)/obj/boot/efi_main.o,$(OBJS)) \
            $(patsubst %.S,$(BUILD)/obj/%.o,$(patsubst %.c,$(BUILD)/obj/%.o,$(MB2_SRCS)))

mb2: $(MB2_ELF)
$(MB2_ELF): $(MB2_OBJS) boot/mb2.ld
	@echo "  LD      $@"
	@$(LD) -nostdlib -static -z max-page-size=0x1000 --no-undefined -T boot/mb2.ld $(MB2_OBJS) -o $@
	@if readelf -r $@ | grep -q 'Relocation section'; then echo "$@: has run-time relocations" >&2; rm -f $@; exit 1; fi
	@echo "built $@ ($$(stat -c %s $@) bytes)"

# ---- generated PMU event tables ---------------------------------------------------------------------------------
# scripts/gen_pmu_events.c is a host program linked with libpfm4; it writes freestanding C that the image and
# the unit tests compile like any other source. The tables record the libpfm4 version they came from.
GEN_TOOL      := $(BUILD)/host/gen_pmu_events
GEN_TOOL_OBJS := $(BUILD)/tool/scripts/gen_pmu_events.o $(BUILD)/tool/pmu/encode.o
LIBPFM_PKG_VERSION = $(shell dpkg-query -W -f='$${Version}' libpfm4 2>/dev/null)

$(BUILD)/tool/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  TOOLCC  $<"
	@$(CC) $(TOOL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(GEN_TOOL): $(GEN_TOOL_OBJS)
	@mkdir -p $(dir $@)
	@echo "  TOOLLD  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $^ -lpfm

# One run writes both files (grouped target, GNU make >= 4.3).
$(GEN)/pmu_events.c $(GEN)/pmu_events.h &: $(GEN_TOOL)
	@mkdir -p $(GEN)
	$(GEN_TOOL) --pkg-version "$(LIBPFM_PKG_VERSION)" $(GEN)/pmu_events.c $(GEN)/pmu_events.h

pmu-events: $(GEN_SRCS)

# ---- host unit tests: one table ---------------------------------------------------------------------------------
# Each tests/unit/test_X.c is a cmocka program, linked with the pure-logic sources on its "test_X.links" line
# (and the libraries on an optional "test_X.libs" line). Sources are compiled once, for the host with
# sanitizers, into $(BUILD)/host/obj; the programs are $(BUILD)/host/test_X (`make build/host/test_acpi`).
# A test of a benchmark (tests/unit/test_X.c beside a bench/X.c) needs no line: it links BENCH_ON_FAKE_PLATFORM
# with -pthread (below the table). Any other new test is a new tests/unit/test_X.c plus one line here; a test
# file without a line is an error. The lists live here, not in the test files, so that one screen shows what
# every test links.

# The benchmarks: every bench/*.c but the image-only ones (the hosted runner links the same set, below), so a
# new benchmark file is in every list that links the registry without an edit here.
IMAGE_ONLY_BENCH := bench/platform_kernel.c bench/timer.c
BENCH_SRCS := $(filter-out $(IMAGE_ONLY_BENCH),$(wildcard bench/*.c))

# The benchmarks and the whole measure/ layer against a fake platform (malloc'd buffers, pthreads as CPUs,
# records kept in memory: tests/unit/bw_fake_platform.c) and scripted PMU counts (tests/unit/fake_pmu.c).
BENCH_ON_FAKE_PLATFORM := $(BENCH_SRCS) $(wildcard measure/*.c) kernel/core_clock.c kernel/config.c kernel/json.c \
    kernel/fmt.c kernel/guard.c tests/unit/bw_fake_platform.c tests/unit/fake_pmu.c

# test                        links (besides tests/unit/<test>.c)
test_acpi.links             := kernel/acpi.c
test_config.links           := kernel/config.c kernel/json.c kernel/fmt.c
test_core_clock.links       := kernel/core_clock.c kernel/json.c kernel/fmt.c
test_turbo.links            := kernel/turbo.c kernel/config.c kernel/json.c kernel/fmt.c
test_cpuid.links            := kernel/cpuid.c
test_fmt.links              := kernel/fmt.c
test_json.links             := kernel/json.c kernel/fmt.c
test_pmm.links              := kernel/pmm.c
test_mb2.links              := boot/mb2_parse.c kernel/fmt.c
test_record.links           := kernel/record.c kernel/crc32.c kernel/json.c kernel/fmt.c
test_run_desc.links         := kernel/run_desc.c kernel/config.c kernel/cpuid.c kernel/json.c kernel/fmt.c
test_rand.links             := measure/rand.c
test_chain.links            := measure/chain.c measure/rand.c
test_chain.libs             := -pthread
test_stats.links            := measure/stats.c measure/rand.c
test_knee.links             := measure/knee.c measure/stats.c measure/rand.c
test_engine.links           := measure/engine.c measure/stats.c
test_chase.links            := measure/chase.c measure/engine.c measure/chain.c measure/stats.c measure/rand.c
test_pmu_encode.links       := pmu/encode.c pmu/event.c $(GEN)/pmu_events.c
test_pmu_event.links        := pmu/event.c pmu/encode.c $(GEN)/pmu_events.c
test_pmu_sched.links        := pmu/sched.c pmu/event.c pmu/encode.c $(GEN)/pmu_events.c
test_pmu_usable.links       := pmu/usable.c pmu/sched.c pmu/event.c pmu/encode.c kernel/fmt.c $(GEN)/pmu_events.c
test_pmu_libpfm.links       := pmu/event.c pmu/encode.c $(GEN)/pmu_events.c
test_pmu_libpfm.libs        := -lpfm
test_pmu_model.links        := pmu/pmu_model.c pmu/encode.c
test_pmu_errata.links       := pmu/pmu_model.c pmu/encode.c pmu/pebs.c
test_pmu_pebs.links         := pmu/pebs.c
test_pmu_lbr.links          := pmu/lbr.c
test_selftest_judge.links   := pmu/selftest_judge.c kernel/fmt.c pmu/event.c pmu/encode.c pmu/pmu_model.c \
                               $(GEN)/pmu_events.c
test_lat_plan.links         := bench/lat_plan.c bench/cache_sizes.c kernel/fmt.c
test_bw_kernels.links       := bench/bw_kernels.c
test_bw_smbios.links        := bench/bw_smbios.c kernel/fmt.c
test_bench_events.links     := $(filter-out tests/unit/fake_pmu.c,$(BENCH_ON_FAKE_PLATFORM)) pmu/event.c pmu/encode.c \
                               pmu/pmu_model.c $(GEN)/pmu_events.c
test_bench_events.libs      := -pthread
test_verdict.links          := $(BENCH_ON_FAKE_PLATFORM)
test_verdict.libs           := -pthread
test_snippet_cfg.links      := bench/snippet_cfg.c kernel/config.c kernel/json.c kernel/fmt.c
test_snippet_gen.links      := bench/snippet_gen.c
test_guard_linux.links      := bench/hosted/guard_linux.c kernel/guard.c kernel/record.c kernel/crc32.c kernel/json.c \
                               kernel/fmt.c
test_guard_linux.libs       := -pthread

UNIT_TESTS := $(sort $(basename $(notdir $(wildcard tests/unit/test_*.c))))
# A benchmark's test without a line of its own (test_bandwidth, test_branch, test_penalty, test_clock, ...):
# the whole fake-platform set.
$(foreach t,$(UNIT_TESTS),$(if $(and $(wildcard bench/$(t:test_%=%).c),$(filter undefined,$(origin $(t).links))),\
    $(eval $(t).links := $$(BENCH_ON_FAKE_PLATFORM))$(eval $(t).libs := -pthread)))
UNIT_BINS  := $(addprefix $(BUILD)/host/,$(UNIT_TESTS))
unit_objs   = $(patsubst %.c,$(BUILD)/host/obj/%.o,tests/unit/$(1).c $($(1).links))
UNIT_OBJS  := $(sort $(foreach t,$(UNIT_TESTS),$(call unit_objs,$(t))))
# Writes "build/host/test_X: <its objects>" for every test; the one rule below links them all.
$(foreach t,$(UNIT_TESTS),$(eval $(BUILD)/host/$(t): $(call unit_objs,$(t))))

$(BUILD)/host/obj/%.o: %.c | $(GEN)/pmu_events.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(CC) $(HOST_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/host/test_%:
	$(if $(filter undefined,$(origin test_$*.links)),$(error tests/unit/test_$*.c has no "test_$*.links := ..." line in the Makefile's unit-test table))
	@echo "  HOSTLD  $@"
	@$(CC) $(HOST_CFLAGS) -o $@ $^ $(test_$*.libs) -lcmocka -lm

unit: deps $(UNIT_BINS)
	$(PYTHON) tests/run_tests.py --unit $(UNIT_BINS)

# ---- the hosted runner ------------------------------------------------------------------------------------------
# `make host-bench`: the benchmarks as a Linux program. The same measure/ and bench/ sources as the image, less
# the image-only ones (IMAGE_ONLY_BENCH), with bench/hosted/ in place of bench/platform_kernel.c, and the kernel's
# record stream (record.c, json.c, crc32.c, fmt.c), config parser and CPUID decoding for the same output.
HOST_BENCH  := $(BUILD)/host-bench/pmubench-host
# A host-only file (HOST_ONLY_SRCS) that the runner needs is added to HOSTED_SRCS by name.
HOSTED_SRCS := $(wildcard bench/hosted/*.c) $(BENCH_SRCS) $(wildcard measure/*.c) \
               kernel/record.c kernel/json.c kernel/crc32.c kernel/fmt.c kernel/config.c kernel/cpuid.c \
               kernel/run_desc.c kernel/core_clock.c kernel/guard.c
HOSTED_OBJS := $(patsubst %.c,$(BUILD)/host-bench/obj/%.o,$(HOSTED_SRCS))

$(BUILD)/host-bench/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(CC) $(HOST_BENCH_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(HOST_BENCH): $(HOSTED_OBJS)
	@mkdir -p $(dir $@)
	@echo "  HOSTLD  $@"
	@$(CC) $(HOST_BENCH_CFLAGS) -o $@ $^ -lm

host-bench: $(HOST_BENCH)

# Sources that print PMB_GITREV, in every build that compiles them.
GITREV_USERS := kernel/main.c kernel/report.c boot/efi_main.c boot/mb2_main.c bench/hosted/main.c
$(patsubst %.c,$(BUILD)/obj/%.o,$(GITREV_USERS)) $(patsubst %.c,$(BUILD)/host-bench/obj/%.o,$(GITREV_USERS)): \
	$(GITREV_STAMP)

# ---- layer check, QEMU, USB, signing ----------------------------------------------------------------------------
# Which top-level folder may include which: the table at the top of scripts/check_layers.py. `make test` runs it
# through tests/host/test_layers.py, so it counts in the final "N passed, N failed".
check-layers:
	$(PYTHON) scripts/check_layers.py

deps:
	@scripts/deps.sh

# As many vCPUs as the host has CPUs, 2 to 4: under TCG a vCPU with no host CPU of its own waits on the host's
# scheduler, and that wait is what c2c and loaded latency would time (docs/host-tools.md, "run").
RUN_SMP := $(shell n=$$(nproc 2>/dev/null || echo 4); [ $$n -gt 4 ] && n=4; [ $$n -lt 2 ] && n=2; echo $$n)
# RUN_OPTS: more `run` options, e.g. RUN_OPTS=--full-firmware-start (docs/host-tools.md, "run").
run: deps efi
	$(PYTHON) scripts/pmubench run --smp $(RUN_SMP) --mem 2G --out results $(RUN_OPTS)

usb: $(BUILD)/pmubench-usb.img
# One hybrid image: UEFI boots EFI/BOOT/BOOTX64.EFI from the ESP, a legacy BIOS boots GRUB from the BIOS boot
# partition, which starts the Multiboot2 ELF (scripts/mkusb.sh says how, without root).
$(BUILD)/pmubench-usb.img: $(BUILD)/pmubench.efi $(MB2_ELF) scripts/mkusb.sh scripts/pmubench.cfg
	scripts/mkusb.sh $(BUILD)/pmubench.efi scripts/pmubench.cfg $@ $(MB2_ELF)

boot-test: deps efi usb
	$(PYTHON) tests/run_tests.py --boot

# tests/host holds the host-tool tests and test_layers.py (the layer check); --boot adds tests/host and tests/boot.
test: deps efi usb $(UNIT_BINS)
	$(PYTHON) tests/run_tests.py --unit $(UNIT_BINS) --boot  # includes tests/host/test_layers.py: check_layers.py

# Serial logs of the real image under QEMU, checked in for the host-tool tests (tests/host/fixtures).
fixtures: deps efi
	$(PYTHON) scripts/make_fixtures.py

# Secure Boot: sign with your db key. Without KEY/CERT, Debian's OVMF test ("snakeoil") key is used,
# which only OVMF_VARS_4M.snakeoil.fd trusts - fine for the QEMU test, never for a real machine.
SNAKEOIL_KEY := /usr/share/ovmf/PkKek-1-snakeoil.key
SNAKEOIL_CERT := /usr/share/ovmf/PkKek-1-snakeoil.pem
sign: $(BUILD)/pmubench.efi
	@if [ -z "$(KEY)" ]; then echo "sign: no KEY=/CERT= given, using the OVMF snakeoil test key"; fi
	PMB_KEY_PASS=$${PMB_KEY_PASS:-snakeoil} scripts/sign.sh $(or $(KEY),$(SNAKEOIL_KEY)) \
	    $(or $(CERT),$(SNAKEOIL_CERT)) $(BUILD)/pmubench.efi $(BUILD)/pmubench.signed.efi

clean:
	rm -rf $(BUILD) $(GEN)

# Header dependencies written by -MMD (absent before the first build: hence -include).
-include $(patsubst %.o,%.d,$(sort $(OBJS) $(MB2_OBJS)) $(UNIT_OBJS) $(HOSTED_OBJS) $(GEN_TOOL_OBJS))
