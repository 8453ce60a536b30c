#!/usr/bin/python3
"""Regenerate tests/host/fixtures/*.log from the real image under QEMU TCG (`make fixtures`).

Each fixture is the raw serial log of one boot, firmware noise included, so the host-tool tests
run against exactly what the kernel prints."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from pmb import parse, qemu  # noqa: E402

OUT = os.path.join(ROOT, "tests", "host", "fixtures")
BOOTS = {
    # name: (boot kwargs, expected end status)
    "qemu-nehalem-smp4-numa2-all": (dict(cpu="Nehalem", smp=4, mem="2G", numa=2, args="bench=all"), "ok"),
    "qemu-max-smp2-latency": (dict(cpu="max", smp=2, mem="1G", args="bench=latency,bandwidth seed=2"), "ok"),
    "qemu-nehalem-pmu-dryrun": (dict(cpu="Nehalem", smp=2, mem="1G", args="bench=pmu pmu_assume=nhm trace_msr=1"),
                                "ok"),
    "qemu-bad-config": (dict(cpu="Nehalem", smp=1, mem="512M", cfg_text="bnch=all\n"), "error"),
    "qemu-crash-gp": (dict(cpu="Nehalem", smp=1, mem="512M", args="bench=none crash_test=gp"), "crashed"),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    image = os.path.join(ROOT, "build", "pmubench.efi")
    for name, (kw, want) in BOOTS.items():
        r = qemu.boot(image=image, timeout=300, **kw)
        run = parse.parse_log(r.raw)
        if run.status != want:
            sys.exit(f"make_fixtures: {name}: run ended {run.status}, expected {want}")
        with open(os.path.join(OUT, name + ".log"), "wb") as f:
            f.write(r.raw)
        print(f"{name}: {len(run.records)} records, {run.status}")


if __name__ == "__main__":
    main()
