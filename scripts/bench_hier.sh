#!/usr/bin/env bash
# bench_hier.sh: a comparison of the hierarchical factor algorithm on emulated clusters
# (scripts/cluster): native, pairwise, radix, hier:k=1, hier (the model's k) and auto with a
# table that xchg-tune made on the same cluster, side by side in one xchg-bench job per
# repetition, MPI_Alltoall, blocks 1 KiB to 256 KiB. Needs root (network namespaces).
#
# Clusters (result folders under $BUILD/bench-hier/):
#   3221-100mbit    4 nodes of 3, 2, 2 and 1 ranks on one switch, links of 100 Mbit/s
#   3221-1gbit      the same at 1 Gbit/s
#   41111-100mbit   5 nodes of 4, 1, 1, 1 and 1 ranks, 100 Mbit/s
#   41111-1gbit     the same at 1 Gbit/s
# For each: /proc/loadavg (setup.txt), the cluster up, node_layout's 4 MiB ping-pong between the
# first and the last node (ping.txt), xchg-tune on the cluster (tune.txt, table.txt; skipped when
# BENCH_HIER_TUNE=0 and table.txt exists), then $BENCH_HIER_REPEAT xchg-bench jobs with
# XCHG_TUNING=table.txt and XCHG_VERBOSE=1 (repN.csv; the decisions in verboseN.txt), the
# cluster down, and summary.txt: per block, the median over the jobs of each line's median time,
# auto's choice, and the faster hier's time against native (nat/hier) and against the fastest
# of the others, auto left out (best/hier; above 1: hier is faster). Then
# scripts/plot_hier.sh draws $BUILD/bench-hier/hier.png (speed-up over native, a panel a cluster).
# Every cluster session (up .. down) holds flock $BENCH_HIER_LOCK and the session lock of
# scripts/xchgrun (/run/lock/xchg-cluster.session), so that other users of the cluster wait;
# one session lasts 1 to 8 minutes.
#
# Environment:
#   MPI=openmpi|mpich (default openmpi: with more ranks than cores, Open MPI's native waits
#                      yield with mpi_yield_when_idle, MPICH's busy-poll)
#   BUILD (default build/openmpi for Open MPI, build for MPICH)
#   BENCH_HIER_ONLY=REGEX      only the clusters whose name matches
#   BENCH_HIER_SIZES=1K,...    blocks (default 1K,2K,4K,8K,16K,32K,64K,128K,256K)
#   BENCH_HIER_ALGOS=...       (default native,pairwise,radix,hier:k=1,hier,auto)
#   BENCH_HIER_REPEAT=3        xchg-bench jobs per cluster
#   BENCH_HIER_TIME_MS=300     time budget per line (at least 5, at most 40 timed calls, 2 warm-up)
#   BENCH_HIER_TUNE=1          0: reuse an existing table.txt
#   BENCH_HIER_TUNE_ARGS=...   xchg-tune's options (default --quick --sizes RANKS --max-bytes 256K)
#   BENCH_HIER_LOCK=/tmp/xchg-cluster.lock
set -euo pipefail
cd "$(dirname "$0")/.."
MPI=${MPI:-openmpi}
case $MPI in
mpich) BUILD=${BUILD:-build} ;;
openmpi) BUILD=${BUILD:-build/openmpi} ;;
*) echo "bench_hier.sh: MPI must be mpich or openmpi" >&2; exit 2 ;;
esac
only=${BENCH_HIER_ONLY:-}
sizes=${BENCH_HIER_SIZES:-1K,2K,4K,8K,16K,32K,64K,128K,256K}
algos=${BENCH_HIER_ALGOS:-native,pairwise,radix,hier:k=1,hier,auto}
repeat=${BENCH_HIER_REPEAT:-3}
time_ms=${BENCH_HIER_TIME_MS:-300}
tune=${BENCH_HIER_TUNE:-1}
lock=${BENCH_HIER_LOCK:-/tmp/xchg-cluster.lock}
out=$BUILD/bench-hier
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "bench_hier.sh: BENCH_HIER_REPEAT='$repeat' is not a positive number" >&2; exit 2; }
why=$(scripts/cluster check) || { echo "bench_hier.sh: ${why#cluster: }" >&2; exit 1; }
for f in xchg-bench xchg-tune tests/node_layout; do
    [ -x "$BUILD/$f" ] || { echo "bench_hier.sh: $BUILD/$f is missing (make MPI=$MPI all)" >&2; exit 1; }
done

# name  nodes  link
configs=(
    "3221-100mbit 3,2,2,1 100mbit"
    "3221-1gbit 3,2,2,1 1gbit"
    "41111-100mbit 4,1,1,1,1 100mbit"
    "41111-1gbit 4,1,1,1,1 1gbit"
)

on() { # NODES LINK PROGRAM ARGS: natively on the star cluster (xchg-bench carries xchg)
    local nodes=$1 link=$2
    shift 2
    scripts/xchgrun --mpi="$MPI" --nodes "$nodes" --link "$link" --keep --native "$@" </dev/null
}

# The medians over the jobs, one line per block and algorithm, and the comparison.
summarize() {
    local dir=$1
    python3 - "$dir" <<'EOF'
import csv, glob, re, statistics, sys
d = sys.argv[1]
times, params = {}, {}
for f in sorted(glob.glob(d + "/rep*.csv")):
    for r in csv.DictReader(open(f)):
        b, a = int(r["bytes"]), r["algorithm"]
        if a.startswith("hier"):  # hier:k=1 (the spec as given) and hier (the model's k)
            a = "hier1" if a == "hier:k=1" else "hierk"
        times.setdefault((b, a), []).append(float(r["median_us"]))
        params[(b, a)] = r["params"]
# the k that forced hier ran with, as XCHG_VERBOSE=1 printed it (the CSV's params column
# prices the spec without the node layout)
ran_k = {}
for f in sorted(glob.glob(d + "/verbose*.txt")):
    for line in open(f, errors="replace"):
        m = re.search(r"decide alltoall p=\d+ block=(\d+): hier \[(k=\d+)\] \(forced\)", line)
        if m:
            ran_k[int(m.group(1))] = m.group(2)  # the last one of a block: hier without k
rows = {}
for (b, a), ts in times.items():
    rows.setdefault(b, {})[a] = (statistics.median(ts), len(ts), params[(b, a)])
    if a == "auto":
        rows[b]["auto_choice"] = params[(b, a)]
cols = ["native", "pairwise", "radix", "hier1", "hierk", "auto"]
cols += sorted({a for (b, a) in times} - set(cols))  # specs beyond the default list
print("# medians over %d jobs of each line's median time, ms per MPI_Alltoall call" % max(len(v) for v in times.values()))
print("%8s " % "bytes" + " ".join("%10s" % c for c in cols) + "  %-8s %9s %9s  %s" % ("hier k", "nat/hier", "best/hier", "auto chose"))
for b in sorted(rows):
    r = rows[b]
    t = {c: r[c][0] / 1000 for c in cols if c in r}
    hk = r.get("hierk")
    hier_best = min(t.get("hier1", 1e30), t.get("hierk", 1e30))
    others = min([v for c, v in t.items() if c not in ("hier1", "hierk", "auto")] or [0])
    print("%8d " % b + " ".join("%10.2f" % t[c] if c in t else "%10s" % "-" for c in cols) +
          "  %-8s %9.2f %9.2f  %s" % (ran_k.get(b, "-"), t.get("native", 0) / hier_best,
                                     others / hier_best, r.get("auto_choice", "-")))
EOF
}

start=$(date +%s)
mkdir -p "$out"
done_names=()
for config in "${configs[@]}"; do
    read -r name nodes link <<<"$config"
    [ -n "$only" ] && ! [[ $name =~ $only ]] && continue
    dir=$out/$name
    mkdir -p "$dir"
    ranks=$(($(tr ',' '+' <<<"$nodes")))
    echo "== bench-hier: $name ($MPI; nodes $nodes, $ranks ranks, links $link)"
    (
        exec {fd}>>"$lock"
        flock "$fd"
        # and the cluster session of scripts/cluster's users (xchgrun, the test cases)
        mkdir -p /run/lock
        exec {session}>>/run/lock/xchg-cluster.session
        flock "$session"
        export XCHG_CLUSTER_HELD=1
        trap 'scripts/cluster down >/dev/null 2>&1 || true' EXIT
        rm -f "$dir"/rep*.csv "$dir"/verbose*.txt
        {
            echo "$name: $MPI, star, nodes $nodes ($ranks ranks, $(nproc) cores), links $link"
            echo "start $(date -u '+%Y-%m-%d %H:%M:%S') UTC, loadavg $(cat /proc/loadavg)"
        } >"$dir/setup.txt"
        scripts/cluster up --nodes "$nodes" --link "$link" >/dev/null
        on "$nodes" "$link" "$BUILD/tests/node_layout" --pingpong 4194304 --reps 2 2>&1 |
            { grep -E '^node_layout: (nodes=|pingpong)' || true; } | tee "$dir/ping.txt"
        if [ "$ranks" -gt "$(nproc)" ]; then export XCHG_WAIT=yield; else unset XCHG_WAIT; fi
        unset XCHG_TUNING XCHG_ALLTOALL XCHG_VERBOSE
        if [ "$tune" = 1 ] || [ ! -s "$dir/table.txt" ]; then
            read -r -a tune_args <<<"${BENCH_HIER_TUNE_ARGS:---quick --sizes $ranks --max-bytes 256K}"
            t0=$(date +%s)
            on "$nodes" "$link" "$BUILD/xchg-tune" "${tune_args[@]}" -o "$dir/table.txt" \
                >"$dir/tune.txt" 2>&1
            echo "xchg-tune ${tune_args[*]}: $(($(date +%s) - t0)) s" >>"$dir/tune.txt"
            grep -E '^(machine|#.*(beta|tau|port|inter))' "$dir/table.txt" | head -n 5 || true
        fi
        export XCHG_TUNING="$(readlink -f "$dir/table.txt")" XCHG_VERBOSE=1
        for i in $(seq 1 "$repeat"); do
            echo "-- xchg-bench job $i/$repeat (loadavg $(cut -d' ' -f1-3 /proc/loadavg))"
            echo "job $i: loadavg $(cat /proc/loadavg)" >>"$dir/setup.txt"
            on "$nodes" "$link" "$BUILD/xchg-bench" --coll alltoall --algos "$algos" \
                --sizes "$sizes" --warmup 2 --min-iters 5 --max-iters 40 --time-ms "$time_ms" \
                -o "$dir/rep$i.csv" >"$dir/verbose$i.txt" 2>&1 || {
                echo "bench_hier.sh: $name: xchg-bench job $i failed (see $dir/verbose$i.txt)" >&2
                exit 1
            }
        done
        echo "end $(date -u '+%Y-%m-%d %H:%M:%S') UTC, loadavg $(cat /proc/loadavg)" >>"$dir/setup.txt"
        scripts/cluster down >/dev/null
    )
    summarize "$dir" | tee "$dir/summary.txt"
    done_names+=("$name")
done
[ ${#done_names[@]} -gt 0 ] || { echo "bench_hier.sh: BENCH_HIER_ONLY='$only' names no cluster" >&2; exit 2; }
if command -v gnuplot >/dev/null 2>&1; then
    scripts/plot_hier.sh "$out/hier.png" "${done_names[@]/#/$out/}"
fi
echo "== bench-hier: done in $(($(date +%s) - start)) s: $out/*/summary.txt"
