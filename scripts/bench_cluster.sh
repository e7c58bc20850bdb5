#!/usr/bin/env bash
# make bench-cluster: the xchg-bench sweep on emulated clusters (scripts/cluster), with
# plots and a summary. Needs root (network namespaces); one cluster session at a time.
#
# Clusters (names of the result folders under $BUILD/bench-cluster/):
#   star-3221-100mbit   4 nodes of 3, 2, 2 and 1 ranks on one switch, links of 100 Mbit/s
#   star-3221-1gbit     the same at 1 Gbit/s
#   ring8-RATE          8 nodes of 1 rank in a ring, links of $BENCH_CLUSTER_RING_LINK
#   torus4x4-RATE       16 nodes of 1 rank in a 4x4 torus, links of $BENCH_CLUSTER_TORUS_LINK
# (the ring's and torus's rates are low enough that the links, not the two cores, bound the
# time of the larger blocks). For each: the cluster is brought up; node_layout measures the
# ping-pong rate between two nodes (and inside a node) on it, natively (ping.txt); then
# xchg-bench runs every collective with native, auto and every algorithm of the registry (its
# default list, radix-like ones also at r=2, SQRTP and P), blocks 1 B to $BENCH_CLUSTER_MAX_BYTES
# (default 256K) in powers of two: bench.csv. xchg-bench carries xchg itself (it is linked with
# the library's objects), so it runs without the preload (xchgrun --native). With more ranks
# than cores, xchg's algorithms wait with MPI_Test + sched_yield (XCHG_WAIT=yield, set by
# xchgrun), while MPICH's own collectives (native) busy-poll: there native's time includes the
# CPU the spinning ranks take from the others, not only the network; compare xchg's algorithms
# with each other where that dominates (the summary says so for every such cluster).
# scripts/plot.sh then draws time_<collective>_<ranks>ranks.png and writes summary.txt in the
# cluster's folder; $BUILD/bench-cluster/summary.txt gathers every cluster's measured link rate
# and summary.
#
# Environment (the Makefile gives MPI and BUILD):
#   MPI=mpich|openmpi              BUILD=build (the tools; results in $BUILD/bench-cluster)
#   BENCH_CLUSTER_ONLY=REGEX       only the clusters whose name matches
#   BENCH_CLUSTER_MAX_BYTES=256K   BENCH_CLUSTER_TIME_MS=50 (time budget per CSV line)
#   BENCH_CLUSTER_RING_LINK=100mbit  BENCH_CLUSTER_TORUS_LINK=50mbit
#   BENCH_CLUSTER_TUNE_ARGS=...    xchg-tune's options for BENCH_CLUSTER_TUNE=1 (default --quick)
#   BENCH_CLUSTER_TABLE=FILE       auto uses this tuning table (without BENCH_CLUSTER_TUNE=1)
#   BENCH_CLUSTER_TUNE=1           first xchg-tune --quick on the cluster; auto then uses its
#                                  table (tune.txt, table.txt in the cluster's folder)
#   A reduced sweep (each knob replaces one of xchg-bench's defaults; unset: the full sweep):
#   BENCH_CLUSTER_SIZES=LIST       these blocks instead of 1 B .. MAX_BYTES (e.g. 1,64,1K,16K,256K)
#   BENCH_CLUSTER_ALGOS=LIST       these specs instead of xchg-bench's default list
#   BENCH_CLUSTER_COLLS=LIST       these collectives (default alltoall,allgather,alltoallv)
#   BENCH_CLUSTER_ITERS=MIN,MAX    timed calls per line (default 5,1000), within TIME_MS
#   BENCH_CLUSTER_WARMUP=N         untimed calls before each line (default xchg-bench's, 40)
#   BENCH_CLUSTER_ROUNDS=R         xchg-bench --rounds R: the specs of a block in R alternating
#                                  turns (default 1)
#   BENCH_CLUSTER_WORKLOAD=SPEC    alltoallv counts (xchg-bench --workload; default uniform)
#   BENCH_CLUSTER_SMOKE=1          a one-minute check that everything works: the first cluster
#                                  only (or BENCH_CLUSTER_ONLY's), blocks 1, 1K and 64K, native,
#                                  auto and two algorithms per collective, a few calls per line
# The clusters are torn down afterwards (also when interrupted). Hours on a 2-core machine at
# the defaults; run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
MPI=${MPI:-mpich}
BUILD=${BUILD:-build}
case $MPI in mpich | openmpi) ;; *) echo "bench_cluster.sh: MPI must be mpich or openmpi" >&2; exit 2 ;; esac
max_bytes=${BENCH_CLUSTER_MAX_BYTES:-256K}
time_ms=${BENCH_CLUSTER_TIME_MS:-50}
ring_link=${BENCH_CLUSTER_RING_LINK:-100mbit}
torus_link=${BENCH_CLUSTER_TORUS_LINK:-50mbit}
only=${BENCH_CLUSTER_ONLY:-}
smoke=${BENCH_CLUSTER_SMOKE:-0}
tune=${BENCH_CLUSTER_TUNE:-0}
read -r -a tune_args <<<"${BENCH_CLUSTER_TUNE_ARGS:---quick}"
table=${BENCH_CLUSTER_TABLE:-}
if [ -n "$table" ]; then
    [ -r "$table" ] || { echo "bench_cluster.sh: BENCH_CLUSTER_TABLE=$table cannot be read" >&2; exit 2; }
    table=$(readlink -f "$table")
fi
out=$BUILD/bench-cluster
if [ -n "${BENCH_CLUSTER_ITERS:-}" ] && ! [[ $BENCH_CLUSTER_ITERS =~ ^[0-9]+,[0-9]+$ ]]; then
    echo "bench_cluster.sh: BENCH_CLUSTER_ITERS='$BENCH_CLUSTER_ITERS' is not MIN,MAX (e.g. 5,20)" >&2
    exit 2
fi
cores=$(nproc)

why=$(scripts/cluster check) || { echo "bench_cluster.sh: ${why#cluster: }" >&2; exit 1; }
for f in xchg-bench xchg-tune tests/node_layout; do
    [ -x "$BUILD/$f" ] || { echo "bench_cluster.sh: $BUILD/$f is missing (make MPI=$MPI all)" >&2; exit 1; }
done
plots=1
if ! command -v gnuplot >/dev/null 2>&1; then
    scripts/setup.sh "$MPI" gnuplot-nox >/dev/null 2>&1 || true
    command -v gnuplot >/dev/null 2>&1 || plots=0
fi

# name  nodes  link  shape...
configs=(
    "star-3221-100mbit 3,2,2,1 100mbit star"
    "star-3221-1gbit 3,2,2,1 1gbit star"
    "ring8-$ring_link 1 $ring_link ring 8"
    "torus4x4-$torus_link 1 $torus_link torus 4x4"
)

# One cluster session for the whole sweep; the cluster goes when the sweep ends.
mkdir -p /run/lock
exec {lock_fd}>>/run/lock/xchg-cluster.session
if ! flock -n "$lock_fd"; then
    echo "bench_cluster.sh: waiting for another cluster session (/run/lock/xchg-cluster.session)"
    flock "$lock_fd"
fi
export XCHG_CLUSTER_HELD=1
trap 'scripts/cluster down >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# on NODES LINK SHAPE... -- PROGRAM ARGS: PROGRAM on that cluster, natively (see the top)
on() {
    local nodes=$1 link=$2 shape=()
    shift 2
    while [ "$1" != -- ]; do
        shape+=("$1")
        shift
    done
    shift
    scripts/xchgrun --mpi="$MPI" --nodes "$nodes" --link "$link" \
        --shape "${shape[@]}" --keep --native "$@" </dev/null
}

bench_args=(--max-bytes "$max_bytes" --time-ms "$time_ms")
[ -n "${BENCH_CLUSTER_SIZES:-}" ] && bench_args+=(--sizes "$BENCH_CLUSTER_SIZES")
[ -n "${BENCH_CLUSTER_ALGOS:-}" ] && bench_args+=(--algos "$BENCH_CLUSTER_ALGOS")
[ -n "${BENCH_CLUSTER_COLLS:-}" ] && bench_args+=(--coll "$BENCH_CLUSTER_COLLS")
[ -n "${BENCH_CLUSTER_WARMUP:-}" ] && bench_args+=(--warmup "$BENCH_CLUSTER_WARMUP")
[ -n "${BENCH_CLUSTER_ROUNDS:-}" ] && bench_args+=(--rounds "$BENCH_CLUSTER_ROUNDS")
[ -n "${BENCH_CLUSTER_WORKLOAD:-}" ] && bench_args+=(--workload "$BENCH_CLUSTER_WORKLOAD")
if [ -n "${BENCH_CLUSTER_ITERS:-}" ]; then
    bench_args+=(--min-iters "${BENCH_CLUSTER_ITERS%,*}" --max-iters "${BENCH_CLUSTER_ITERS#*,}")
fi
if [ "$smoke" = 1 ]; then
    [ -n "$only" ] || only='^star-3221-100mbit$'
    bench_args=(--sizes "1,1K,64K" --time-ms 5 --min-iters 2 --max-iters 5 --warmup 1
        --algos "native,auto,pairwise,radix,hier,ring,circulant,twophase")
fi

start=$(date +%s)
mkdir -p "$out"
done_names=()
for config in "${configs[@]}"; do
    read -r name nodes link shape_words <<<"$config"
    read -r -a shape <<<"$shape_words"
    [ -n "$only" ] && ! [[ $name =~ $only ]] && continue
    dir=$out/$name
    mkdir -p "$dir"
    rm -f "$dir"/*.csv "$dir"/*.png
    echo "== bench-cluster: $name ($MPI; nodes $nodes, ${shape[*]}, links $link)"
    scripts/cluster up --nodes "$nodes" --link "$link" --shape "${shape[@]}"
    ranks=$(awk -F'=' '$1 == "XC_RANKS" { print $2 }' /run/xchg-cluster/state)

    # the link as MPI sees it: a ping-pong between the first and the last node
    on "$nodes" "$link" "${shape[@]}" -- "$BUILD/tests/node_layout" --pingpong 4194304 \
        --reps 2 2>&1 | { grep -E '^node_layout: (nodes=|pingpong)|finalize guard' || true; } |
        tee "$dir/ping.txt"

    # xchg inside xchg-bench yields when the ranks exceed the cores (xchgrun does it only when
    # it preloads the library)
    if [ "$ranks" -gt "$cores" ]; then export XCHG_WAIT=yield; else unset XCHG_WAIT; fi
    unset XCHG_TUNING
    if [ "$tune" = 1 ]; then
        echo "-- xchg-tune ${tune_args[*]} ($dir/table.txt)"
        on "$nodes" "$link" "${shape[@]}" -- "$BUILD/xchg-tune" "${tune_args[@]}" \
            -o "$dir/table.txt" 2>&1 | tee "$dir/tune.txt"
        export XCHG_TUNING=$dir/table.txt
    elif [ -n "$table" ]; then
        export XCHG_TUNING=$table
    fi

    echo "-- xchg-bench ($dir/bench.csv)"
    on "$nodes" "$link" "${shape[@]}" -- "$BUILD/xchg-bench" "${bench_args[@]}" \
        -o "$dir/bench.csv" 2>&1 | { grep -v '^\[' || true; } | tail -n 5
    if [ ! -s "$dir/bench.csv" ]; then
        echo "bench_cluster.sh: $name: xchg-bench wrote no CSV" >&2
        exit 1
    fi
    if [ $plots -eq 1 ]; then
        scripts/plot.sh "$dir" "$dir/bench.csv" | tail -n 1
    else
        echo "(gnuplot is missing: no plots; the CSV is $dir/bench.csv)"
    fi
    {
        echo "## $name: $MPI, ${shape[*]}, nodes of $nodes ranks ($ranks ranks, $cores cores), links $link"
        sed 's/^node_layout: /measured: /' "$dir/ping.txt"
        if [ "$ranks" -gt "$cores" ] && [ "$MPI" = mpich ]; then
            echo "note: $ranks ranks on $cores cores: MPICH's native collectives busy-poll and take CPU from the other ranks; xchg's algorithms yield (XCHG_WAIT=yield). Where native is slow for small blocks, that is the CPU, not the network: compare xchg's algorithms with each other there."
        elif [ "$ranks" -gt "$cores" ]; then
            echo "note: $ranks ranks on $cores cores: Open MPI's native collectives yield while they wait (mpi_yield_when_idle 1, set by xchgrun), as xchg's algorithms do (XCHG_WAIT=yield)."
        fi
        if [ -s "$dir/summary.txt" ]; then
            cat "$dir/summary.txt"
        else
            echo "(no summary: plots were not drawn; CSV in $dir/bench.csv)"
        fi
        echo
    } >"$dir/summary.md"
    done_names+=("$name")
done
[ ${#done_names[@]} -gt 0 ] || { echo "bench_cluster.sh: BENCH_CLUSTER_ONLY='$only' names no cluster" >&2; exit 2; }

scripts/cluster down >/dev/null
{
    echo "# xchg-bench on emulated clusters ($(date '+%Y-%m-%d %H:%M'), $(hostname), $MPI, $cores cores)"
    echo "# times in microseconds per call (median); auto/nat above 1: auto is faster than native"
    [ "$smoke" = 1 ] && echo "# SMOKE RUN (BENCH_CLUSTER_SMOKE=1): a few calls per line, not a measurement"
    for name in "${done_names[@]}"; do cat "$out/$name/summary.md"; done
} >"$out/summary.txt"
echo "== bench-cluster: done in $(($(date +%s) - start)) s: $out/summary.txt, CSV and PNG in $out/*/"
