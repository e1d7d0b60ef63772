#!/bin/sh
# tests/tools/run-matrix-analysis.sh: mpi-bench/run-matrix's analysis on
# synthetic results (--replot: no build, no cluster, no fio). Checks that
# the large write is held against fio's write of the same kind (the worse
# of the new-file and the overwrite pair), that the default buffers are
# judged by the side-by-side runs and not by the sweep's luckiest mean,
# that an HDF5 case run several times is judged by its medians (not by
# its first run), that the sustained write's targets print fio's spread of
# the same pattern and the ratio table the collective 4 KiB calls, that
# the caches-off blocking write is held run by run against the fio figure
# measured beside it (median ratio), that the idle servers' row names the
# worst scenario, that a write row's sync and close are printed apart from
# its transfers (and rows from before pstripe-bench reported them are
# left out), and that a second replot gives the same summary (no row or
# note twice).
# Skips (77) without python3.
set -eu

srcdir=${srcdir:-$(dirname "$0")/../..}
matrix=$srcdir/mpi-bench/run-matrix
command -v python3 >/dev/null 2>&1 || { echo "no python3: skip"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/run-matrix-analysis.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

python3 - "$work/results.json" <<'PY'
import json, sys

def row(phase, mib_s, region=0, pattern="contig", xfer=4 << 20):
    return {"phase": phase, "pattern": pattern, "region": region, "xfer": xfer,
            "mib_s": mib_s, "lat_median_s": 0.001, "lat_max_s": 0.002}

def run(scenario, fs, variant, rows, np=2, hints=None):
    return {"scenario": scenario, "fs": fs, "variant": variant, "nprocs": np,
            "hints": hints or {}, "command": "synthetic", "results": rows}

runs = [
    run("large", "pstripe", "contig",
        [dict(row("write", 1500), bytes=2 << 30, seconds=1.6, sync_seconds=0.8),
         row("read", 1700)]),
    run("large", "ufs", "contig", [row("write", 500), row("read", 2000)]),
    run("large", "pstripe", "contig-over", [row("write", 1800)]),
    run("collective", "pstripe", "coll", [row("write", 400, 4096, "vector")]),
    run("collective", "pstripe", "indep", [row("write", 800, 4096, "vector")]),
]
# the sweep: 4mx2 is the luckiest (1200 against the default's 800) ...
for variant, mib in (("default", 800), ("4mx2", 1200), ("1mx4", 900)):
    hints = {} if variant == "default" else {"romio_pstripe_buffer_size": 4 << 20}
    for _ in range(2):
        runs.append(run("buffers", "pstripe", variant,
                        [row("write", mib), row("read", mib)], np=1, hints=hints))
# ... and side by side it is no better than the default
for variant in ("default@4mx2", "4mx2@4mx2", "4mx2@4mx2", "default@4mx2"):
    runs.append(run("buffers-confirm", "pstripe", variant,
                    [row("write", 1000), row("read", 1000)], np=1))
# the sustained write: max 6 ms over a median of 1.5 (4.0), and the
# collective 4 KiB calls on both file systems
runs.append(run("sustained", "pstripe", "contig",
                [dict(row("write", 1300), lat_median_s=0.0015, lat_max_s=0.006,
                      lat_p99_s=0.003, bytes=6 << 30, calls=6144)]))
runs.append(run("collective", "pstripe", "calls-4k", [row("write", 900), row("read", 600)]))
runs.append(run("collective", "ufs", "calls-4k", [row("write", 450), row("read", 800)]))
# caches-off blocking 4 KiB writes: two runs beside their own fio qd1
# figure (floors 20 + 70 and 20 + 100 us), one without (the limits' 20 +
# 80): ratios 150/90, 120/120, 130/100, median 1.30
for med, fio in ((150, 70), (120, 100), (130, None)):
    r = dict(row("write", 25, 0, "contig", 4096), lat_median_s=med * 1e-6, lat_p99_s=4e-4,
             calls=8192)
    if fio:
        r.update(fio_qd1_lat_p50_us=fio, fio_qd1_clat_p50_us=fio / 2)
    runs.append(run("latency", "pstripe", "nocache", [r], np=1))
# HDF5, three alternated runs of a case: the first pstripe run is an
# outlier (100); the medians are 900 and 1000
for p, u in ((100, 1000), (900, 1100), (1000, 1000)):
    for fs, mib in (("pstripe", p), ("ufs", u)):
        runs.append(run("hdf5", fs, "chunked-coll", [dict(row("write", mib), open_seconds=0.01)]))
results = {
    "program": "mpi-bench/run-matrix", "command": "run-matrix (synthetic)",
    "profile": "full", "mpi": "mpich", "started": "2026-11-28T00:00:00",
    "machine": {"hostname": "test", "loadavg_start": [0.5, 0.5, 0.5],
                "loadavg_end": [1.0, 1.0, 1.0]},
    "limits": {
        "fio_seq_read_1m": {"before": {"mib_s": 1600}, "after": {"mib_s": 1800}},
        "fio_large_write_new": {"mib_s": 1600},
        "fio_large_write_over": {"mib_s": 2400},
        "fio_sustained_write": {"mib_s": 1400, "clat_p50_us": 1200, "clat_max_us": 9600},
        "ucx_am_lat_tcp_8": {"lat_us": 10}, "ucx_am_lat_tcp_4k": {"lat_us": 10},
        "fio_randwrite_4k_qd1": {"lat_p50_us": 80, "clat_p50_us": 40, "iops": 12000,
                                 "mib_s": 47},
    },
    "runs": runs, "notes": ["a note"], "duration_s": 1,
    "idle_cpu": {"large": 0.0, "regions": 37.5, "hdf5": 1.0},
}
with open(sys.argv[1], "w") as f:
    json.dump(results, f)
PY

python3 "$matrix" --replot "$work" >"$work/replot1.log" 2>&1 ||
    { cat "$work/replot1.log"; fail "replot failed"; }
cp "$work/summary.txt" "$work/summary1.txt"
python3 "$matrix" --replot "$work" >"$work/replot2.log" 2>&1 ||
    { cat "$work/replot2.log"; fail "second replot failed"; }
cat "$work/summary.txt"

target() {
    grep -F "$1" "$work/summary.txt" || fail "no target line '$1'"
}

# the worse pair: over written blocks, 1800 / 2400
target "large write >=" | grep -F "NOT MET" | grep -F "ratio   0.75" |
    grep -F "new file 0.94x" >/dev/null || fail "large write: not the worse of the two pairs"
# side by side 1000 / 1000, not the sweep's 800 / 1200
target "default buffers write np=1" | grep -F "[met    ]" | grep -F "ratio   1.00" |
    grep -F "sweep (2 passes): default 800, 4mx2 1200" >/dev/null ||
    fail "default buffers: not judged by the side-by-side runs"
target "large read >=" | grep -F "ratio   1.00" >/dev/null || fail "large read: not 1700 / 1700"
target "hdf5 collective write" | grep -F "ratio   0.90" | grep -F "medians of 3 runs" |
    grep -F "runs 100-1000 / 1000-1100" >/dev/null ||
    fail "hdf5: not judged by the medians of its runs (900 / 1000)"

# the disk's own spread beside the target: 9.6 ms over 1.2, 8.0
target "sustained write pstripe" | grep -F "[met    ]" | grep -F "max/median 4.0" |
    grep -F "the disk alone (fio, same pattern): median 1.20 ms, max 9.60 ms (max/median 8.0)" \
    >/dev/null || fail "sustained write: the disk's own spread not printed beside it"
grep -F "collective 4 KiB calls write" "$work/summary.txt" | grep -E "= +2\.00$" >/dev/null ||
    fail "collective 4 KiB calls: no write ratio 900 / 450"
grep -F "collective 4 KiB calls read" "$work/summary.txt" | grep -E "= +0\.75$" >/dev/null ||
    fail "collective 4 KiB calls: no read ratio 600 / 800"

# the blocking write: each run against the floor beside it, the median ratio
target "blocking 4 KiB write" | grep -F "[met    ]" | grep -F "ratio   1.30" |
    grep -F "median ratio of 3 run(s) (1.00-1.67)" |
    grep -F "measured beside 2 of the runs (the others: the limits' floor)" >/dev/null ||
    fail "blocking write: not the median of the runs against their own floors"

# the idle servers: the worst scenario's figure, against <= 10%
target "idle servers between scenarios" | grep -F "NOT MET" | grep -F "worst 37.5% after regions" \
    >/dev/null || fail "idle servers: not judged by the worst scenario"

# the write's end: 2 GiB in 1.6 s, 0.8 of them the sync and close; the ufs
# row has no sync_seconds (an older pstripe-bench) and is left out
grep -F "large contig         pstripe    1500.0 MiB/s  transfers    2560.0  sync+close  0.800 of  1.600 s ( 50%)" \
    "$work/summary.txt" >/dev/null || fail "large write: its sync and close not apart from its transfers"
if grep -F "large contig         ufs" "$work/summary.txt" >/dev/null; then
    fail "a write row without sync_seconds printed in the sync table"
fi

cmp "$work/summary1.txt" "$work/summary.txt" || fail "a second replot changed the summary"
n=$(grep -c "pstripe write z=4k" "$work/summary.txt") || true
[ "$n" = 1 ] || fail "collective-vs-independent row printed $n times"
[ "$(grep '^note:' "$work/summary.txt" | sort | uniq -d | wc -l)" = 0 ] || fail "a note printed twice"
grep -F "load average at start 0.50 0.50 0.50, at end 1.00 1.00 1.00" "$work/summary.txt" \
    >/dev/null || fail "load averages not printed as figures"
echo "run-matrix analysis: ok"
