"""QEMU boot tests: boot the real image under OVMF (TCG) and assert on its records."""
import os
import sys
import zlib

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from pmb import parse, qemu  # noqa: E402

IMAGE = os.path.join(ROOT, "build", "pmubench.efi")
USB_IMAGE = os.path.join(ROOT, "build", "pmubench-usb.img")


def independent_crc(lines):
    """CRC-32 over the record lines exactly as the output contract defines it (not pmb's code)."""
    crc = 0
    for line in lines:
        crc = zlib.crc32(line.encode() + b"\n", crc)
    return f"{crc:08x}"


class Booted:
    def __init__(self, result):
        self.result = result
        self.log = result.log
        self.run = parse.parse_log(result.log)

    def one(self, t):
        recs = self.run.by_type(t)
        assert len(recs) == 1, f"expected one {t} record, got {len(recs)}"
        return recs[0]


def boot(**kw):
    if not os.path.exists(IMAGE) and "disk" not in kw:
        pytest.fail("build/pmubench.efi missing: run make first")
    kw.setdefault("timeout", 90)
    r = qemu.boot(image=None if "disk" in kw else IMAGE, **kw)
    assert r.status != "timeout", f"QEMU timed out: {r.reason}\n{r.log[-3000:]}"
    b = Booted(r)
    lines = b.run.lines
    # The end record counts and checksums every record before it (independent recomputation).
    assert b.run.end["records"] == len(lines) - 1
    assert b.run.end["crc32"] == independent_crc(lines[:-1])
    for line in b.log.splitlines():
        s = line.strip("\r\x00")
        if s.startswith("{") and not s.startswith('{"type"'):
            pytest.fail(f"a non-record line starts with '{{': {s[:80]}")
    return b
