# pmubench - build the UEFI image, host tests, QEMU boot tests and the USB image.
# `make run` boots it under QEMU; `make test` runs every test. See README.md.

PYTHON   ?= /usr/bin/python3
CC       := gcc
LD       := ld
OBJCOPY  := objcopy
BUILD    := build
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GITREV   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

EFI_INC  := /usr/include/efi
EFI_LIB  := /usr/lib
EFI_CRT0 := $(EFI_LIB)/crt0-efi-x86_64.o

# Freestanding kernel flags: -fpic because the whole image is one relocatable PE (gnu-efi's model),
# no red zone because exceptions arrive on the current stack, no stack protector (no runtime for it).
KCFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-builtin-printf -fpic \
           -fvisibility=hidden -fno-stack-protector -fno-stack-check -fno-strict-aliasing -fno-common \
           -mno-red-zone -fshort-wchar -DGNU_EFI_USE_MS_ABI -I. -I$(BUILD)/gen \
           -DPMB_VERSION=\"$(VERSION)\" -DPMB_GITREV=\"$(GITREV)\"
BOOT_CFLAGS := $(KCFLAGS) -I$(EFI_INC) -I$(EFI_INC)/x86_64 -I$(EFI_INC)/protocol
LDFLAGS := -nostdlib -znocombreloc -T linker.ld -shared -Bsymbolic --no-undefined

# Host unit tests: pure logic only, with sanitizers.
HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -DPMB_HOST -I. -I$(BUILD)/gen \
               -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Every .c/.S under boot/ kernel/ bench/ pmu/ is part of the image (host-only code lives in
# subdirectories such as bench/hosted/ and scripts/). Fragments may add generated sources.
KERNEL_GEN_SRCS :=
UNIT_TESTS :=
include $(wildcard pmu/*.mk bench/*.mk kernel/*.mk tests/unit/*.mk)

BOOT_SRCS   := $(wildcard boot/*.c)
KERNEL_SRCS := $(wildcard kernel/*.c measure/*.c bench/*.c pmu/*.c) $(KERNEL_GEN_SRCS)
ASM_SRCS    := $(wildcard kernel/*.S)
OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(BOOT_SRCS) $(KERNEL_SRCS)) \
        $(patsubst %.S,$(BUILD)/obj/%.o,$(ASM_SRCS))
HEADERS := $(wildcard boot/*.h kernel/*.h measure/*.h bench/*.h pmu/*.h)

.PHONY: all efi run test unit boot-test usb deps clean fixtures sign host-bench
all: efi
efi: $(BUILD)/pmubench.efi

$(BUILD)/obj/boot/%.o: boot/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(BOOT_CFLAGS) -c $< -o $@

# klib implements memcpy/memset: keep gcc from turning its loops back into calls to themselves.
$(BUILD)/obj/kernel/klib.o: kernel/klib.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KCFLAGS) -fno-builtin -fno-tree-loop-distribute-patterns -c $< -o $@

$(BUILD)/obj/%.o: %.c $(HEADERS) | $(KERNEL_GEN_SRCS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KCFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.S $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KCFLAGS) -c $< -o $@

$(BUILD)/pmubench.so: $(OBJS) linker.ld
	@echo "  LD      $@"
	@$(LD) $(LDFLAGS) $(EFI_CRT0) $(OBJS) -L$(EFI_LIB) -lefi -lgnuefi -o $@

$(BUILD)/pmubench.efi: $(BUILD)/pmubench.so
	@$(OBJCOPY) -j .text -j .data -j .dynamic -j .dynsym -j .rela -j .reloc \
	    --target efi-app-x86_64 --subsystem=10 $< $@
	@echo "built $@ ($$(stat -c %s $@) bytes)"

# ---- host unit tests -------------------------------------------------------------------------
define unit_rule
$(BUILD)/host/$(1): $$($(1)_SRCS) $(HEADERS) | $(KERNEL_GEN_SRCS)
	@mkdir -p $(BUILD)/host
	@echo "  HOSTCC  $$@"
	@$(CC) $(HOST_CFLAGS) -o $$@ $$($(1)_SRCS) $$($(1)_LIBS) -lcmocka -lm
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_rule,$(t))))
UNIT_BINS := $(addprefix $(BUILD)/host/,$(UNIT_TESTS))

unit: deps $(UNIT_BINS)
	$(PYTHON) tests/run_tests.py --unit $(UNIT_BINS)

# ---- QEMU ----------------------------------------------------------------------------------
deps:
	@scripts/deps.sh

run: deps efi
	$(PYTHON) scripts/pmubench run --smp 4 --mem 2G --out results

usb: $(BUILD)/pmubench-usb.img
$(BUILD)/pmubench-usb.img: $(BUILD)/pmubench.efi scripts/mkusb.sh scripts/pmubench.cfg
	scripts/mkusb.sh $(BUILD)/pmubench.efi scripts/pmubench.cfg $@

boot-test: deps efi usb
	$(PYTHON) tests/run_tests.py --boot

test: deps efi usb $(UNIT_BINS)
	$(PYTHON) tests/run_tests.py --unit $(UNIT_BINS) --boot

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
	rm -rf $(BUILD)
