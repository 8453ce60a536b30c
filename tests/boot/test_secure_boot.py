"""Secure Boot: the real image signed with OVMF's enrolled test key boots; unsigned it is refused."""
import os
import shutil

import pytest

from conftest import IMAGE
from pmb import parse, qemu


def test_signed_image_boots_unsigned_is_refused():
    if not (shutil.which("sbsign") and os.path.exists(qemu.SNAKEOIL_KEY) and os.path.exists(qemu.OVMF_VARS_SNAKEOIL)):
        pytest.skip("sbsigntool or OVMF snakeoil keys missing")
    r = qemu.boot_secure(IMAGE, signed=True, cpu="Nehalem", smp=1, mem="512M", timeout=120)
    run = parse.parse_log(r.log)
    assert run.status == "ok" and r.status == "ok"
    r = qemu.boot_secure(IMAGE, signed=False, cpu="Nehalem", smp=1, mem="512M", timeout=120)
    assert r.status != "ok"
    assert '{"type":"run"' not in r.log
    assert "Access Denied" in r.log or "Security Violation" in r.log or "failed to load" in r.log
