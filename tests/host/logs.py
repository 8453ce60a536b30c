"""Synthetic pmubench serial logs with real record counts and CRC-32s, for the host-tool tests."""
import json
import random
import zlib

NOISE = ("\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01HBdsDxe: loading Boot0002 \"UEFI QEMU HARDDISK\"\r\n"
         "BdsDxe: starting Boot0002 \"UEFI QEMU HARDDISK QM00001 \"\r\n"
         "\x1b[1m\x1b[33m\x1b[40mShell> \x1b[0m\x1b[37m\x1b[40m\r\n")


def dumps(rec):
    return json.dumps(rec, separators=(",", ":"))


def crc_of(lines):
    crc = 0
    for line in lines:
        crc = zlib.crc32(line.encode() + b"\n", crc)
    return "%08x" % crc


def end_record(lines, status="ok"):
    return {"type": "end", "status": status, "records": len(lines), "crc32": crc_of(lines)}


def run_lines(records, status="ok"):
    """Record dicts (run record first) -> record lines including a valid end record."""
    lines = [dumps(r) for r in records]
    return lines + [dumps(end_record(lines, status))]


def serial(lines, noise=True, eol="\r\n", banner="pmubench 0.1.0 starting"):
    """Record lines -> a serial capture with firmware noise and human-readable lines."""
    out = [NOISE] if noise else []
    out.append(banner + eol)
    for i, line in enumerate(lines):
        out.append(line + eol)
        if noise and i % 7 == 3:
            out.append("# progress: %d records%s" % (i, eol))
    out.append("pmubench: done" + eol)
    return "".join(out)


def run_record(brand="Intel(R) Xeon(R) CPU X5570 @ 2.93GHz", cpus=4, numa=2, memory=2 << 30, seed=1):
    return {
        "type": "run", "version": "0.1.0",
        "cpu": {"vendor": "GenuineIntel", "family": 6, "model": 26, "stepping": 5, "brand": brand,
                "uarch": "nehalem"},
        "tsc_hz": 2933000000, "tsc_method": "cpuid_15h", "core_tsc_ratio": 1.0,
        "core_tsc_method": "aperf_mperf", "memory_bytes": memory, "cpus": cpus, "numa_nodes": numa,
        "caches": [{"level": 1, "type": "data", "bytes": 32768, "ways": 8, "line": 64},
                   {"level": 2, "type": "unified", "bytes": 262144, "ways": 8, "line": 64},
                   {"level": 3, "type": "unified", "bytes": 8388608, "ways": 16, "line": 64}],
        "pmu": {"version": 3, "gp_counters": 4, "fixed_counters": 3, "status": "ok", "reason": ""},
        "config": {"profile": "quick", "seed": seed, "bench": "all", "serialize": "lfence"},
    }


def full_run(scale=1.0, seed=1, jitter=0.01, cpus=4, numa=2, brand=None, status_rows=None,
             extra_types=True):
    """A complete run's records (no end record). scale multiplies latencies and divides bandwidths,
    so scale > 1 is a worse machine; jitter is the relative random noise per figure."""
    rnd = random.Random(seed)

    def j(v):
        return v * scale * (1 + rnd.uniform(-jitter, jitter))

    ghz = 2.933
    recs = [run_record(brand=brand or "Intel(R) Xeon(R) CPU X5570 @ 2.93GHz", cpus=cpus, numa=numa, seed=seed)]
    recs.append({"type": "cpu", "apic_id": 0, "x2apic": False})
    recs.append({"type": "topology", "packages": 1, "cores": cpus, "threads": 1})
    recs.append({"type": "memory", "ranges": 3, "usable_bytes": (2 << 30) - (64 << 20)})
    # latency sweep: plateaus at L1 4c, L2 10c, L3 40c, DRAM 60ns.
    for shift in range(12, 28):
        size = 1 << shift
        cyc = 4 if size <= 32768 else 10 if size <= 262144 else 40 if size <= 8 << 20 else 60 * ghz
        c = j(cyc)
        recs.append({"type": "latency_sweep", "bytes": size, "page_bytes": 4096, "mode": "random",
                     "ns": round(c / ghz, 3), "cycles": round(c, 2), "tsc": round(c, 2), "cv": 0.01,
                     "samples": 15})
    rows = [("L1", 4, None), ("L2", 10, None), ("L3_unshared", 42, None), ("L3_shared_other_core", 63, None),
            ("L3_modified_other_core", 77, None), ("remote_L3", 180, None), ("local_DRAM", None, 62),
            ("remote_DRAM", None, 105)]
    for src, cyc, ns in rows:
        st = (status_rows or {}).get(src, "ok")
        if st != "ok":
            recs.append({"type": "data_source", "source": src, "status": "unavailable",
                         "reason": "single socket", "method": "pointer_chase"})
            continue
        c = j(cyc if cyc is not None else ns * ghz)
        recs.append({"type": "data_source", "source": src, "status": "ok", "cycles": round(c, 2),
                     "ns": round(c / ghz, 3), "cv": 0.02, "method": "pointer_chase",
                     "reference": "Intel Core i7 guide Table 2"})
    for a in range(cpus):
        for b in range(cpus):
            if a != b:
                recs.append({"type": "c2c", "from_cpu": a, "to_cpu": b, "hit_ns": round(j(25 + a + b), 2),
                             "hitm_ns": round(j(30 + 2 * abs(a - b)), 2)})
    for a in range(numa):
        for b in range(numa):
            recs.append({"type": "numa_latency", "from_node": a, "to_node": b,
                         "ns": round(j(62 if a == b else 105), 2)})
    for d in (0, 100, 1000):
        recs.append({"type": "loaded_latency", "delay": d, "bytes_per_s": round(20e9 / scale / (1 + d / 200)),
                     "ns": round(j(62 + 100 / (1 + d / 100)), 2)})
    for lvl, b in ((1, 32768), (2, 262144), (3, 8 << 20)):
        recs.append({"type": "cache_inferred", "level": lvl, "bytes": b, "cpuid_bytes": b,
                     "ns": round(j({1: 1.4, 2: 3.4, 3: 14}[lvl]), 3), "cycles": round(j({1: 4, 2: 10, 3: 40}[lvl]), 2),
                     "agrees": True})
    for kern in ("read", "write", "copy"):
        for t in (1, 2, 4):
            recs.append({"type": "bandwidth", "kernel": kern, "isa": "sse2", "bytes": 64 << 20, "threads": t,
                         "node_from": 0, "node_to": 0,
                         "bytes_per_s": round(8e9 * min(t, 3) / scale * (1 + rnd.uniform(-jitter, jitter))),
                         "cv": 0.02})
    recs.append({"type": "branch", "test": "random", "period": 2, "cycles_per_branch": round(j(9.5), 2),
                 "mispredict_rate": 0.5, "method": "pmc"})
    recs.append({"type": "penalty", "name": "l1d_miss_l2_hit", "cycles": round(j(6), 2), "ns": round(j(6) / ghz, 3),
                 "cv": 0.03, "method": "difference", "reference": "guide: ~6 cycles"})
    recs.append({"type": "penalty", "name": "branch_mispredict", "cycles": round(j(17), 2),
                 "ns": round(j(17) / ghz, 3), "cv": 0.03, "method": "difference", "reference": ""})
    recs.append({"type": "cycle_accounting", "bench": "pointer_chase_l3", "total_cycles": round(j(1e6)),
                 "retiring_cycles": 100000, "stall_cycles": 880000, "counted_stall_cycles": 850000,
                 "unaccounted_cycles": 30000,
                 "terms": [{"event": "MEM_LOAD_RETIRED.LLC_UNSHARED_HIT", "count": 20000, "penalty": 40},
                           {"event": "MEM_LOAD_RETIRED.L2_HIT", "count": 5000, "penalty": 10}]})
    recs.append({"type": "pmu_selftest", "status": "ok",
                 "checks": [{"name": "fixed_ctr0_counts", "status": "ok", "detail": ""},
                            {"name": "pmi_delivery", "status": "ok", "detail": ""}]})
    recs.append({"type": "pebs_latency", "row": "L3_unshared", "source": 1, "samples": 1000,
                 "mean_cycles": round(j(45), 2), "histogram": [[32, 10], [64, 900], [128, 90]]})
    if extra_types:
        recs.append({"type": "future_record", "x": 1, "nested": {"y": [1, 2, 3]}})
    return recs


def minimal_run(seed=1):
    return [run_record(seed=seed), {"type": "cpu", "apic_id": 0}]


def full_log(noise=True, status="ok", **kw):
    return serial(run_lines(full_run(**kw), status), noise=noise)
