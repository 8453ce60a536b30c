"""pmubench usb refusal logic (fake /sys and /proc/mounts), scripts/mkusb.sh and pmubench.cfg."""
import os
import re
import shutil
import subprocess

import pytest

from pmb import cli, usb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MKUSB = os.path.join(ROOT, "scripts", "mkusb.sh")
CFG = os.path.join(ROOT, "scripts", "pmubench.cfg")
HAVE_TOOLS = all(shutil.which(t) or os.path.exists("/usr/sbin/" + t) or os.path.exists("/sbin/" + t)
                 for t in ("sgdisk", "mkfs.vfat", "mcopy", "mdir"))
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="gdisk/dosfstools/mtools not installed")


def fake_sys(tmp_path, disks):
    """disks: {name: (removable, [partitions])} -> sys root."""
    root = tmp_path / "sys"
    for name, (rem, parts) in disks.items():
        d = root / "block" / name
        d.mkdir(parents=True)
        (d / "removable").write_text("%d\n" % rem)
        (d / "ro").write_text("0\n")
        for p in parts:
            (d / p).mkdir()
    return str(root)


def mounts(tmp_path, lines):
    p = tmp_path / "mounts"
    p.write_text("".join(l + "\n" for l in lines))
    return str(p)


BASE_MOUNTS = ["/dev/sda2 / ext4 rw 0 0", "proc /proc proc rw 0 0", "tmpfs /tmp tmpfs rw 0 0"]


def check(tmp_path, dev, disks, mlines=BASE_MOUNTS):
    return usb.check_device(dev, fake_sys(tmp_path, disks), mounts(tmp_path, mlines), resolve=False)


def test_removable_unmounted_disk_is_accepted(tmp_path):
    assert check(tmp_path, "/dev/sdb", {"sda": (0, ["sda1", "sda2"]), "sdb": (1, ["sdb1"])}) == []


def test_non_removable_refused(tmp_path):
    r = check(tmp_path, "/dev/sda", {"sda": (0, ["sda1", "sda2"])})
    assert any("not removable" in x for x in r)
    assert any("mounted on /" in x for x in r)


def test_mounted_partition_refused(tmp_path):
    r = check(tmp_path, "/dev/sdb", {"sdb": (1, ["sdb1"])}, BASE_MOUNTS + ["/dev/sdb1 /media/my\\040stick vfat rw 0 0"])
    assert r == ["/dev/sdb1 is mounted on /media/my stick"]


def test_mounted_whole_disk_refused(tmp_path):
    r = check(tmp_path, "/dev/sdc", {"sdc": (1, [])}, ["/dev/sdc /mnt vfat rw 0 0"])
    assert r == ["/dev/sdc is mounted on /mnt"]


def test_partition_given_instead_of_disk(tmp_path):
    r = check(tmp_path, "/dev/sdb1", {"sdb": (1, ["sdb1"])})
    assert any("is a partition" in x for x in r)


def test_unknown_device(tmp_path):
    r = check(tmp_path, "/dev/nope", {"sdb": (1, [])})
    assert len(r) == 1 and "not a block device" in r[0]


def test_similar_names_do_not_count_as_mounted(tmp_path):
    # sdb must not be refused because sdbb1 (another disk) is mounted.
    assert check(tmp_path, "/dev/sdb", {"sdb": (1, []), "sdbb": (1, ["sdbb1"])}, ["/dev/sdbb1 /mnt vfat rw 0 0"]) == []


def test_nvme_partition_names(tmp_path):
    r = check(tmp_path, "/dev/nvme0n1", {"nvme0n1": (0, ["nvme0n1p1"])}, ["/dev/nvme0n1p1 /boot vfat rw 0 0"])
    assert any("not removable" in x for x in r) and any("nvme0n1p1 is mounted" in x for x in r)


def test_write_image_to_file(tmp_path):
    src = tmp_path / "img"
    src.write_bytes(os.urandom(4096))
    dst = tmp_path / "out.img"
    assert usb.write_image(str(src), str(dst), to_file=True) == 4096
    assert dst.read_bytes() == src.read_bytes()


def test_write_refuses_regular_file_as_device(tmp_path):
    src = tmp_path / "img"
    src.write_bytes(b"x" * 512)
    target = tmp_path / "notadev"
    target.write_bytes(b"keep")
    with pytest.raises(usb.UsbError, match="not a block device"):
        usb.write_image(str(src), str(target))
    assert target.read_bytes() == b"keep"


def test_write_missing_image(tmp_path):
    with pytest.raises(usb.UsbError, match="not found"):
        usb.write_image(str(tmp_path / "none"), str(tmp_path / "x"), to_file=True)


def test_cli_usb(tmp_path, capsys):
    src = tmp_path / "img"
    src.write_bytes(b"y" * 1024)
    assert cli.main(["usb", "--source", str(src), "--image", str(tmp_path / "copy.img")]) == 0
    assert (tmp_path / "copy.img").read_bytes() == b"y" * 1024
    assert cli.main(["usb", "--source", str(src), str(tmp_path / "copy.img")]) == 1
    assert "not a block device" in capsys.readouterr().err
    assert cli.main(["usb", "--source", str(src)]) == 2          # neither DEVICE nor --image: a usage error
    assert capsys.readouterr().err == "pmubench: usb needs DEVICE or --image FILE\n"


# ---- mkusb.sh ----------------------------------------------------------------------------------

MKUSB_OUT = {}

@pytest.fixture(scope="module")
def usb_image(tmp_path_factory):
    if not HAVE_TOOLS:
        pytest.skip("gdisk/dosfstools/mtools not installed")
    d = tmp_path_factory.mktemp("mkusb")
    efi = d / "fake.efi"
    efi.write_bytes(b"MZ" + os.urandom(70000))
    out = d / "out" / "usb.img"
    r = subprocess.run([MKUSB, str(efi), CFG, str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    MKUSB_OUT["stdout"] = r.stdout
    return efi, out


@needs_tools
def test_mkusb_says_how_to_write_the_stick(usb_image):
    _efi, img = usb_image
    lines = MKUSB_OUT["stdout"].splitlines()
    assert lines[0].startswith("mkusb: wrote %s (64 MiB" % img)
    assert "mkusb:   scripts/pmubench usb /dev/sdX      (refuses mounted or non-removable devices)" in lines
    assert "mkusb:   or: sudo dd if=%s of=/dev/sdX bs=4M conv=fsync" % img in lines


def _env():
    return dict(os.environ, MTOOLS_SKIP_CHECK="1", PATH=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


@needs_tools
def test_mkusb_gpt_with_esp(usb_image):
    _efi, img = usb_image
    assert img.stat().st_size == 64 << 20
    p = subprocess.run(["sgdisk", "-p", str(img)], capture_output=True, text=True, env=_env())
    assert p.returncode == 0
    part = [l for l in p.stdout.splitlines() if re.match(r"\s+1\s", l)]
    assert len(part) == 1 and "EF00" in part[0] and part[0].split()[1] == "2048"
    parts = usb.gpt_partitions(str(img))
    assert len(parts) == 1 and parts[0][1] == usb.ESP_TYPE and parts[0][2] == 2048
    assert usb.esp_offset(str(img)) == 2048 * 512


@needs_tools
def test_mkusb_esp_holds_the_files(usb_image, tmp_path):
    efi, img = usb_image
    spec = "%s@@%d" % (img, usb.esp_offset(str(img)))
    p = subprocess.run(["mdir", "-i", spec, "-b", "-/", "::"], capture_output=True, text=True, env=_env())
    assert p.returncode == 0, p.stderr
    names = {l.strip().upper() for l in p.stdout.splitlines()}
    assert "::/EFI/BOOT/BOOTX64.EFI" in names and "::/PMUBENCH.CFG" in names
    got = tmp_path / "got.efi"
    subprocess.run(["mcopy", "-i", spec, "::/EFI/BOOT/BOOTX64.EFI", str(got)], check=True, env=_env())
    assert got.read_bytes() == efi.read_bytes()
    cfg = subprocess.run(["mtype", "-i", spec, "::/pmubench.cfg"], capture_output=True, env=_env()).stdout
    assert cfg == open(CFG, "rb").read()
    fs = subprocess.run(["minfo", "-i", spec], capture_output=True, text=True, env=_env()).stdout
    assert "FAT32" in fs or "fat32" in fs.lower() or "big size" in fs


@needs_tools
def test_mkusb_usage_and_missing_input(tmp_path):
    assert subprocess.run([MKUSB], capture_output=True).returncode == 2
    r = subprocess.run([MKUSB, str(tmp_path / "no.efi"), CFG, str(tmp_path / "o.img")], capture_output=True, text=True)
    assert r.returncode == 1 and "no such file" in r.stderr
    assert not (tmp_path / "o.img").exists()


@needs_tools
def test_gpt_parser_rejects_corruption(usb_image, tmp_path):
    _efi, img = usb_image
    bad = tmp_path / "bad.img"
    data = bytearray(img.read_bytes()[: 1 << 20])
    data[512 + 80] ^= 0xFF       # inside the GPT header (covered by its CRC)
    bad.write_bytes(bytes(data))
    with pytest.raises(usb.UsbError, match="CRC"):
        usb.gpt_partitions(str(bad))
    blank = tmp_path / "blank.img"
    blank.write_bytes(b"\0" * 4096)
    with pytest.raises(usb.UsbError, match="no GPT"):
        usb.esp_offset(str(blank))


# ---- pmubench.cfg ------------------------------------------------------------------------------

def test_default_cfg_is_all_comments_and_names_every_key():
    text = open(CFG).read()
    live = [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
    assert live == []
    keys = {m.group(1) for m in re.finditer(r"^#([a-z_]+)=", text, re.M)}
    assert keys == {"profile", "serial", "baud", "on_finish", "bench", "max_bytes", "trace_msr", "pmu_assume",
                    "events", "acpi_dump", "max_cpus", "seed", "serialize", "time_budget_ms"}
    defaults = dict(re.findall(r"^#([a-z_]+)=(\S*)", text, re.M))
    assert defaults["profile"] == "auto" and defaults["baud"] == "115200" and defaults["seed"] == "1"
    assert defaults["serialize"] == "lfence" and defaults["on_finish"] == "shutdown" and defaults["events"] == ""
