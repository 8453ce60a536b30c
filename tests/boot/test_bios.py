"""BIOS boot: the same `make usb` image under QEMU's SeaBIOS (no OVMF), through the image's GRUB and Multiboot2
(boot/mb2_*), asserting the same records as the UEFI boot tests: CPU count, NUMA nodes, the Table 2 rows,
the end status and its CRC (checked by conftest.boot), and that the run record names the firmware."""
import os

import pytest

from conftest import USB_IMAGE, boot

SOURCES = ["L1", "L2", "L3_unshared", "L3_shared_other_core", "L3_modified_other_core", "remote_L3",
           "local_DRAM", "remote_DRAM"]


def bios_boot(**kw):
    if not os.path.exists(USB_IMAGE):
        pytest.fail("build/pmubench-usb.img missing: run make usb")
    return boot(disk=USB_IMAGE, firmware="bios", **kw)


def assert_bios_run(b, cpus, nodes):
    run = b.run.run
    assert run["firmware"]["kind"] == "bios" and run["firmware"]["vendor"].startswith("GRUB")
    assert run["firmware"]["config_file"] is True  # pmubench.cfg came as the Multiboot2 module
    assert run["cpus"] == cpus and run["cpus_madt"] == cpus
    assert run["numa_nodes"] == nodes
    assert run["tsc_method"] in ("acpi_pm_timer", "hpet")  # the RSDP came through GRUB's ACPI tag
    return run


def test_bios_nehalem_smp2_table2():
    b = bios_boot(cpu="Nehalem", smp=2, mem="1G", cfg_text="bench=latency\nmax_bytes=16M\n", timeout=150)
    assert b.run.status == "ok" and b.result.status == "ok"
    run = assert_bios_run(b, 2, 1)
    assert (run["cpu"]["family"], run["cpu"]["model"]) == (6, 0x1A)
    rows = b.run.by_type("data_source")
    assert [r["source"] for r in rows] == SOURCES  # every row, once, in the guide's order
    by = {r["source"]: r for r in rows}
    for s in ("L1", "L2", "L3_unshared", "L3_shared_other_core", "L3_modified_other_core", "local_DRAM"):
        assert by[s]["status"] == "ok" and by[s]["median"] > 0, s
    assert by["remote_L3"]["status"] == "unavailable" and by["remote_DRAM"]["status"] == "unavailable"
    assert b.run.records[-1]["type"] == "summary"


def test_bios_smp4_two_numa_nodes():
    b = bios_boot(cpu="Nehalem", smp=4, mem="2G", numa=2, cfg_text="bench=numa_latency,bandwidth\nmax_bytes=4M\n",
                  timeout=150)
    assert b.run.status == "ok" and b.result.status == "ok"
    assert_bios_run(b, 4, 2)
    numa = b.run.by_type("numa_latency")
    assert sorted((r["from_node"], r["to_node"]) for r in numa) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(r["status"] == "ok" and r["distance"] == (10 if r["from_node"] == r["to_node"] else 20)
               for r in numa)
    # SMBIOS without UEFI: GRUB's i386-pc loader gives no SMBIOS tag; the legacy 0xF0000 scan finds SeaBIOS's.
    assert b.one("bandwidth_peak")["source"] == "bios: SMBIOS 2.x entry point"


def test_bios_bad_config_ends_error():
    b = bios_boot(cpu="Nehalem", smp=1, mem="512M", cfg_text="profile = quick\nbnch = all\n", timeout=90)
    assert b.run.status == "error" and b.result.status == "error"
    assert b.run.run["firmware"]["kind"] == "bios"
    err = b.one("error")
    assert err["what"] == "config" and "unknown key 'bnch'" in err["message"]


def test_bios_halt_ends_with_a_final_line():
    """Without UEFI runtime services, on_finish=halt (or a power-off that did not work) halts after one last
    human line, never silently (the run itself has ended: its `end` record came before)."""
    from pmb import qemu
    r = qemu.boot(disk=USB_IMAGE, firmware="bios", cpu="Nehalem", smp=1, mem="512M",
                  cfg_text="bench=timer\non_finish=halt\n", timeout=6)
    assert r.status == "timeout"  # halted: QEMU keeps running until killed
    lines = [ln.strip("\r") for ln in r.log.splitlines()]
    assert any(ln.startswith('{"type":"end","status":"ok"') for ln in lines)
    assert "pmubench: halted (on_finish=halt)" in lines[-3:]


def test_bios_largest_config_is_read_whole():
    """The Multiboot2 path reads the same 256 KiB (kernel/config.h CFG_FILE_MAX) as the UEFI one: the largest file
    the snippet writer emits arrives whole (its 16 snippets run), one byte more is refused with the limit named."""
    from test_snippet import largest_config
    text, limit = largest_config()
    b = bios_boot(cpu="Nehalem", smp=2, mem="1G", cfg_text=text, timeout=600)
    assert b.run.status == "ok" and b.run.run["firmware"]["kind"] == "bios"
    assert len(b.run.by_type("snippet")) == 16
    b = bios_boot(cpu="Nehalem", smp=1, mem="512M", cfg_text=text + "#" * (limit + 1 - len(text)), timeout=90)
    assert b.run.status == "error"
    assert "pmubench.cfg: file larger than %d bytes" % limit in b.one("error")["message"]
