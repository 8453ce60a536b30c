#!/bin/sh
# sign.sh KEY CERT IN OUT - sign a UEFI image for Secure Boot with sbsign, then verify it.
#
# An encrypted PEM key is decrypted into a private temporary file with the passphrase from
# PMB_KEY_PASS (sbsign itself would prompt on the terminal). Test keys: Debian's ovmf package
# ships /usr/share/ovmf/PkKek-1-snakeoil.key/.pem (passphrase "snakeoil"), enrolled as PK, KEK
# and db in /usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd. Never use them for a real machine.
set -eu

if [ $# -ne 4 ]; then
    echo "usage: $0 KEY CERT IN OUT   (PMB_KEY_PASS=passphrase for an encrypted KEY)" >&2
    exit 2
fi
KEY=$1
CERT=$2
IN=$3
OUT=$4
for f in "$KEY" "$CERT" "$IN"; do
    [ -f "$f" ] || { echo "sign: $f: no such file" >&2; exit 1; }
done
command -v sbsign >/dev/null 2>&1 || { echo "sign: sbsign not found (apt-get install sbsigntool)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sign.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
if grep -q "ENCRYPTED" "$KEY"; then
    if [ -z "${PMB_KEY_PASS:-}" ]; then
        echo "sign: $KEY is encrypted; set PMB_KEY_PASS" >&2
        exit 1
    fi
    (umask 077; PMB_KEY_PASS=$PMB_KEY_PASS openssl pkey -in "$KEY" -passin env:PMB_KEY_PASS -out "$tmp/key.pem") || {
        echo "sign: cannot decrypt $KEY (wrong PMB_KEY_PASS?)" >&2; exit 1; }
    KEY=$tmp/key.pem
fi
# sbsign warns about gaps between PE sections in gnu-efi images; that is harmless.
sbsign --key "$KEY" --cert "$CERT" --output "$tmp/signed.efi" "$IN" 2>"$tmp/err" || {
    cat "$tmp/err" >&2; exit 1; }
sbverify --cert "$CERT" "$tmp/signed.efi" >/dev/null 2>&1 || {
    echo "sign: sbverify rejected the signed image" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
mv "$tmp/signed.efi" "$OUT"
echo "sign: wrote $OUT"
