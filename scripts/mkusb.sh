#!/bin/sh
# mkusb.sh EFI CFG OUT [MB2] - build a bootable USB disk image without root; with MB2 (the kernel as a
# Multiboot2 ELF, `make mb2`) one hybrid image that boots under UEFI and under legacy BIOS.
#
# Layout: GPT (sgdisk on the image file) with a protective MBR.
#  - Partition 1: FAT32 EFI System Partition (type EF00) from 1 MiB to 1 MiB before the end, holding
#    EFI/BOOT/BOOTX64.EFI (the removable-media fallback path, UEFI spec 2.x section 3.5.1), pmubench.cfg and,
#    with MB2, boot/pmubench.mb2.elf. The FAT is made in a separate file with mkfs.vfat + mtools and written
#    into the partition with dd, so no loop device or mount is needed.
#  - With MB2, partition 2: BIOS boot partition (type EF02, sectors 34-2047) holding GRUB's i386-pc core image
#    (grub-mkimage, Debian grub-pc-bin), and GRUB's boot.img in the MBR's code area. What grub-install would
#    patch is patched here (grub-core/boot/i386/pc/boot.S, diskboot.S): boot.img's kernel_sector (offset 0x5c,
#    u64) = the core image's first LBA and boot_drive (0x64) = 0xff, "the drive the BIOS booted from"; the
#    core image's first blocklist (last 12 bytes of its first sector: u64 start, u16 sectors, u16 segment)
#    starts at the sector after that. The MBR's disk signature and partition table (bytes 440-511) stay
#    sgdisk's. The core image's embedded config finds the ESP by the ELF's path and boots it at once with
#    pmubench.cfg as a Multiboot2 module (boot/mb2_parse.c reads it by that name).
# PMB_USB_MIB sets the image size in MiB (default 64; FAT32 needs at least 33).
set -eu

if [ $# -ne 3 ] && [ $# -ne 4 ]; then
    echo "usage: $0 EFI CFG OUT [MB2]" >&2
    exit 2
fi
EFI=$1
CFG=$2
OUT=$3
MB2=${4:-}
MIB=${PMB_USB_MIB:-64}
GRUB_PC=${PMB_GRUB_PC:-/usr/lib/grub/i386-pc}

for f in "$EFI" "$CFG" $MB2; do
    [ -f "$f" ] || { echo "mkusb: $f: no such file" >&2; exit 1; }
done
for t in sgdisk mkfs.vfat mmd mcopy; do
    command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || [ -x "/sbin/$t" ] || {
        echo "mkusb: $t not found (apt-get install gdisk dosfstools mtools)" >&2; exit 1; }
done
if [ -n "$MB2" ]; then
    command -v grub-mkimage >/dev/null 2>&1 && [ -f "$GRUB_PC/boot.img" ] || {
        echo "mkusb: grub-mkimage or $GRUB_PC/boot.img not found (apt-get install grub-pc-bin)" >&2; exit 1; }
fi
[ "$MIB" -ge 34 ] || { echo "mkusb: PMB_USB_MIB=$MIB is too small for FAT32 (>= 34)" >&2; exit 1; }
PATH=$PATH:/usr/sbin:/sbin
export MTOOLS_SKIP_CHECK=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mkusb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
img=$tmp/disk.img
part=$tmp/esp.img

SECTORS=$((MIB * 2048))          # 512-byte sectors
FIRST=2048                       # 1 MiB alignment
LAST=$((SECTORS - 2048 - 1))     # leave 1 MiB at the end for the backup GPT
COUNT=$((LAST - FIRST + 1))
CORE_FIRST=34                    # after the primary GPT (LBA 1 header, LBAs 2-33 entries)
CORE_LAST=$((FIRST - 1))
MB2_PATH=/boot/pmubench.mb2.elf

truncate -s "${MIB}M" "$img"
if [ -n "$MB2" ]; then
    sgdisk --clear -a 1 --new=1:$FIRST:$LAST --typecode=1:EF00 --change-name=1:"EFI System" \
        --new=2:$CORE_FIRST:$CORE_LAST --typecode=2:EF02 --change-name=2:"BIOS boot" "$img" >/dev/null
else
    sgdisk --clear --new=1:$FIRST:$LAST --typecode=1:EF00 --change-name=1:"EFI System" "$img" >/dev/null
fi

# -s 1: 512-byte clusters so a small partition still has the 65525+ clusters FAT32 requires.
# -h: hidden sectors = partition start, as firmware that reads the BPB expects.
mkfs.vfat -F 32 -s 1 -h $FIRST -n PMUBENCH -C "$part" $((COUNT / 2)) >/dev/null
mmd -i "$part" ::/EFI ::/EFI/BOOT
mcopy -i "$part" "$EFI" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$part" "$CFG" ::/pmubench.cfg
if [ -n "$MB2" ]; then
    mmd -i "$part" ::/boot
    mcopy -i "$part" "$MB2" ::$MB2_PATH
fi
dd if="$part" of="$img" bs=512 seek=$FIRST conv=notrunc status=none

if [ -n "$MB2" ]; then
    cat > "$tmp/early.cfg" <<CFGEOF
search --no-floppy --file --set=root $MB2_PATH
multiboot2 $MB2_PATH
module2 /pmubench.cfg pmubench.cfg
boot
CFGEOF
    grub-mkimage -O i386-pc -d "$GRUB_PC" -p /boot/grub -c "$tmp/early.cfg" -o "$tmp/core.img" \
        biosdisk part_gpt fat multiboot2 search search_fs_file
    core_bytes=$(stat -c %s "$tmp/core.img")
    [ "$core_bytes" -le $(((CORE_LAST - CORE_FIRST + 1) * 512)) ] || {
        echo "mkusb: core.img ($core_bytes bytes) does not fit the BIOS boot partition" >&2; exit 1; }
    cp "$GRUB_PC/boot.img" "$tmp/boot.img"
    le64() { # $1 as 8 little-endian bytes (octal escapes: POSIX printf has no \x)
        i=0
        while [ $i -lt 8 ]; do printf "\\$(printf %03o $((($1 >> (8 * i)) & 255)))"; i=$((i + 1)); done
    }
    le64 $CORE_FIRST | dd of="$tmp/boot.img" bs=1 seek=$((0x5c)) conv=notrunc status=none
    printf '\377' | dd of="$tmp/boot.img" bs=1 seek=$((0x64)) conv=notrunc status=none
    le64 $((CORE_FIRST + 1)) | dd of="$tmp/core.img" bs=1 seek=$((0x1f4)) conv=notrunc status=none
    dd if="$tmp/core.img" of="$img" bs=512 seek=$CORE_FIRST conv=notrunc status=none
    dd if="$tmp/boot.img" of="$img" bs=1 count=440 conv=notrunc status=none
fi

sgdisk --verify "$img" >/dev/null
mkdir -p "$(dirname "$OUT")"
mv "$img" "$OUT.tmp.$$"
mv "$OUT.tmp.$$" "$OUT"
if [ -n "$MB2" ]; then
    echo "mkusb: wrote $OUT (${MIB} MiB, ESP at sector $FIRST, $COUNT sectors; GRUB BIOS core at sector $CORE_FIRST)"
else
    echo "mkusb: wrote $OUT (${MIB} MiB, ESP at sector $FIRST, $COUNT sectors)"
fi
# The next step: the image is not a stick yet (docs/host-tools.md, "USB image").
echo "mkusb: next: write it to a whole USB stick (everything on it is lost; lsblk shows which /dev/sdX it is):"
echo "mkusb:   scripts/pmubench usb /dev/sdX      (refuses mounted or non-removable devices)"
echo "mkusb:   or: sudo dd if=$OUT of=/dev/sdX bs=4M conv=fsync"
echo "mkusb: then boot the machine from it (UEFI or legacy BIOS) and capture its serial port (docs/host-tools.md)"
