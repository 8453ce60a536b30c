#!/bin/sh
# mkusb.sh EFI CFG OUT - build a bootable USB disk image without root.
#
# Layout: GPT (sgdisk on the image file) with one FAT32 EFI System Partition (type EF00) from
# 1 MiB to 1 MiB before the end, holding EFI/BOOT/BOOTX64.EFI (the removable-media fallback
# path, UEFI spec 2.x section 3.5.1) and pmubench.cfg. The FAT is made in a separate file with
# mkfs.vfat + mtools and written into the partition with dd, so no loop device or mount is needed.
# PMB_USB_MIB sets the image size in MiB (default 64; FAT32 needs at least 33).
set -eu

if [ $# -ne 3 ]; then
    echo "usage: $0 EFI CFG OUT" >&2
    exit 2
fi
EFI=$1
CFG=$2
OUT=$3
MIB=${PMB_USB_MIB:-64}

for f in "$EFI" "$CFG"; do
    [ -f "$f" ] || { echo "mkusb: $f: no such file" >&2; exit 1; }
done
for t in sgdisk mkfs.vfat mmd mcopy; do
    command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || [ -x "/sbin/$t" ] || {
        echo "mkusb: $t not found (apt-get install gdisk dosfstools mtools)" >&2; exit 1; }
done
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

truncate -s "${MIB}M" "$img"
sgdisk --clear --new=1:$FIRST:$LAST --typecode=1:EF00 --change-name=1:"EFI System" "$img" >/dev/null

# -s 1: 512-byte clusters so a small partition still has the 65525+ clusters FAT32 requires.
# -h: hidden sectors = partition start, as firmware that reads the BPB expects.
mkfs.vfat -F 32 -s 1 -h $FIRST -n PMUBENCH -C "$part" $((COUNT / 2)) >/dev/null
mmd -i "$part" ::/EFI ::/EFI/BOOT
mcopy -i "$part" "$EFI" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$part" "$CFG" ::/pmubench.cfg
dd if="$part" of="$img" bs=512 seek=$FIRST conv=notrunc status=none

sgdisk --verify "$img" >/dev/null
mkdir -p "$(dirname "$OUT")"
mv "$img" "$OUT.tmp.$$"
mv "$OUT.tmp.$$" "$OUT"
echo "mkusb: wrote $OUT (${MIB} MiB, ESP at sector $FIRST, $COUNT sectors)"
