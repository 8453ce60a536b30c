"""Boot a UEFI image under QEMU/OVMF and capture its serial output.

Used by `pmubench run` and by the QEMU boot tests (tests/boot/):

    from pmb import qemu
    r = qemu.boot(smp=4, mem="2G", numa=2, args="bench=latency", timeout=300)
    r.status      # "ok" | "error" | "crashed" (isa-debug-exit) | "timeout" | "unknown"

Exit path: the kernel writes 0 (ok) / 1 (error) / 2 (crashed) to I/O port 0xf4 where QEMU's
isa-debug-exit device sits; QEMU then exits with status (v << 1) | 1, i.e. 1 / 3 / 5.

Load options: OVMF boots EFI/BOOT/BOOTX64.EFI with empty load options, so when `args` is given
the image goes to /pmubench.efi (not the fallback path, which BDS would boot first) together with
a startup.nsh that OVMF's built-in UEFI shell runs: `fs0:\\pmubench.efi <args>`. The shell passes
the whole command line, so the image's LoadOptions start with "fs0:\\pmubench.efi".
Secure Boot firmware (secure_boot=True) refuses the unsigned shell, so args need a normal boot.
"""
import fcntl
import hashlib
import os
import re
import select
import shlex
import shutil
import subprocess
import tempfile
import time

from . import REPO_ROOT

QEMU = "qemu-system-x86_64"
OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"
# Secure Boot: the SMM-only code image plus a variable store that enrolls Debian's test-only
# "snakeoil" key as PK, KEK and db (see /usr/share/doc/ovmf/README.Debian; key password "snakeoil").
OVMF_CODE_SECBOOT = "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd"
OVMF_VARS_SNAKEOIL = "/usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd"
SNAKEOIL_KEY = "/usr/share/ovmf/PkKek-1-snakeoil.key"
SNAKEOIL_CERT = "/usr/share/ovmf/PkKek-1-snakeoil.pem"
SNAKEOIL_PASS = "snakeoil"
DEFAULT_IMAGE = os.path.join(REPO_ROOT, "build", "pmubench.efi")
# `run`'s quick firmware start (docs/measurement.md, "make run"; quick=True below). Under TCG OVMF's own start
# was most of `make run`'s time inside QEMU; three things shorten it without touching what the image measures:
# - Debian's 2 MiB build of the same OVMF (edk2 2022.11, same drivers, a 128 KiB variable store): its SEC
#   phase decompresses a smaller volume and its DXE phase starts sooner (0.1-0.5 s);
# - a variable store kept from an earlier boot of the same firmware and command line (VARS_CACHE_DIR): on a
#   fresh store OVMF writes about 16 KB of variables (the iSCSI driver's eight attempts, boot options, console
#   paths), each byte a pflash program cycle that QEMU writes through to the file, about 0.5 s; from the kept
#   store it writes the 3 KB it writes on every boot;
# - no default devices (-nodefaults: no VGA, CD-ROM or floppy to probe, no DVD boot option tried first) and no
#   i8042 (-machine i8042=off: OVMF's PS/2 keyboard driver resets the controller and waits on it).
# What stays: the TPM probe (the firmware polls 0xFED40000, where nothing answers, for 2 x 750 ms of
# PM-timer delays; nothing on QEMU's command line can answer it) and the LZMA decompression in SEC.
OVMF_CODE_QUICK = "/usr/share/OVMF/OVMF_CODE.fd"
OVMF_VARS_QUICK = "/usr/share/OVMF/OVMF_VARS.fd"
VARS_CACHE_DIR = os.path.join(REPO_ROOT, "build", "ovmf-vars")

DEBUG_EXIT_PORT = 0xF4
# QEMU exit status -> status word: isa-debug-exit gives (v << 1) | 1.
EXIT_STATUS = {1: "ok", 3: "error", 5: "crashed"}

KVM_GET_API_VERSION = 0xAE00      # _IO(KVMIO=0xAE, 0x00), linux/kvm.h
KVM_API_VERSION = 12

# Firmware dead ends: when the serial output ends with one of these and stays quiet for
# _DEAD_END_QUIET seconds, nothing more will happen, so stop instead of waiting for the timeout.
# (The quiet period keeps a log that merely contains such text, e.g. a replayed capture, alive.)
_DEAD_END_QUIET = 2.0
_DEAD_ENDS = (
    ("No bootable option or device was found", "firmware found nothing bootable"),
    ("KVM internal error", "KVM internal error"),
    ("Shell> ", "returned to the UEFI shell (image not found, or it returned without exiting QEMU)"),
)
_COUNTDOWN = b" seconds to skip "   # "Press ESC in 5 seconds to skip startup.nsh ..."
# QEMU writes each byte the guest sends to the serial port with a write() of its own; reading as soon as
# anything arrived woke this loop once per byte or two, and those wake-ups took host CPU time from the emulated
# CPUs: on one host CPU shared with QEMU, 20 KB of output took the guest 53-56 ms against 19-22 ms when the loop
# pauses this long after each read, so that the pipe collects a batch (it holds 64 KiB; the guest writes at most
# a few KB in that time).
_READ_PAUSE_S = 0.003


class QemuError(Exception):
    pass


class BootResult:
    """Outcome of one boot. log: serial output (str, undecodable bytes kept via surrogateescape);
    raw: the same as bytes; exit_code: QEMU's exit status (None on timeout); status: see module
    doc; reason: why status is what it is; accel: "kvm"/"tcg"; cmdline: argv list; stderr."""

    def __init__(self, raw, exit_code, status, reason, accel, cmdline, stderr, seconds):
        self.raw = raw
        self.log = raw.decode("utf-8", "surrogateescape")
        self.exit_code = exit_code
        self.status = status
        self.reason = reason
        self.accel = accel
        self.cmdline = cmdline
        self.stderr = stderr
        self.seconds = seconds

    def parse(self):
        from .parse import parse_log
        return parse_log(self.raw)

    def __repr__(self):
        return "<BootResult status=%s exit=%s accel=%s %.1fs>" % (self.status, self.exit_code,
                                                                 self.accel, self.seconds)


def status_from_exit(code):
    if code is None:
        return "timeout"
    return EXIT_STATUS.get(code, "unknown")


def parse_size(s):
    """'1G', '512M', '65536', '2g', '1536K' -> bytes."""
    if isinstance(s, int):
        return s
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", str(s), re.I)
    if not m:
        raise ValueError("bad size %r" % (s,))
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(m.group(1)) * mult


# ---- KVM probe -------------------------------------------------------------------------------

_kvm_cache = {}


def kvm_probe(qemu=QEMU, ovmf_code=OVMF_CODE, ovmf_vars=OVMF_VARS, seconds=2.0, dev="/dev/kvm"):
    """(usable, reason). Opens /dev/kvm, checks KVM_GET_API_VERSION, then boots OVMF under
    -accel kvm for `seconds`: some hosts expose /dev/kvm but cannot run OVMF's SEC phase
    ("KVM internal error", e.g. nested setups without unrestricted guest)."""
    key = (qemu, ovmf_code, dev)
    if key in _kvm_cache:
        return _kvm_cache[key]
    _kvm_cache[key] = res = _kvm_probe(qemu, ovmf_code, ovmf_vars, seconds, dev)
    return res


def _kvm_probe(qemu, ovmf_code, ovmf_vars, seconds, dev):
    try:
        fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return False, "cannot open %s: %s" % (dev, e.strerror)
    try:
        ver = fcntl.ioctl(fd, KVM_GET_API_VERSION)
    except OSError as e:
        return False, "KVM_GET_API_VERSION failed: %s" % e.strerror
    finally:
        os.close(fd)
    if ver != KVM_API_VERSION:
        return False, "KVM API version %d, expected %d" % (ver, KVM_API_VERSION)
    if shutil.which(qemu) is None:
        return False, "%s not found" % qemu
    with tempfile.TemporaryDirectory(prefix="pmb-kvm-") as d:
        vars_copy = os.path.join(d, "vars.fd")
        shutil.copyfile(ovmf_vars, vars_copy)
        cmd = [qemu, "-machine", "q35", "-accel", "kvm", "-cpu", "host", "-m", "256M",
               "-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + ovmf_code,
               "-drive", "if=pflash,format=raw,unit=1,file=" + vars_copy,
               "-display", "none", "-monitor", "none", "-serial", "stdio", "-nic", "none",
               "-no-reboot"]
        try:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
        except OSError as e:
            return False, "cannot start %s: %s" % (qemu, e.strerror)
        try:
            out, _ = p.communicate(timeout=seconds)
            text = out.decode("utf-8", "replace")
            first = next((l for l in text.splitlines() if l.strip()), "no output")
            return False, "QEMU with -accel kvm exited with status %d: %s" % (p.returncode, first.strip())
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        text = out.decode("utf-8", "replace")
        for bad in ("KVM internal error", "emulation failure", "failed to initialize kvm"):
            if bad in text:
                line = next(l for l in text.splitlines() if bad in l)
                return False, "QEMU with -accel kvm cannot run OVMF: " + line.strip()
    return True, "KVM works (API %d, OVMF runs)" % ver


def kvm_next_step(why):
    """What to do after the KVM probe failed with why (docs/kvm.md, "When the probe fails")."""
    if "MSR 0x10a" in why:
        return ("the host's KVM refuses IA32_ARCH_CAPABILITIES (MSR 0x10a), which QEMU's -cpu host sets: a "
                "nested hypervisor that does not pass the MSR through. Nothing in the guest fixes it: run on a "
                "host whose KVM runs OVMF (bare metal or a VM with full nested virtualization), or measure this "
                "machine with the hosted runner: make host-bench && build/host-bench/pmubench-host (docs/kvm.md)")
    if "KVM internal error" in why or "emulation failure" in why:
        return ("this KVM cannot run OVMF (a nested hypervisor's emulation failure): run on a host whose KVM "
                "does, or use the hosted runner: make host-bench && build/host-bench/pmubench-host (docs/kvm.md)")
    if "cannot open" in why:
        return ("give this user access to /dev/kvm (the kvm group) or load the kvm module (modprobe kvm_intel "
                "or kvm_amd), then run again (docs/kvm.md)")
    return "see docs/kvm.md for each probe failure; the hosted runner (build/host-bench/pmubench-host) needs no KVM"


# Said once before a TCG boot (docs/measurement.md, "Under QEMU TCG").
TCG_NOTE = ("under TCG the CPU is emulated: timings, core cycles, cache knees and bandwidths describe the emulator, "
            "so DISAGREES cross-checks, noisy and suspect figures are normal; the run checks that the image boots "
            "and writes verified records")


def choose_accel(accel, qemu=QEMU, ovmf_code=OVMF_CODE, ovmf_vars=OVMF_VARS):
    """-> (accel, reason). "auto" falls back to TCG; "kvm" raises QemuError when unusable."""
    if accel == "tcg":
        return "tcg", "TCG requested"
    if accel not in ("kvm", "auto"):
        raise ValueError("accel must be tcg, kvm or auto, not %r" % (accel,))
    ok, why = kvm_probe(qemu, ovmf_code, ovmf_vars)
    if ok:
        return "kvm", why
    if accel == "kvm":
        raise QemuError("KVM requested but unusable: " + why)
    return "tcg", "KVM unusable (%s); using TCG" % why


# ---- command line ------------------------------------------------------------------------------

def numa_args(numa, smp, mem_bytes):
    """-object/-numa options splitting memory evenly and CPUs as evenly as possible (node 0 gets
    the remainder of neither: with smp < numa the last nodes are memory-only)."""
    if numa <= 1:
        return []
    mib = mem_bytes >> 20
    if mib % numa:
        raise ValueError("memory (%d MiB) does not split evenly into %d NUMA nodes" % (mib, numa))
    out = []
    per = smp // numa
    extra = smp % numa
    cpu = 0
    for n in range(numa):
        out += ["-object", "memory-backend-ram,id=pmbmem%d,size=%dM" % (n, mib // numa)]
        cnt = per + (1 if n < extra else 0)
        spec = "node,nodeid=%d,memdev=pmbmem%d" % (n, n)
        if cnt:
            spec += ",cpus=%d" % cpu if cnt == 1 else ",cpus=%d-%d" % (cpu, cpu + cnt - 1)
        cpu += cnt
        out += ["-numa", spec]
    # Explicit distances make QEMU emit an ACPI SLIT (local 10, remote 20: the ACPI default ratio).
    for a in range(numa):
        for b in range(a + 1, numa):
            out += ["-numa", "dist,src=%d,dst=%d,val=20" % (a, b)]
    return out


def build_cmdline(esp_dir=None, disk=None, vars_path=OVMF_VARS, ovmf_code=OVMF_CODE, cpu=None, smp=1,
                  mem="1G", numa=0, accel="tcg", secure_boot=False, extra=(), qemu=QEMU, usb=True,
                  firmware="uefi", quick=False):
    """The QEMU argv (pure: touches no files). firmware "bios": QEMU's own SeaBIOS (no OVMF flash), the
    disk attached as a plain drive, which SeaBIOS boots through the image's GRUB (Multiboot2). quick: no
    default devices and no i8042 (the quick firmware start, see OVMF_CODE_QUICK)."""
    mem_bytes = parse_size(mem)
    if cpu is None:
        cpu = "host,pmu=on" if accel == "kvm" else "max"
    machine = "q35,smm=on" if secure_boot else "q35"
    if quick:
        machine += ",i8042=off"
    cmd = [qemu, "-machine", machine, "-accel", accel, "-cpu", cpu,
           "-smp", str(smp), "-m", "%dM" % (mem_bytes >> 20)]
    if quick:
        cmd.append("-nodefaults")
    if secure_boot:
        cmd += ["-global", "driver=cfi.pflash01,property=secure,value=on"]
    if firmware != "bios":
        cmd += ["-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + ovmf_code,
                "-drive", "if=pflash,format=raw,unit=1,file=" + vars_path]
    cmd += numa_args(numa, smp, mem_bytes)
    if disk is not None:
        if usb and firmware != "bios":
            # Boot it the way a person would: as a USB stick on an xHCI controller.
            # snapshot=on: guest writes go to a temporary overlay, the file stays as it was.
            cmd += ["-drive", "if=none,id=pmbusb,format=raw,snapshot=on,file=" + disk,
                    "-device", "qemu-xhci,id=xhci", "-device", "usb-storage,bus=xhci.0,drive=pmbusb"]
        else:
            cmd += ["-drive", "format=raw,snapshot=on,file=" + disk]
    elif esp_dir is not None:
        cmd += ["-drive", "format=raw,file=fat:rw:" + esp_dir]
    cmd += ["-display", "none", "-monitor", "none", "-serial", "stdio", "-nic", "none",
            "-no-reboot", "-device", "isa-debug-exit,iobase=0x%x,iosize=0x04" % DEBUG_EXIT_PORT]
    cmd += list(extra)
    return cmd


def startup_nsh(args, name="pmubench.efi"):
    """startup.nsh for OVMF's shell: run fs0:\\<name> with the load options."""
    line = "fs0:\\%s" % name
    if args:
        line += " " + args
    return "@echo -off\r\n" + line + "\r\n"


def make_esp(dirpath, image, args=None, cfg_text=None, esp_files=None):
    """Fill dirpath as an ESP: the image at the fallback path, or with args at /pmubench.efi plus
    startup.nsh; pmubench.cfg from cfg_text; esp_files {relative path: bytes or str}."""
    if args is not None:
        shutil.copyfile(image, os.path.join(dirpath, "pmubench.efi"))
        with open(os.path.join(dirpath, "startup.nsh"), "w", newline="") as f:
            f.write(startup_nsh(args))
    else:
        boot = os.path.join(dirpath, "EFI", "BOOT")
        os.makedirs(boot, exist_ok=True)
        shutil.copyfile(image, os.path.join(boot, "BOOTX64.EFI"))
    if cfg_text is not None:
        with open(os.path.join(dirpath, "pmubench.cfg"), "w", newline="") as f:
            f.write(cfg_text)
    for rel, data in (esp_files or {}).items():
        p = os.path.join(dirpath, rel.replace("\\", "/").lstrip("/"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)


def _prepare_disk(disk, tmp, args, cfg_text):
    """A private copy of the disk image with the cfg / args applied through mtools."""
    from .usb import esp_offset
    copy = os.path.join(tmp, "disk.img")
    shutil.copyfile(disk, copy)
    spec = "%s@@%d" % (copy, esp_offset(copy))

    def mt(*argv):
        subprocess.run(list(argv), check=True, capture_output=True, env=dict(os.environ, MTOOLS_SKIP_CHECK="1"))

    if cfg_text is not None:
        p = os.path.join(tmp, "pmubench.cfg")
        with open(p, "w", newline="") as f:
            f.write(cfg_text)
        mt("mcopy", "-o", "-i", spec, p, "::/pmubench.cfg")
    if args is not None:
        mt("mcopy", "-o", "-i", spec, "::/EFI/BOOT/BOOTX64.EFI", os.path.join(tmp, "pmubench.efi"))
        mt("mdel", "-i", spec, "::/EFI/BOOT/BOOTX64.EFI")
        mt("mcopy", "-o", "-i", spec, os.path.join(tmp, "pmubench.efi"), "::/pmubench.efi")
        p = os.path.join(tmp, "startup.nsh")
        with open(p, "w", newline="") as f:
            f.write(startup_nsh(args))
        mt("mcopy", "-o", "-i", spec, p, "::/startup.nsh")
    return copy


# ---- boot ------------------------------------------------------------------------------------

def boot(image=None, disk=None, cpu=None, smp=1, mem="1G", numa=0, cfg_text=None, args=None,
         accel="tcg", timeout=60, extra=(), on_line=None, ovmf_code=None, ovmf_vars=None,
         secure_boot=False, esp_files=None, log_path=None, qemu=QEMU, stop_on_dead_end=True,
         skip_countdown=True, firmware="uefi", quick=False, vars_cache=None):
    """Boot `image` (default build/pmubench.efi) from a vvfat ESP, or the raw disk image `disk`
    (attached as a USB stick), and return a BootResult.

    cpu: None -> "max" under TCG, "host,pmu=on" under KVM. accel: "tcg", "kvm" (QemuError when
    unusable) or "auto" (KVM if kvm_probe passes). numa: number of nodes (0/1 = none).
    on_line(str): called for every serial line (terminator and ANSI sequences kept). log_path:
    raw serial bytes are appended there as they arrive. secure_boot: SMM Secure Boot OVMF with
    the snakeoil keys (the image must be signed; see sign()). firmware "bios": SeaBIOS boots `disk` (the
    hybrid `make usb` image) through GRUB and Multiboot2; the configuration goes in cfg_text (load
    options need the UEFI shell).
    quick: the quick firmware start (OVMF_CODE_QUICK's comment): the 2 MiB OVMF when neither ovmf_code nor
    ovmf_vars is given and both files exist, -nodefaults and no i8042; with vars_cache (a directory) the
    variable store of the first boot that ended ok is kept there and later boots of the same firmware and
    command line start from a copy of it. Not with Secure Boot or firmware "bios".
    """
    if firmware not in ("uefi", "bios"):
        raise QemuError("firmware must be uefi or bios, not %r" % firmware)
    if firmware == "bios" and (disk is None or args is not None or secure_boot):
        raise QemuError("a BIOS boot needs the disk image (make usb), its configuration as pmubench.cfg (--cfg, "
                        "cfg_text) rather than load options, and no Secure Boot")
    if disk is None and image is None:
        image = DEFAULT_IMAGE
    if disk is None and not os.path.isfile(image):
        raise QemuError("image %s not found (run `make efi`)" % image)
    if disk is not None and not os.path.isfile(disk):
        raise QemuError("disk image %s not found (run `make usb`)" % disk)
    quick = quick and firmware == "uefi" and not secure_boot
    if (quick and ovmf_code is None and ovmf_vars is None and os.path.isfile(OVMF_CODE_QUICK)
            and os.path.isfile(OVMF_VARS_QUICK)):
        ovmf_code, ovmf_vars = OVMF_CODE_QUICK, OVMF_VARS_QUICK
    if ovmf_code is None:
        ovmf_code = OVMF_CODE_SECBOOT if secure_boot else OVMF_CODE
    if ovmf_vars is None:
        ovmf_vars = OVMF_VARS_SNAKEOIL if secure_boot else OVMF_VARS
    accel, _why = choose_accel(accel, qemu, ovmf_code, ovmf_vars) if accel != "tcg" else ("tcg", "")
    with tempfile.TemporaryDirectory(prefix="pmb-qemu-") as tmp:
        vars_copy = os.path.join(tmp, "OVMF_VARS.fd")
        shutil.copyfile(ovmf_vars, vars_copy)
        esp = None
        if disk is not None:
            if cfg_text is not None or args is not None:
                disk = _prepare_disk(disk, tmp, args, cfg_text)
        else:
            esp = os.path.join(tmp, "esp")
            os.makedirs(esp)
            make_esp(esp, image, args, cfg_text, esp_files)
        cmd = build_cmdline(esp, disk, vars_copy, ovmf_code, cpu, smp, mem, numa, accel, secure_boot,
                            extra, qemu, firmware=firmware, quick=quick)
        kept = None
        if quick and vars_cache:
            kept = kept_vars_path(vars_cache, ovmf_code, ovmf_vars, cmd, tmp)
            if os.path.isfile(kept) and os.path.getsize(kept) == os.path.getsize(vars_copy):
                shutil.copyfile(kept, vars_copy)
        res = _run(cmd, accel, timeout, on_line, log_path, stop_on_dead_end, skip_countdown)
        if kept and res.status == "ok" and not os.path.exists(kept):
            keep_vars(vars_copy, kept)
        return res


def kept_vars_path(cache_dir, ovmf_code, ovmf_vars, cmd, tmp):
    """Where the variable store kept for this firmware (code and template, by content) and command line
    (with the per-boot directory tmp left out) lives in cache_dir."""
    h = hashlib.sha256()
    for path in (ovmf_code, ovmf_vars):
        with open(path, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    h.update("\0".join(c.replace(tmp, "@TMP@") for c in cmd).encode("utf-8", "surrogateescape"))
    return os.path.join(cache_dir, "vars-%s.fd" % h.hexdigest()[:24])


def keep_vars(vars_path, kept):
    """Copy the store a boot left to kept (whole or not at all); a cache that cannot be written is no error:
    the next boot starts from the template as before."""
    part = "%s.%d.part" % (kept, os.getpid())
    try:
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        shutil.copyfile(vars_path, part)
        os.replace(part, kept)
    except OSError:
        try:
            os.unlink(part)
        except OSError:
            pass


def _run(cmd, accel, timeout, on_line, log_path, stop_on_dead_end, skip_countdown):
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise QemuError("cannot start %s: %s" % (cmd[0], e.strerror))
    logf = open(log_path, "ab") if log_path else None
    raw = bytearray()
    err = bytearray()
    pending = b""
    reason = None
    timed_out = False
    countdown_done = not skip_countdown
    streams = {p.stdout.fileno(): "out", p.stderr.fileno(): "err"}
    dead = None                     # (since, why) while the output ends in a dead-end message
    try:
        while streams:
            now = time.monotonic()
            left = timeout - (now - t0)
            if left <= 0:
                timed_out = True
                break
            if dead is not None and now - dead[0] >= _DEAD_END_QUIET:
                reason = dead[1]
                break
            ready, _, _ = select.select(list(streams), [], [], min(left, 0.25))
            for fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    del streams[fd]
                    continue
                if streams[fd] == "err":
                    err += chunk
                    if stop_on_dead_end and b"KVM internal error" in err:
                        reason = "KVM internal error"
                    continue
                raw += chunk
                if logf:
                    logf.write(chunk)
                    logf.flush()
                pending += chunk
                # Lines end in \n (the kernel's \r\n included); the shell also redraws with bare \r.
                while True:
                    i = pending.find(b"\n")
                    if i < 0:
                        break
                    line, pending = pending[:i + 1], pending[i + 1:]
                    if on_line:
                        on_line(line.decode("utf-8", "surrogateescape"))
                if not countdown_done and _COUNTDOWN in raw[-4096:]:
                    # Any key but ESC starts startup.nsh at once instead of after 5 seconds.
                    countdown_done = True
                    try:
                        p.stdin.write(b" ")
                        p.stdin.flush()
                    except OSError:
                        pass
                if stop_on_dead_end:
                    # Any output restarts the quiet period.
                    tail = bytes(raw[-256:])
                    hit = next((why for pat, why in _DEAD_ENDS if pat.encode() in tail), None)
                    dead = None if hit is None else (time.monotonic(), hit)
            if reason is not None:
                break
            if ready:
                time.sleep(_READ_PAUSE_S)
    finally:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        # Drain whatever arrived after the loop stopped.
        for f, buf in ((p.stdout, raw), (p.stderr, err)):
            try:
                rest = f.read()
            except (OSError, ValueError):
                rest = b""
            if rest:
                buf += rest
                if f is p.stdout and logf:
                    logf.write(rest)
        if pending and on_line:
            on_line(pending.decode("utf-8", "surrogateescape"))
        if logf:
            logf.close()
        for f in (p.stdin, p.stdout, p.stderr):
            try:
                f.close()
            except OSError:
                pass
    secs = time.monotonic() - t0
    if timed_out:
        return BootResult(bytes(raw), None, "timeout", "no exit within %gs; QEMU killed" % timeout,
                          accel, cmd, err.decode("utf-8", "replace"), secs)
    if reason is not None:
        return BootResult(bytes(raw), p.returncode, "unknown", reason + "; QEMU stopped", accel, cmd,
                          err.decode("utf-8", "replace"), secs)
    code = p.returncode
    status = status_from_exit(code)
    if status != "unknown":
        why = "isa-debug-exit wrote %d" % (code >> 1)
    elif code == 0:
        why = "QEMU exited normally (shutdown/reset) without an isa-debug-exit write"
    else:
        first = err.decode("utf-8", "replace").strip().splitlines()
        why = "QEMU exited with status %s%s" % (code, (": " + first[0]) if first else "")
    return BootResult(bytes(raw), code, status, why, accel, cmd, err.decode("utf-8", "replace"), secs)


def cmdline_str(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


# ---- Secure Boot -----------------------------------------------------------------------------

def sign(image, out, key=SNAKEOIL_KEY, cert=SNAKEOIL_CERT, password=SNAKEOIL_PASS):
    """Sign `image` into `out` with scripts/sign.sh (sbsign); defaults to Debian's snakeoil key."""
    script = os.path.join(REPO_ROOT, "scripts", "sign.sh")
    env = dict(os.environ)
    if password is not None:
        env["PMB_KEY_PASS"] = password
    p = subprocess.run([script, key, cert, image, out], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise QemuError("signing failed: " + (p.stderr.strip().splitlines() or ["?"])[-1])
    return out


def boot_secure(image=None, signed=True, **kw):
    """Boot under Secure Boot OVMF (snakeoil keys enrolled). signed=True signs a temporary copy of
    the image with the snakeoil key first; signed=False boots it as is (expect a refusal)."""
    if image is None:
        image = DEFAULT_IMAGE
    if not signed:
        return boot(image=image, secure_boot=True, **kw)
    with tempfile.TemporaryDirectory(prefix="pmb-sign-") as d:
        out = sign(image, os.path.join(d, "signed.efi"))
        return boot(image=out, secure_boot=True, **kw)
