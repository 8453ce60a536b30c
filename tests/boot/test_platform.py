"""Platform boot tests (issue 2): CPU models, SMP counts, memory sizes, NUMA, config errors, USB image,
crash reports. Each boot takes a few seconds under TCG."""
import math
import os

import pytest

from conftest import USB_IMAGE, boot


def selftest(b, name):
    found = [r for r in b.run.by_type("selftest") if r["name"] == name]
    assert len(found) == 1, f"selftest {name}: {len(found)} records"
    return found[0]


def assert_common(b, status="ok"):
    run = b.run.run
    assert b.run.records[0]["type"] == "run"
    assert b.run.status == status
    assert b.result.status == status  # the isa-debug-exit code agrees with the end record
    for key in ("version", "cpu", "tsc_hz", "tsc_method", "core_tsc_ratio", "core_tsc_method",
                "memory_bytes", "cpus", "numa_nodes", "caches", "pmu", "config"):
        assert key in run, key
    for key in ("vendor", "family", "model", "stepping", "brand", "uarch"):
        assert key in run["cpu"], key
    return run


def assert_tcg_machine(run):
    # Under TCG: no PMU, and it says so; TSC calibrated against a real reference timer.
    assert run["pmu"]["version"] == 0
    assert run["pmu"]["status"] == "unavailable"
    assert run["pmu"]["reason"]
    assert run["tsc_method"] in ("acpi_pm_timer", "hpet")
    assert 1e8 < run["tsc_hz"] < 1e11
    assert run["core_tsc_method"] in ("add_rr_chain", "imul_chain")  # no APERF/MPERF under TCG
    assert math.isfinite(run["core_tsc_ratio"]) and run["core_tsc_ratio"] > 0
    assert run["profile"] == "quick"
    # Every reference the TSC was measured against (q35 has both timers; TCG has no CPUID 15h/16h rate), and
    # both core-clock chains with their verdict.
    assert run["tsc_hz_pm_timer"] > 0 and run["tsc_hz_hpet"] > 0 and run["tsc_hz_cpuid"] is None
    assert abs(run["tsc_hz_pm_timer"] / run["tsc_hz_hpet"] - 1) < 0.005
    assert run["core_tsc_ratio_add"] > 0 and run["core_tsc_ratio_imul"] > 0 and run["core_tsc_ratio_aperf"] is None
    assert run["core_tsc_agree"] in (True, False, None) and run["core_tsc_note"]
    # Turbo and C-states: read from CPUID, said plainly when they cannot be controlled or read.
    t, c = run["turbo"], run["cstates"]
    assert t["available"] is False and t["state"] == "not_available" and "CPUID" in t["reason"]
    assert t["requested"] == run["config"]["turbo"]
    assert t["cpus"]["applied"] == run["cpus"]
    assert c["available"] is False and c["reason"].startswith("not read: ") and c["idle"].startswith("spin on PAUSE")


def test_nehalem_smp2_1g():
    b = boot(cpu="Nehalem", smp=2, mem="1G")
    run = assert_common(b)
    assert_tcg_machine(run)
    assert run["cpu"]["vendor"] == "GenuineIntel"
    assert (run["cpu"]["family"], run["cpu"]["model"]) == (6, 0x1A)
    assert run["cpu"]["uarch"] == "Nehalem"
    assert run["cpus_madt"] == 2
    assert run["numa_nodes"] == 1
    assert 900 << 20 < run["memory_bytes"] <= 1 << 30
    levels = sorted((c["level"], c["type"]) for c in run["caches"])
    assert (1, "data") in levels and (3, "unified") in levels
    for t in ("cpu", "topology", "memory", "acpi"):
        b.one(t)
    st = selftest(b, "exception_fixup")
    assert st["status"] == "ok"
    checks = {c["name"]: c["status"] for c in st["checks"]}
    assert checks["noncanonical_load"] == "ok" and checks["null_page_load"] == "ok"
    assert checks["wrmsr_pkrs_reserved"] == "ok"  # a really faulting MSR write, fixed up
    assert checks["rdmsr_apic_base"] == "ok"
    topo = b.one("topology")
    assert [c["apic_id"] for c in topo["cpus"]] == [0, 1]
    mem = b.one("memory")
    assert mem["paging"]["pat"] == "0x407050600070106"
    assert mem["paging"]["pages_1g_supported"] is False  # Nehalem has no 1 GiB pages
    pg = selftest(b, "paging")
    assert pg["status"] == "ok"
    assert {c["page_bytes"]: c["status"] for c in pg["checks"]} == {4096: "ok", 2 << 20: "ok", 1 << 30: "skipped"}
    sigs = {t["sig"] for t in b.one("acpi")["tables"]}
    assert {"FACP", "APIC", "HPET", "DSDT"} <= sigs
    assert b.one("acpi")["s5"] is True
    timers = b.run.by_type("timer")
    assert {t["serialize"] for t in timers} == {"lfence", "cpuid"}
    for t in timers:   # statistics in TSC ticks (docs/records.md, "Statistics keys"), the median also in ns
        assert t["unit"] == "tsc" and t["median"] > 0 and t["n"] >= 1 and t["ns"] > 0, t
        assert t["min"] <= t["p10"] <= t["median"] <= t["p90"] <= t["max"], t
        assert math.isfinite(t["spread"]) and t["spread"] >= 0, t
        for k in ("median_tsc", "min_tsc", "p10_tsc", "p90_tsc", "cv", "samples", "median_ns", "tsc"):
            assert k not in t, k
    assert "Caches (cpuid.04h)" in b.log and "pmubench: run ok" in b.log


def test_max_smp4_2g():
    b = boot(cpu="max", smp=4, mem="2G")
    run = assert_common(b)
    assert_tcg_machine(run)
    # QEMU 7.2's TCG "max" model is an AMD family 0xF part (see docs/cpuid.md).
    assert run["cpu"]["vendor"] == "AuthenticAMD"
    assert run["cpu"]["family"] == 0xF
    assert run["cpus_madt"] == 4
    assert 1900 << 20 < run["memory_bytes"] <= 2 << 30
    st = selftest(b, "exception_fixup")
    assert st["status"] == "ok"
    checks = {c["name"]: c["status"] for c in st["checks"]}
    # -cpu max has XSAVE: XSETBV with XCR0.x87 clear must fault and be fixed up.
    assert checks["xsetbv_reserved"] == "ok"
    mem = b.one("memory")
    assert mem["paging"]["pages_1g_supported"] is True
    assert mem["paging"]["pages_1g"] > 0
    pg = selftest(b, "paging")
    assert pg["status"] == "ok"
    # 2 GiB of RAM holds no free 1 GiB-aligned gigabyte, so the 1 GiB check may be skipped here.
    assert {c["page_bytes"]: c["status"] for c in pg["checks"]}[2 << 20] == "ok"


def test_one_gib_pages_when_memory_allows():
    b = boot(cpu="max", smp=1, mem="4G", args="bench=none")
    pg = selftest(b, "paging")
    assert {c["page_bytes"]: c["status"] for c in pg["checks"]} == {4096: "ok", 2 << 20: "ok", 1 << 30: "ok"}
    assert pg["bytes"] == 1 << 30


def test_two_numa_nodes():
    b = boot(cpu="Nehalem", smp=4, mem="2G", numa=2)
    run = assert_common(b)
    assert run["numa_nodes"] == 2
    mem = b.one("memory")
    assert [n["node"] for n in mem["nodes"]] == [0, 1]
    assert all(n["bytes"] > 512 << 20 for n in mem["nodes"])
    topo = b.one("topology")
    assert topo["numa_from_srat"] is True
    assert sorted({c["node"] for c in topo["cpus"]}) == [0, 1]
    assert topo["slit"][0][0] == 10 and topo["slit"][0][1] > 10


def test_bad_config_file_ends_error():
    b = boot(cpu="Nehalem", smp=1, mem="512M", cfg_text="profile = quick\nbnch = all\n", timeout=60)
    assert b.run.status == "error" and b.result.status == "error"
    err = b.one("error")
    assert err["what"] == "config"
    assert "unknown key 'bnch'" in err["message"] and "pmubench.cfg:2" in err["message"]
    assert not b.run.by_type("timer")  # no benchmark ran


def test_bad_value_in_load_options_ends_error():
    b = boot(cpu="Nehalem", smp=1, mem="512M", args="profile=fast", timeout=60)
    assert b.run.status == "error"
    assert "bad value 'fast' for 'profile'" in b.one("error")["message"]


def test_unknown_benchmark_ends_error():
    b = boot(cpu="Nehalem", smp=1, mem="512M", cfg_text="bench=timer,nosuch\n", timeout=60)
    assert b.run.status == "error"
    assert "unknown benchmark 'nosuch'" in b.one("error")["message"]


def test_config_file_and_load_options_override():
    b = boot(cpu="Nehalem", smp=1, mem="512M", cfg_text="bench=timer\nseed=7\n", args="bench=none", timeout=60)
    run = assert_common(b)
    assert run["config"]["bench"] == "none"  # load options win over the file
    assert run["config"]["seed"] == "0x7"
    assert run["firmware"]["config_file"] is True
    assert not b.run.by_type("timer")


@pytest.mark.parametrize("kind,vector", [("ud", 6), ("gp", 13), ("pf", 14)])
def test_crash_report(kind, vector):
    b = boot(cpu="Nehalem", smp=1, mem="512M", args=f"crash_test={kind} bench=none", timeout=60)
    assert b.run.status == "crashed" and b.result.status == "crashed"
    crash = b.one("crash")
    assert crash["vector"] == vector
    assert crash["rip"].startswith("0x")
    assert "RIP " in b.log and "RAX " in b.log and "stack:" in b.log


def test_fault_inside_crash_report_does_not_recurse():
    b = boot(cpu="Nehalem", smp=1, mem="512M", args="crash_test=nested bench=none", timeout=60)
    assert b.run.status == "crashed" and b.result.status == "crashed"
    assert "fault inside the crash report" in b.log


def test_usb_image_boots_as_raw_disk():
    assert os.path.exists(USB_IMAGE), "build/pmubench-usb.img missing: run make usb"
    b = boot(disk=USB_IMAGE, cpu="Nehalem", smp=2, mem="1G")
    run = assert_common(b)
    assert run["firmware"]["config_file"] is True  # the image carries the default pmubench.cfg
    assert run["config"]["bench"] == "all"


def test_spcr_names_the_console():
    """An SPCR table (added with -acpitable) naming COM1 at 115200: the kernel takes its console from it."""
    spcr = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "acpi", "synthetic-2node", "SPCR.bin")
    b = boot(cpu="Nehalem", smp=1, mem="512M", args="bench=none", extra=["-acpitable", f"file={spcr}"])
    run = assert_common(b)
    assert run["serial"]["source"] == "spcr"
    assert run["serial"]["base"] == "0x3f8" and run["serial"]["baud"] == 115200
    assert "SPCR" in {t["sig"] for t in b.one("acpi")["tables"]}
    assert b.one("acpi")["spcr"] is True


def test_quick_firmware_start_boots_the_same_run(tmp_path):
    """`run`'s quick firmware start (2 MiB OVMF, a kept variable store, -nodefaults, no i8042) boots the image
    to the same records as the full start; only the firmware's own footprint differs (no boot-logo table
    without a display, a DSDT without the PS/2 devices, a little more free memory)."""
    cfg = "bench=timer,branch\n"
    full = boot(smp=2, mem="1G", cfg_text=cfg)
    cache = tmp_path / "vars"
    quick = [boot(smp=2, mem="1G", cfg_text=cfg, quick=True, vars_cache=str(cache)) for _ in range(2)]
    kept = list(cache.iterdir())
    assert len(kept) == 1                     # the first quick boot's store, used by the second
    for q in quick:
        assert "-nodefaults" in q.result.cmdline
        assert_common(q)
        assert [r["type"] for r in q.run.records] == [r["type"] for r in full.run.records]
        for key in ("identity", "features", "caches"):
            assert q.one("cpu")[key] == full.one("cpu")[key], key
        assert q.one("topology") == full.one("topology")
        assert ({k: v for k, v in q.one("smp").items() if k != "trampoline"} ==
                {k: v for k, v in full.one("smp").items() if k != "trampoline"})
        qr, fr = q.run.run, full.run.run
        assert (qr["cpu"], qr["cpus"], qr["caches"], qr["numa_nodes"]) == (fr["cpu"], fr["cpus"], fr["caches"],
                                                                           fr["numa_nodes"])
        assert abs(qr["memory_bytes"] / fr["memory_bytes"] - 1) < 0.01
        sigs = {t["sig"] for t in q.one("acpi")["tables"]}
        assert {t["sig"] for t in full.one("acpi")["tables"]} - sigs <= {"BGRT"} and "DSDT" in sigs
