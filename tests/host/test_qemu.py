"""pmb.qemu: command-line construction (pure) and real OVMF boots of a tiny stand-in EFI app
(tests/host/efi/echo.c) that proves load options, serial capture and isa-debug-exit work."""
import json
import os
import shutil
import subprocess

import pytest

import logs
from pmb import cli, qemu, usb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ECHO_C = os.path.join(HERE, "efi", "echo.c")
GNU_EFI = ["/usr/lib/crt0-efi-x86_64.o", "/usr/lib/elf_x86_64_efi.lds", "/usr/lib/libefi.a", "/usr/include/efi/efi.h"]
HAVE_QEMU = shutil.which(qemu.QEMU) is not None and os.path.exists(qemu.OVMF_CODE)
HAVE_EFI = all(os.path.exists(p) for p in GNU_EFI) and shutil.which("gcc") is not None
needs_boot = pytest.mark.skipif(not (HAVE_QEMU and HAVE_EFI) or os.environ.get("PMB_SKIP_QEMU") == "1",
                                reason="needs qemu-system-x86, ovmf and gnu-efi (or PMB_SKIP_QEMU=1)")


# ---- pure --------------------------------------------------------------------------------------

def opt(cmd, flag):
    return [cmd[i + 1] for i, c in enumerate(cmd) if c == flag]


def test_cmdline_basics():
    cmd = qemu.build_cmdline(esp_dir="/tmp/esp", vars_path="/tmp/vars.fd", smp=2, mem="512M")
    assert cmd[0] == "qemu-system-x86_64"
    assert opt(cmd, "-machine") == ["q35"] and opt(cmd, "-accel") == ["tcg"] and opt(cmd, "-cpu") == ["max"]
    assert opt(cmd, "-smp") == ["2"] and opt(cmd, "-m") == ["512M"]
    drives = opt(cmd, "-drive")
    assert "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd" in drives
    assert "if=pflash,format=raw,unit=1,file=/tmp/vars.fd" in drives
    assert "format=raw,file=fat:rw:/tmp/esp" in drives
    assert "isa-debug-exit,iobase=0xf4,iosize=0x04" in opt(cmd, "-device")
    assert opt(cmd, "-serial") == ["stdio"] and opt(cmd, "-display") == ["none"]
    assert "-no-reboot" in cmd and opt(cmd, "-nic") == ["none"]


def test_cmdline_kvm_cpu():
    cmd = qemu.build_cmdline(esp_dir="/e", accel="kvm")
    assert opt(cmd, "-accel") == ["kvm"] and opt(cmd, "-cpu") == ["host,pmu=on"]
    assert opt(qemu.build_cmdline(esp_dir="/e", accel="kvm", cpu="Skylake-Server"), "-cpu") == ["Skylake-Server"]


def test_cmdline_bios_has_no_ovmf_and_a_plain_drive():
    cmd = qemu.build_cmdline(disk="/tmp/usb.img", firmware="bios", cpu="Nehalem")
    drives = opt(cmd, "-drive")
    assert not any("pflash" in d for d in drives)  # QEMU's own SeaBIOS
    assert drives == ["format=raw,snapshot=on,file=/tmp/usb.img"]
    assert "usb-storage,bus=xhci.0,drive=pmbusb" not in opt(cmd, "-device")


def test_bios_boot_refuses_what_needs_uefi(tmp_path):
    img = tmp_path / "usb.img"
    img.write_bytes(b"\0" * 512)
    for kw in ({"args": "bench=timer"}, {"secure_boot": True}):
        with pytest.raises(qemu.QemuError, match="BIOS boot needs the disk image"):
            qemu.boot(disk=str(img), firmware="bios", **kw)
    with pytest.raises(qemu.QemuError, match="BIOS boot needs the disk image"):
        qemu.boot(image=str(img), firmware="bios")
    with pytest.raises(qemu.QemuError, match="firmware must be uefi or bios"):
        qemu.boot(disk=str(img), firmware="coreboot")


def test_cmdline_numa_two_nodes():
    cmd = qemu.build_cmdline(esp_dir="/e", smp=4, mem="2G", numa=2)
    assert opt(cmd, "-object") == ["memory-backend-ram,id=pmbmem0,size=1024M",
                                   "memory-backend-ram,id=pmbmem1,size=1024M"]
    assert opt(cmd, "-numa") == ["node,nodeid=0,memdev=pmbmem0,cpus=0-1", "node,nodeid=1,memdev=pmbmem1,cpus=2-3",
                                 "dist,src=0,dst=1,val=20"]


def test_numa_uneven_and_single_cpu():
    assert qemu.numa_args(2, 3, 1 << 30)[3] == "node,nodeid=0,memdev=pmbmem0,cpus=0-1"
    a = qemu.numa_args(2, 1, 1 << 30)
    assert "node,nodeid=0,memdev=pmbmem0,cpus=0" in a and "node,nodeid=1,memdev=pmbmem1" in a
    assert qemu.numa_args(0, 4, 1 << 30) == [] and qemu.numa_args(1, 4, 1 << 30) == []
    with pytest.raises(ValueError):
        qemu.numa_args(3, 3, 1 << 30)


def test_cmdline_secure_boot_and_disk():
    cmd = qemu.build_cmdline(disk="/x/usb.img", secure_boot=True, ovmf_code=qemu.OVMF_CODE_SECBOOT)
    assert opt(cmd, "-machine") == ["q35,smm=on"]
    assert opt(cmd, "-global") == ["driver=cfi.pflash01,property=secure,value=on"]
    assert "if=none,id=pmbusb,format=raw,snapshot=on,file=/x/usb.img" in opt(cmd, "-drive")
    assert "usb-storage,bus=xhci.0,drive=pmbusb" in opt(cmd, "-device")
    assert not any("fat:" in d for d in opt(cmd, "-drive"))


def test_cmdline_quick_start_drops_default_devices_and_the_i8042():
    cmd = qemu.build_cmdline(esp_dir="/e", smp=2, mem="2G", quick=True)
    assert opt(cmd, "-machine") == ["q35,i8042=off"] and "-nodefaults" in cmd
    assert opt(cmd, "-serial") == ["stdio"] and "isa-debug-exit,iobase=0xf4,iosize=0x04" in opt(cmd, "-device")
    plain = qemu.build_cmdline(esp_dir="/e", smp=2, mem="2G")
    assert opt(plain, "-machine") == ["q35"] and "-nodefaults" not in plain


def fake_firmware(tmp_path):
    code, tmpl = tmp_path / "code.fd", tmp_path / "vars.fd"
    code.write_bytes(b"C" * 4096)
    tmpl.write_bytes(b"\xff" * 4096)
    img = tmp_path / "a.efi"
    img.write_bytes(b"MZ")
    return str(code), str(tmpl), str(img)


def test_kept_vars_path_keys_on_firmware_content_and_command_line(tmp_path):
    code, tmpl, _ = fake_firmware(tmp_path)
    cache = str(tmp_path / "cache")
    cmd = ["qemu", "-drive", "if=pflash,unit=1,file=/tmp/pmb-qemu-a/OVMF_VARS.fd", "-smp", "2"]
    p = qemu.kept_vars_path(cache, code, tmpl, cmd, "/tmp/pmb-qemu-a")
    assert os.path.dirname(p) == cache
    # The per-boot directory is not part of the key; the rest of the command line and the firmware are.
    other_tmp = [c.replace("pmb-qemu-a", "pmb-qemu-b") for c in cmd]
    assert qemu.kept_vars_path(cache, code, tmpl, other_tmp, "/tmp/pmb-qemu-b") == p
    assert qemu.kept_vars_path(cache, code, tmpl, cmd[:-1] + ["4"], "/tmp/pmb-qemu-a") != p
    open(code, "ab").write(b"x")
    assert qemu.kept_vars_path(cache, code, tmpl, cmd, "/tmp/pmb-qemu-a") != p


def test_quick_start_keeps_the_store_of_a_boot_that_ended_ok(tmp_path, monkeypatch):
    code, tmpl, img = fake_firmware(tmp_path)
    cache = tmp_path / "cache"
    seen = []

    def fake_run(cmd, accel, timeout, *rest):
        vars_file = next(d for d in opt(cmd, "-drive") if "unit=1" in d).split("file=", 1)[1]
        seen.append(open(vars_file, "rb").read())
        with open(vars_file, "r+b") as f:     # what the firmware writes during this boot
            f.write(b"boot%d" % len(seen))
        status = "error" if len(seen) == 1 else "ok"
        return qemu.BootResult(b"", 3 if status == "error" else 1, status, "", accel, cmd, "", 0.1)

    monkeypatch.setattr(qemu, "_run", fake_run)
    kw = dict(image=img, ovmf_code=code, ovmf_vars=tmpl, quick=True, vars_cache=str(cache))
    assert qemu.boot(**kw).status == "error"
    assert not cache.exists()                 # a boot that did not end ok keeps nothing
    assert qemu.boot(**kw).status == "ok"
    kept = list(cache.iterdir())
    assert len(kept) == 1 and kept[0].read_bytes()[:5] == b"boot2"
    assert qemu.boot(**kw).status == "ok"     # starts from the kept store, which stays as it was
    assert seen[0] == seen[1] == b"\xff" * 4096 and seen[2][:5] == b"boot2"
    assert kept[0].read_bytes()[:5] == b"boot2"
    qemu.boot(image=img, ovmf_code=code, ovmf_vars=tmpl, vars_cache=str(cache))   # not quick: template
    assert seen[3] == b"\xff" * 4096 and len(list(cache.iterdir())) == 1


def test_quick_start_prefers_the_2m_ovmf_pair(tmp_path, monkeypatch):
    _, _, img = fake_firmware(tmp_path)
    cmds = []
    monkeypatch.setattr(qemu, "_run", lambda cmd, accel, *rest: cmds.append(cmd) or
                        qemu.BootResult(b"", 1, "ok", "", accel, cmd, "", 0.1))
    qemu.boot(image=img, quick=True)
    qemu.boot(image=img)
    qemu.boot(image=img, quick=True, firmware="uefi", ovmf_code=qemu.OVMF_CODE, ovmf_vars=qemu.OVMF_VARS)
    code = [next(d for d in opt(c, "-drive") if "unit=0" in d) for c in cmds]
    if os.path.exists(qemu.OVMF_CODE_QUICK) and os.path.exists(qemu.OVMF_VARS_QUICK):
        assert code[0].endswith("file=" + qemu.OVMF_CODE_QUICK)
    assert code[1].endswith("file=" + qemu.OVMF_CODE) and code[2].endswith("file=" + qemu.OVMF_CODE)
    assert "-nodefaults" in cmds[0] and "-nodefaults" not in cmds[1]


def test_parse_size():
    assert qemu.parse_size("1G") == 1 << 30 and qemu.parse_size("512m") == 512 << 20
    assert qemu.parse_size("65536") == 65536 and qemu.parse_size("2GiB") == 2 << 30
    for bad in ("", "1X", "-1G", "G"):
        with pytest.raises(ValueError):
            qemu.parse_size(bad)


def test_status_from_exit():
    assert [qemu.status_from_exit(c) for c in (1, 3, 5, 0, 2, None)] == ["ok", "error", "crashed", "unknown",
                                                                         "unknown", "timeout"]


def test_esp_layout(tmp_path):
    img = tmp_path / "a.efi"
    img.write_bytes(b"MZ")
    plain = tmp_path / "plain"
    plain.mkdir()
    qemu.make_esp(str(plain), str(img), cfg_text="seed=2\n")
    assert (plain / "EFI/BOOT/BOOTX64.EFI").read_bytes() == b"MZ"
    assert (plain / "pmubench.cfg").read_text() == "seed=2\n"
    assert not (plain / "startup.nsh").exists()
    withargs = tmp_path / "args"
    withargs.mkdir()
    qemu.make_esp(str(withargs), str(img), args="bench=latency seed=3", esp_files={"sub/x.txt": "hi"})
    assert not (withargs / "EFI").exists()        # the fallback path would boot before the shell
    assert (withargs / "pmubench.efi").read_bytes() == b"MZ"
    assert (withargs / "startup.nsh").read_bytes() == b"@echo -off\r\nfs0:\\pmubench.efi bench=latency seed=3\r\n"
    assert (withargs / "sub/x.txt").read_text() == "hi"


def test_kvm_probe_without_device():
    ok, why = qemu._kvm_probe(qemu.QEMU, qemu.OVMF_CODE, qemu.OVMF_VARS, 1, "/nonexistent/kvm")
    assert not ok and "cannot open" in why


def test_choose_accel_tcg_and_bad():
    assert qemu.choose_accel("tcg")[0] == "tcg"
    with pytest.raises(ValueError):
        qemu.choose_accel("xen")


def test_missing_image_is_an_error(tmp_path):
    with pytest.raises(qemu.QemuError, match="not found"):
        qemu.boot(image=str(tmp_path / "none.efi"))


# ---- real boots --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def echo_efi(tmp_path_factory):
    if not (HAVE_QEMU and HAVE_EFI) or os.environ.get("PMB_SKIP_QEMU") == "1":
        pytest.skip("no qemu/ovmf/gnu-efi")
    d = tmp_path_factory.mktemp("echo")
    o, so, efi = d / "echo.o", d / "echo.so", d / "echo.efi"
    subprocess.run(["gcc", "-std=gnu11", "-O2", "-ffreestanding", "-fpic", "-fshort-wchar", "-mno-red-zone",
                    "-fno-stack-protector", "-DGNU_EFI_USE_MS_ABI", "-I/usr/include/efi",
                    "-I/usr/include/efi/x86_64", "-c", ECHO_C, "-o", str(o)], check=True)
    subprocess.run(["ld", "-nostdlib", "-znocombreloc", "-T", "/usr/lib/elf_x86_64_efi.lds", "-shared",
                    "-Bsymbolic", "/usr/lib/crt0-efi-x86_64.o", str(o), "-L/usr/lib", "-lefi", "-lgnuefi",
                    "-o", str(so)], check=True)
    subprocess.run(["objcopy", "-j", ".text", "-j", ".sdata", "-j", ".data", "-j", ".dynamic", "-j", ".dynsym",
                    "-j", ".rel", "-j", ".rela", "-j", ".rel.*", "-j", ".rela.*", "-j", ".reloc",
                    "--target", "efi-app-x86_64", "--subsystem=10", str(so), str(efi)], check=True)
    return str(efi)


def echo_args(log):
    line = next(l for l in log.splitlines() if "PMB-ECHO args=" in l)
    return line.split("PMB-ECHO args=", 1)[1].strip()


@needs_boot
def test_boot_with_load_options_and_exit_codes(echo_efi):
    seen = []
    r = qemu.boot(image=echo_efi, args='exit=1 bench=latency "x y"', smp=2, mem="1G", numa=2, timeout=90,
                  on_line=seen.append, esp_files={"echo.log": "hello from the ESP\r\n"})
    assert r.status == "error" and r.exit_code == 3 and r.accel == "tcg"
    assert echo_args(r.log) == 'fs0:\\pmubench.efi exit=1 bench=latency "x y"'
    assert "hello from the ESP" in r.log
    assert any("PMB-ECHO" in l for l in seen)
    r = qemu.boot(image=echo_efi, args="exit=2", timeout=90)
    assert r.status == "crashed" and r.exit_code == 5


@needs_boot
def test_boot_fallback_path_without_args(echo_efi):
    r = qemu.boot(image=echo_efi, timeout=90, cfg_text="seed=5\n")
    assert r.status == "ok" and r.exit_code == 1
    assert echo_args(r.log) == ""


@needs_boot
def test_boot_timeout_kills_qemu(echo_efi):
    r = qemu.boot(image=echo_efi, timeout=1.5)
    assert r.status == "timeout" and r.exit_code is None and "killed" in r.reason


@needs_boot
def test_boot_auto_accel_falls_back_or_uses_kvm(echo_efi):
    acc, why = qemu.choose_accel("auto")
    assert acc in ("kvm", "tcg") and why
    r = qemu.boot(image=echo_efi, accel="auto", timeout=90)
    assert r.accel == acc and r.status == "ok"


@needs_boot
def test_secure_boot_signed_and_unsigned(echo_efi):
    if not (shutil.which("sbsign") and os.path.exists(qemu.SNAKEOIL_KEY) and os.path.exists(qemu.OVMF_VARS_SNAKEOIL)):
        pytest.skip("sbsigntool or snakeoil OVMF keys missing")
    r = qemu.boot_secure(echo_efi, timeout=90)
    assert r.status == "ok", r.log[-500:]
    assert opt(r.cmdline, "-machine") == ["q35,smm=on"]
    r = qemu.boot_secure(echo_efi, signed=False, timeout=90)
    assert r.status == "unknown" and "nothing bootable" in r.reason


@pytest.fixture(scope="module")
def echo_usb(echo_efi, tmp_path_factory):
    d = tmp_path_factory.mktemp("usb")
    img = d / "usb.img"
    subprocess.run([os.path.join(ROOT, "scripts", "mkusb.sh"), echo_efi, os.path.join(ROOT, "scripts", "pmubench.cfg"),
                    str(img)], check=True, capture_output=True)
    return img


def with_log(img, tmp, text):
    out = tmp / "disk.img"
    shutil.copyfile(img, out)
    src = tmp / "echo.log"
    src.write_bytes(text.encode())
    subprocess.run(["mcopy", "-i", "%s@@%d" % (out, usb.esp_offset(str(out))), str(src), "::/echo.log"],
                   check=True, env=dict(os.environ, MTOOLS_SKIP_CHECK="1"))
    return str(out)


@needs_boot
def test_cli_run_end_to_end_from_usb_image(echo_usb, tmp_path, capsys, monkeypatch):
    lines = logs.run_lines(logs.full_run(seed=4))
    disk = with_log(echo_usb, tmp_path, logs.serial(lines))
    out = tmp_path / "results"
    monkeypatch.setattr(qemu, "VARS_CACHE_DIR", str(tmp_path / "vars-cache"))
    rc = cli.main(["run", "--tcg", "--disk", disk, "--out", str(out), "--timeout", "120"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "accelerator tcg" in text and "end record after 66 records" in text and "verified 66 records" in text
    assert text.count("pmubench: note: under TCG the CPU is emulated") == 1
    runs = [d for d in os.listdir(out) if d != "latest"]
    assert len(runs) == 1
    d = out / runs[0]
    assert (d / "records.jsonl").read_text().splitlines() == lines
    assert "PMB-ECHO" in (d / "serial.log").read_text(errors="replace")
    meta = json.loads((d / "boot.json").read_text())
    assert meta["accel"] == "tcg" and meta["status"] == "ok" and meta["crc32"] == logs.crc_of(lines[:-1])
    assert meta["firmware_start"] == "quick" and "-nodefaults" in meta["cmdline"]
    assert len(os.listdir(tmp_path / "vars-cache")) == 1     # the store kept for the next run
    assert (out / "latest" / "records.jsonl").read_text() == (d / "records.jsonl").read_text()
    # With --args the image moves to /pmubench.efi behind startup.nsh, on a private copy of the disk.
    before = open(disk, "rb").read()
    assert cli.main(["run", "--tcg", "--disk", disk, "--out", str(out), "--args", "exit=1", "-q",
                     "--full-firmware-start"]) == 1
    assert open(disk, "rb").read() == before
    meta = json.loads((out / "latest" / "boot.json").read_text())
    assert meta["firmware_start"] == "full" and "-nodefaults" not in meta["cmdline"]


@needs_boot
def test_cli_run_rejects_corrupt_log(echo_usb, tmp_path, capsys, monkeypatch):
    lines = logs.run_lines(logs.full_run(seed=5))
    lines[3] = lines[3].replace('"ranges":3', '"ranges":4')
    disk = with_log(echo_usb, tmp_path, logs.serial(lines))
    out = tmp_path / "results"
    monkeypatch.setattr(qemu, "VARS_CACHE_DIR", str(tmp_path / "vars-cache"))
    assert cli.main(["run", "--tcg", "--disk", disk, "--out", str(out), "-q"]) == 2
    assert "CRC mismatch" in capsys.readouterr().err
    d = out / [x for x in os.listdir(out) if x != "latest"][0]
    assert (d / "serial.log").exists() and not (d / "records.jsonl").exists()
