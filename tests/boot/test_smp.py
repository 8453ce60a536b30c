"""SMP bring-up tests: -smp 1..8 all come up, jobs run on the right CPU, a hung job or a faulting AP
is reported without hanging the run."""
import pytest

from conftest import boot
from test_platform import selftest


@pytest.mark.parametrize("smp", [1, 2, 3, 8])
def test_all_cpus_come_up(smp):
    b = boot(cpu="Nehalem", smp=smp, mem="1G", args="bench=none")
    assert b.run.status == "ok"
    assert b.run.run["cpus"] == smp
    s = b.one("smp")
    assert s["cpus_listed"] == smp and s["cpus_online"] == smp
    assert [c["apic_id"] for c in s["cpus"]] == list(range(smp))
    assert all(c["online"] for c in s["cpus"])
    st = selftest(b, "smp")
    assert st["status"] == "ok"
    assert len(st["checks"]) == smp - 1


def test_max_cpus_limits_bring_up():
    b = boot(cpu="Nehalem", smp=4, mem="1G", args="bench=none max_cpus=2")
    assert b.run.run["cpus"] == 2
    s = b.one("smp")
    offline = [c for c in s["cpus"] if not c["online"]]
    assert len(offline) == 2 and all(c["reason"] == "beyond max_cpus" for c in offline)


def test_hung_job_times_out_and_run_goes_on():
    b = boot(cpu="Nehalem", smp=2, mem="1G", args="bench=timer crash_test=ap_hang")
    assert b.run.status == "ok"
    t = b.one("smp_timeout")
    assert t["cpu"] == 1
    assert b.run.by_type("timer")  # benchmarks still ran afterwards
    assert "run continues with 1 CPU" in b.log


def test_exception_on_ap_names_its_apic_id():
    b = boot(cpu="Nehalem", smp=2, mem="1G", args="bench=none crash_test=ap_ud")
    assert b.run.status == "crashed" and b.result.status == "crashed"
    crash = b.one("crash")
    assert crash["vector"] == 6 and crash["cpu"] == 1
    assert "on APIC ID 1" in b.log
