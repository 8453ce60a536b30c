"""The hosted runner as a platform (issues 11, 19): its workers spin right after a job like the image's APs and
sleep once idle, it holds /dev/cpu_dma_latency at 2 us (C1 allowed, deeper states not) while it measures and
says whether it could, and its records name the CPU it measured
on and the page size it obtained. Runs pmubench-host on this machine; no QEMU."""
import errno
import os
import struct
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from pmb import parse  # noqa: E402

HOST_BENCH = os.path.join(ROOT, "build", "host-bench", "pmubench-host")
DMA = "/dev/cpu_dma_latency"
NO_CONSTRAINT = 2000000000  # PM_QOS_DEFAULT_VALUE: what the device reads with no request held
MIB2 = 2 << 20


@pytest.fixture(scope="module")
def exe():
    p = subprocess.run(["make", "-s", "host-bench"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return HOST_BENCH


def dma_target():
    """The CPU latency QoS target in effect now (us), or None when the device cannot be read."""
    try:
        fd = os.open(DMA, os.O_RDONLY)
    except OSError:
        return None
    try:
        return struct.unpack("i", os.read(fd, 4))[0]
    finally:
        os.close(fd)


def thread_states(pid):
    """{tid: state letter} of the process's threads, from /proc."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                out[int(tid)] = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            pass
    return out


def run_watched(exe, args, cpus):
    """Runs the runner on the CPU set `cpus`. While it runs, samples its worker threads' states (the main thread
    left out) and the QoS target: a target read between two looks that both saw workers was read while the
    runner held its request (it opens the device before it starts the workers and closes it after joining them)."""
    # stdout and stderr to files, not pipes: the loop below does not read while the runner writes, and a run's
    # records outgrow a pipe's 64 KiB (the runner then blocks in write and never ends)
    out_f, err_f = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    p = subprocess.Popen([exe, *args], stdout=out_f, stderr=err_f, text=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, cpus))

    def workers():
        try:
            return {t: st for t, st in thread_states(p.pid).items() if t != p.pid}
        except OSError:
            return {}
    samples, targets = [], []
    while p.poll() is None:
        w0 = workers()
        target = dma_target()
        w1 = workers()
        samples.append(w0)
        if w0 and w1:
            targets.append(target)
        time.sleep(0.01)
    p.wait(timeout=300)
    out_f.seek(0)
    err_f.seek(0)
    out, err = out_f.read(), err_f.read()
    out_f.close()
    err_f.close()
    assert p.returncode == 0, out[-2000:] + err
    return parse.parse_log(out), out, samples, targets


def test_hosted_cpu_page_size_dma_latency_and_idle_workers(exe):
    allowed = sorted(os.sched_getaffinity(0))
    # The last two allowed CPUs, so that the benchmark's own CPU is not CPU 0 wherever there are two or more.
    cpus = set(allowed[-2:])
    before = dma_target()
    run, out, samples, targets = run_watched(
        exe, ["bench=latency,penalty", "profile=quick", "max_bytes=16M", "time_budget_ms=1"], cpus)
    r = run.run
    self_cpu = min(cpus)  # the main thread is pinned to the first CPU of its mask
    assert r["cpus"] == len(cpus) and r["cpus_allowed"] == len(cpus)

    # The CPU measured on: every sweep point and every Table 2 row timed on the benchmark's own CPU names it.
    sweep = run.by_type("latency_sweep")
    assert sweep and all(x["cpu"] == self_cpu for x in sweep)
    assert "penalties on CPU %d " % self_cpu in out

    # The page size obtained, with how, on every record that measured on a buffer.
    def page_consistent(page_bytes, how, what):
        assert how, what
        if how in ("hugetlbfs", "thp"):
            assert page_bytes >= MIB2, what
        elif how.startswith("base pages") or how == "thp requested, base pages given":
            assert page_bytes == 4096, what
        else:
            assert how.startswith("default") and page_bytes in (4096, MIB2), what
    for x in sweep:
        page_consistent(x["page_bytes"], x["page_how"], "sweep %d" % x["bytes"])
    series = [s for s in run.by_type("latency_series") if s["status"] == "ok"]
    assert {s["page_bytes_requested"] for s in series} >= {4096}
    key = lambda x: (x["mode"], x["page_bytes"], x["page_how"])  # noqa: E731
    for s in series:
        page_consistent(s["page_bytes"], s["page_how"], "series %s" % s["page_bytes_requested"])
        points = sum(t["points"] for t in series if key(t) == key(s))
        assert points == sum(1 for x in sweep if key(x) == key(s)), key(s)
    pen = {x["name"]: x for x in run.by_type("penalty") if x.get("status") != "unavailable"}
    for name in ("l1_hit", "l2_hit", "dram_local"):
        page_consistent(pen[name]["page_bytes"], pen[name]["page_how"], name)
    if "dtlb_miss_4k" in pen:
        d = pen["dtlb_miss_4k"]
        page_consistent(d["page_bytes_small"], d["page_how_small"], "dtlb small")
        page_consistent(d["page_bytes_large"], d["page_how_large"], "dtlb large")

    # /dev/cpu_dma_latency: held at 2 us for the whole run when the device lets us write, else the reason.
    held = r["cpu_dma_latency"]
    if os.access(DMA, os.W_OK):
        assert held == "held at 2 us"
        assert "/dev/cpu_dma_latency held at 2 us" in out
        seen = [t for t in targets if t is not None]
        # the device reads the minimum of every process's request: another runner may hold a lower one
        assert all(t <= 2 for t in seen), targets
        # A target counts only between two looks that saw workers; with one allowed CPU (e.g. under
        # `taskset -c 0`) the runner has none, so there is no window known to be inside its request.
        if len(cpus) > 1:
            assert seen, "no QoS target read while the runner's workers ran (%d samples)" % len(samples)
        if before not in (None, 0):  # nobody else holds it: the request went away with the runner
            assert dma_target() == before
    else:
        reason = os.strerror(errno.ENOENT if not os.path.exists(DMA) else errno.EACCES)
        assert held == "not held: " + reason

    # A worker the running benchmark does not use sleeps (a futex wait, "S") instead of spinning: the sweep and the
    # penalties run on the main thread alone, most of the run, so most samples find the worker asleep.
    if len(cpus) > 1:
        states = [st for s in samples for st in s.values()]
        assert len(states) >= 5, "too few samples of the worker thread"
        assert states.count("S") >= 0.5 * len(states), states


def test_hosted_cpu_dma_latency_not_held_without_permission(exe):
    if os.geteuid() != 0 or not os.path.exists(DMA):
        pytest.skip("needs root to run the runner as an unprivileged user")
    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    try:
        p = subprocess.run([exe, "bench=latency", "profile=quick", "max_bytes=1M", "time_budget_ms=1"],
                           capture_output=True, text=True, timeout=300, preexec_fn=drop)
    except (PermissionError, subprocess.SubprocessError) as e:
        pytest.skip("the runner cannot be executed as nobody here: %s" % e)
    if p.returncode == 126 or (p.returncode != 0 and "Permission denied" in p.stderr):
        pytest.skip("the runner cannot be executed as nobody here")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    run = parse.parse_log(p.stdout)
    assert run.run["cpu_dma_latency"] == "not held: " + os.strerror(errno.EACCES)
    assert "/dev/cpu_dma_latency not held: " in p.stdout
    assert run.status == "ok"  # the run goes on without it


# ---- issue 23: a first run from --help -------------------------------------------------------------------------

def test_help_lists_only_honoured_keys_with_a_first_run_example(exe):
    p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stderr == ""
    keys = [l.split()[0] for l in p.stdout.split("Keys this runner honours:\n")[1].splitlines()
            if l.startswith("  ")]
    assert keys == ["profile", "bench", "max_bytes", "max_cpus", "seed", "serialize", "time_budget_ms", "crash_test",
                    "sweep_top", "samples"]
    for image_only in ("serial", "baud", "on_finish", "trace_msr", "pmu_assume", "events", "acpi_dump", "turbo"):
        assert "\n  %s " % image_only not in p.stdout
    assert "build/host-bench/pmubench-host profile=quick > host.log" in p.stdout
    assert "scripts/pmubench report host.log --html host.html" in p.stdout


def test_samples_minimal_in_the_hosted_runner(exe):
    # samples=minimal: the image's minimal mode on Linux too (one replicate, the minimum samples), and the run
    # record says it was the config's choice; samples=normal is what the runner does anyway, and says so
    p = subprocess.run([exe, "bench=latency", "samples=minimal", "profile=quick", "max_bytes=1M", "time_budget_ms=1"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    run = parse.parse_log(p.stdout)
    assert run.run["minimal_samples"] is True and run.run["minimal_samples_why"] == "config: samples=minimal"
    pts = run.by_type("latency_sweep")
    assert pts and all(x["replicate_offsets"] == [0] and x["converged"] is False for x in pts)
    p = subprocess.run([exe, "bench=none", "samples=normal"], capture_output=True, text=True, timeout=60)
    r = parse.parse_log(p.stdout).run
    assert r["minimal_samples"] is False and r["minimal_samples_why"] == "config: samples=normal"
    p = subprocess.run([exe, "bench=none"], capture_output=True, text=True, timeout=60)
    r = parse.parse_log(p.stdout).run
    assert r["minimal_samples"] is False and "minimal_samples_why" not in r


def test_config_error_on_stderr_and_the_error_record_on_stdout(exe):
    p = subprocess.run([exe, "bench=nope"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.startswith("pmubench-host: config error: command line: bad value for 'bench': "
                               "unknown benchmark 'nope'")
    assert p.stderr.count("\n") == 1
    assert '"type":"error"' in p.stdout and "config error" not in p.stdout


def test_one_cpu_warns_that_other_core_rows_are_unavailable(exe):
    cpu = sorted(os.sched_getaffinity(0))[0]
    p = subprocess.run([exe, "bench=none"], capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    assert p.returncode == 0
    assert "warning: only 1 CPU to run on" in p.stderr and "taskset -c 0,1" in p.stderr
    if len(os.sched_getaffinity(0)) > 1:
        p = subprocess.run([exe, "bench=none"], capture_output=True, text=True, timeout=60)
        assert "warning" not in p.stderr


def size_text(b):
    """bench/lat_common.c's lat_bytes_text."""
    units, v, u = ["B", "KiB", "MiB", "GiB", "TiB"], float(b), 0
    while v >= 1024 and u + 1 < len(units):
        v, u = v / 1024, u + 1
    return "%d %s" % (v, units[u]) if v == int(v) else "%.3g %s" % (v, units[u])


def test_last_plateau_line_is_the_last_plateau(exe):
    """The console's 'last plateau' line names the reference series' last latency_plateau record (its start and
    median), and where the sweep's largest point lies more than KNEE_MIN_STEP (1.25x) above it says the curve
    rises past it and to what."""
    p = subprocess.run([exe, "bench=latency", "profile=quick", "max_bytes=32M"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    run = parse.parse_log(p.stdout)
    plats = [r for r in run.by_type("latency_plateau") if r.get("reference_series")]
    last = plats[-1]
    assert last["last"] is True and not any(r["last"] for r in plats[:-1])
    line = next(l for l in p.stdout.splitlines() if l.lstrip().startswith("last plateau (from "))
    assert "%.2f ns" % last["median"] in line
    assert line.lstrip().startswith("last plateau (from %s" % size_text(last["bytes_from"])), line
    ser = last["series"]
    pts = sorted((r["bytes"], r["median"]) for r in run.by_type("latency_sweep")
                 if r.get("mode") == ser["mode"] and r.get("page_bytes") == ser["page_bytes"])
    top_bytes, top_ns = pts[-1]
    if top_ns > 1.25 * last["median"]:
        assert "rises without another plateau to %.2f ns" % top_ns in line
    else:
        assert "to the largest set" in line
