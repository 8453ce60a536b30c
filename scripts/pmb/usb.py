"""Write the USB image to a removable device (with safety checks) or a file; read its GPT.

Refusal logic is pure and takes the /sys and /proc paths as parameters so tests can mock them.
"""
import os
import shutil
import stat
import struct
import uuid
import zlib

from . import REPO_ROOT

DEFAULT_IMAGE = os.path.join(REPO_ROOT, "build", "pmubench-usb.img")
SECTOR = 512
# EFI System Partition type GUID (UEFI spec, table "Defined GPT Partition Entry - Partition Type GUIDs").
ESP_TYPE = uuid.UUID("c12a7328-f81f-11d2-ba4b-00a0c93ec93b")


class UsbError(Exception):
    pass


# ---- GPT -------------------------------------------------------------------------------------

def gpt_partitions(path):
    """[(index, type_uuid, first_lba, last_lba, name)] from the primary GPT (UEFI spec 5.3),
    checking the header and entry-array CRC-32s."""
    with open(path, "rb") as f:
        f.seek(SECTOR)
        hdr = f.read(92)
        if len(hdr) < 92 or hdr[:8] != b"EFI PART":
            raise UsbError("%s: no GPT header at LBA 1" % path)
        hsize = struct.unpack_from("<I", hdr, 12)[0]
        f.seek(SECTOR)
        full = f.read(hsize)
        want = struct.unpack_from("<I", full, 16)[0]
        if zlib.crc32(full[:16] + b"\0\0\0\0" + full[20:]) != want:
            raise UsbError("%s: GPT header CRC mismatch" % path)
        entries_lba, count, esize, arr_crc = struct.unpack_from("<QIII", hdr, 72)
        f.seek(entries_lba * SECTOR)
        arr = f.read(count * esize)
    if zlib.crc32(arr) != arr_crc:
        raise UsbError("%s: GPT partition array CRC mismatch" % path)
    out = []
    for i in range(count):
        e = arr[i * esize:(i + 1) * esize]
        t = uuid.UUID(bytes_le=e[:16])
        if t.int == 0:
            continue
        first, last = struct.unpack_from("<QQ", e, 32)
        name = e[56:128].decode("utf-16-le", "replace").rstrip("\0")
        out.append((i + 1, t, first, last, name))
    return out


def esp_offset(path):
    """Byte offset of the first EFI System Partition (for mtools' IMG@@OFFSET)."""
    for _i, t, first, _last, _name in gpt_partitions(path):
        if t == ESP_TYPE:
            return first * SECTOR
    raise UsbError("%s: no EFI System Partition" % path)


# ---- device checks ---------------------------------------------------------------------------

def _unescape_mount(s):
    # /proc/mounts escapes space, tab, newline and backslash as \040 \011 \012 \134.
    return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def block_name(device, sys_root="/sys", resolve=True):
    """'/dev/sdb' -> 'sdb'; a partition such as sdb1 maps to its disk 'sdb' if sys says so."""
    path = os.path.realpath(device) if resolve else device
    name = os.path.basename(path)
    if os.path.isdir(os.path.join(sys_root, "block", name)):
        return name
    for disk in sorted(os.listdir(os.path.join(sys_root, "block")) if
                       os.path.isdir(os.path.join(sys_root, "block")) else []):
        if os.path.isdir(os.path.join(sys_root, "block", disk, name)):
            return disk
    return name


def check_device(device, sys_root="/sys", mounts="/proc/mounts", resolve=True):
    """Reasons (list of str) to refuse writing `device`; empty when it is a removable, unmounted
    whole disk. sys_root and mounts are parameters so tests can point them at a fake tree."""
    reasons = []
    name = block_name(device, sys_root, resolve)
    blk = os.path.join(sys_root, "block", name)
    if not os.path.isdir(blk):
        return ["%s is not a block device known to %s/block" % (device, sys_root)]
    if os.path.basename(os.path.realpath(device) if resolve else device) != name:
        reasons.append("%s is a partition; give the whole disk /dev/%s" % (device, name))
    try:
        with open(os.path.join(blk, "removable")) as f:
            removable = f.read().strip() == "1"
    except OSError:
        removable = False
    if not removable:
        reasons.append("/dev/%s is not removable (%s/block/%s/removable is not 1)" % (name, sys_root, name))
    try:
        with open(os.path.join(blk, "ro")) as f:
            if f.read().strip() == "1":
                reasons.append("/dev/%s is read-only" % name)
    except OSError:
        pass
    parts = {name} | {p for p in (os.listdir(blk) if os.path.isdir(blk) else []) if p.startswith(name)}
    try:
        with open(mounts) as f:
            for line in f:
                fields = line.split()
                if len(fields) < 2:
                    continue
                src = os.path.basename(_unescape_mount(fields[0]))
                if src in parts:
                    reasons.append("/dev/%s is mounted on %s" % (src, _unescape_mount(fields[1])))
    except OSError as e:
        reasons.append("cannot read %s: %s" % (mounts, e.strerror))
    return reasons


def write_image(image, dest, force=False, to_file=False, sys_root="/sys", mounts="/proc/mounts",
                out=print):
    """Copy `image` to the device `dest` (refusing unsafe targets unless force) or, with to_file,
    to a plain file. Returns bytes written."""
    if not os.path.isfile(image):
        raise UsbError("%s not found (run `make usb`)" % image)
    if to_file:
        if os.path.exists(dest) and not os.path.isfile(dest):
            raise UsbError("%s exists and is not a regular file" % dest)
        tmp = dest + ".tmp"
        shutil.copyfile(image, tmp)
        os.replace(tmp, dest)
        return os.path.getsize(dest)
    try:
        st = os.stat(dest)
    except OSError as e:
        raise UsbError("%s: %s" % (dest, e.strerror))
    if not stat.S_ISBLK(st.st_mode) and not force:
        raise UsbError("%s is not a block device (use --image FILE to write a file)" % dest)
    reasons = check_device(dest, sys_root, mounts)
    if reasons and not force:
        raise UsbError("refusing to write %s: %s (--force overrides)" % (dest, "; ".join(reasons)))
    for r in reasons:
        out("warning: %s (forced)" % r)
    n = 0
    with open(image, "rb") as src, open(dest, "r+b" if os.path.exists(dest) else "wb") as dst:
        while True:
            buf = src.read(1 << 20)
            if not buf:
                break
            dst.write(buf)
            n += len(buf)
        dst.flush()
        os.fsync(dst.fileno())
    return n
