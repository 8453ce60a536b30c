#!/bin/sh
# deps.sh - make sure the Debian packages pmubench builds and tests with are installed.
# As root it installs what is missing; otherwise it prints the exact apt-get line and fails.
PKGS="gcc make binutils gnu-efi ovmf qemu-system-x86 mtools dosfstools gdisk fdisk libpfm4-dev libcmocka-dev python3 python3-pytest python3-matplotlib python3-psycopg postgresql sbsigntool acpica-tools grub-pc-bin chromium"
# One dpkg-query for all of them (one per package took 0.4 s of every `make run`).
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null |
              awk '$2 == "install" && $3 == "ok" && $4 == "installed" { printf "%s ", $1 }')"
missing=""
for p in $PKGS; do
    case "$installed" in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "deps: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq $missing >/dev/null || {
        echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
else
    echo "deps: missing Debian packages; run: sudo apt-get install -y$missing" >&2
    exit 1
fi
