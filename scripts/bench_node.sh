#!/usr/bin/env bash
# bench_node.sh: Sanders and Traff's comparison (The hierarchical factor algorithm for all-to-all
# communication, Section 4: never slower than MPICH's native MPI_Alltoall, 10 to 20 % more
# bandwidth where the nodes' sizes differ) on the emulated cluster (scripts/cluster): the node
# algorithm with one leader per node (node:leaders=1:k=1: the 1-factor rounds between nodes, one
# message of a node at a time, each node's ranks' blocks gathered through its shared segment)
# against the MPI library's MPI_Alltoall (native) and pairwise exchange, blocks of 1 B to
# 256 KiB. Needs root (network namespaces); one cluster session at a time. Run it on a quiet
# machine: every figure of a loaded one is the load's as much as the algorithm's.
#
# Clusters (star, one switch; names of the folders under $BUILD/bench-node/):
#   3221-100mbit  nodes of 3, 2, 2 and 1 ranks, links of 100 Mbit/s
#   3221-1gbit    the same at 1 Gbit/s
#   41111-100mbit nodes of 4, 1, 1, 1 and 1 ranks, 100 Mbit/s
#   41111-1gbit   the same at 1 Gbit/s
# For each: node_layout's ping-pong between two nodes (ping.txt), then xchg-bench on the cluster
# (bench-COLL.csv): MPI_Alltoall with native, node:leaders=1:k=1 (a leader's steps one at a time:
# the paper's single port), node:leaders=1:k=8 (all of a leader's steps at once: k is cut to the
# nodes less one), pairwise:k=1 (one message at a time), pairwise (k from the model), node
# (leaders and k from the model), radix, hier and native again (native#2: how far two runs of
# the same thing differ at this load); MPI_Allgather and MPI_Alltoallv with every algorithm of
# theirs that runs across nodes (shm needs one node, torus a torus), node with k = 1, all at
# once and the model's - in --rounds alternating turns per block, so that load drifting over seconds hits all of
# them alike. Then table.md: per collective and block the median times in microseconds, each
# one's ratio to native, and for MPI_Alltoall node:leaders=1:k=1's bandwidth against native's and
# pairwise's, (t_other / t_node - 1) in percent: +15 % is the paper's "15 % higher bandwidth", a
# negative figure a loss. $BUILD/bench-node/table.md gathers the clusters' tables.
#
# xchg-bench carries xchg itself (linked with the library's objects) and forces each spec in
# the process (native: the MPI library's collective through the shim's native path, a few tens
# of nanoseconds); it runs without the preload (xchgrun --native). XCHG_WAIT=yield when the
# ranks exceed the cores.
#
# Environment:
#   MPI=openmpi|mpich   (default openmpi: MPICH's own collectives busy-poll when the ranks
#                       exceed the cores, and then native's time is the CPU's, not the links')
#   BUILD               the tools' build (default build/openmpi for Open MPI, build for MPICH)
#   BENCH_NODE_ONLY=REGEX       only the clusters whose name matches
#   BENCH_NODE_COLLS=LIST       collectives (default alltoall,allgather,alltoallv)
#   BENCH_NODE_SIZES=LIST       blocks (default 1,4,16,64,256,1K,4K,16K,64K,256K)
#   BENCH_NODE_ROUNDS=R         alternating turns per block (default 5)
#   BENCH_NODE_TIME_MS=MS       time budget per spec and turn (default 200)
#   BENCH_NODE_WARMUP=N         untimed calls before a spec's first turn (default 5: a 256 KiB
#                               call lasts most of a second at 100 Mbit/s)
#   BENCH_NODE_MIN_ITERS=N      timed calls per turn at least (default 3)
#   BENCH_NODE_PLACE=interleave ranks dealt over the nodes round-robin (xchgrun's
#                               XCHG_CLUSTER_PLACE; under MPICH only layouts its launcher deals)
#   BENCH_NODE_SMOKE=1          a few minutes: the first cluster, blocks 1, 1K and 64K, 2 turns
# The cluster is torn down afterwards (also when interrupted).
set -euo pipefail
cd "$(dirname "$0")/.."
MPI=${MPI:-openmpi}
case $MPI in
openmpi) BUILD=${BUILD:-build/openmpi} ;;
mpich) BUILD=${BUILD:-build} ;;
*)
    echo "bench_node.sh: MPI must be mpich or openmpi, not '$MPI'" >&2
    exit 2
    ;;
esac
sizes=${BENCH_NODE_SIZES:-1,4,16,64,256,1K,4K,16K,64K,256K}
rounds=${BENCH_NODE_ROUNDS:-5}
time_ms=${BENCH_NODE_TIME_MS:-200}
warmup=${BENCH_NODE_WARMUP:-5}
min_iters=${BENCH_NODE_MIN_ITERS:-3}
only=${BENCH_NODE_ONLY:-}
place=${BENCH_NODE_PLACE:-}
# specs COLL: what runs for one collective (native first and last; see the top)
specs() {
    case $1 in
    alltoall) echo native,node:leaders=1:k=1,node:leaders=1:k=8,pairwise:k=1,pairwise,node,radix,hier,native ;;
    allgather) echo native,node:k=1,node:k=8,node,ring,circulant,native ;;
    alltoallv) echo native,node:leaders=1:k=1,node:leaders=1:k=8,node,pairwise,twophase,hier,native ;;
    esac
}
colls=${BENCH_NODE_COLLS:-alltoall,allgather,alltoallv}
for coll in ${colls//,/ }; do
    [ -n "$(specs "$coll")" ] || { echo "bench_node.sh: BENCH_NODE_COLLS: '$coll' is not alltoall, allgather or alltoallv" >&2; exit 2; }
done
out=$BUILD/bench-node
if [ "${BENCH_NODE_SMOKE:-0}" = 1 ]; then
    sizes=1,1K,64K
    rounds=2
    time_ms=50
    [ -n "$only" ] || only='^3221-100mbit$'
fi
for v in rounds time_ms min_iters; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench_node.sh: $v must be a positive number" >&2; exit 2; }
done
[[ $warmup =~ ^[0-9]+$ ]] || { echo "bench_node.sh: BENCH_NODE_WARMUP must be a number, not '$warmup'" >&2; exit 2; }
case $place in "" | interleave) ;; *)
    echo "bench_node.sh: BENCH_NODE_PLACE=$place: expected interleave or nothing" >&2
    exit 2
    ;;
esac

why=$(scripts/cluster check) || { echo "bench_node.sh: ${why#cluster: }" >&2; exit 1; }
for f in xchg-bench tests/node_layout; do
    [ -x "$BUILD/$f" ] || { echo "bench_node.sh: $BUILD/$f is missing (make MPI=$MPI all)" >&2; exit 1; }
done

configs=(
    "3221-100mbit 3,2,2,1 100mbit"
    "3221-1gbit 3,2,2,1 1gbit"
    "41111-100mbit 4,1,1,1,1 100mbit"
    "41111-1gbit 4,1,1,1,1 1gbit"
)

mkdir -p /run/lock
exec {lock_fd}>>/run/lock/xchg-cluster.session
if ! flock -n "$lock_fd"; then
    echo "bench_node.sh: waiting for another cluster session (/run/lock/xchg-cluster.session)"
    flock "$lock_fd"
fi
export XCHG_CLUSTER_HELD=1
[ -n "$place" ] && export XCHG_CLUSTER_PLACE=$place
trap 'scripts/cluster down >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# on NODES LINK -- PROGRAM ARGS: PROGRAM on that cluster, without the preload
on() {
    local nodes=$1 link=$2
    shift 3
    scripts/xchgrun --mpi="$MPI" --nodes "$nodes" --link "$link" --keep --native "$@" </dev/null
}

# table CSV COLL: the markdown table of one cluster's bench-COLL.csv: per block the
# median microseconds of every spec, in the order xchg-bench ran them, and each one's ratio to
# native (below 1: faster); for MPI_Alltoall also the paper's comparison (see the top)
table() {
    awk -F, -v coll="$2" '
        NR > 1 && $3 == coll {
            t[$6, $4] = $9
            if (!($6 in seen)) { seen[$6] = 1; order[n++] = $6 }
            if (!($4 in known)) { known[$4] = 1; spec[m++] = $4 }
        }
        function pct(other, mine) { return mine > 0 && other > 0 ? sprintf("%+.0f %%", (other / mine - 1) * 100) : "" }
        function us(x) { return x == "" ? "" : sprintf("%.0f", x) }
        function ratio(x, nat) { return x > 0 && nat > 0 ? sprintf("%.2f", x / nat) : "" }
        END {
            head = "| block (B) |"; rule = "|---|"
            for (j = 0; j < m; j++) { head = head " " spec[j] " |"; rule = rule "---|" }
            for (j = 0; j < m; j++) if (spec[j] != "native") { head = head " " spec[j] " / native |"; rule = rule "---|" }
            if (coll == "alltoall") {
                head = head " leaders=1,k=1 vs native | leaders=1,k=1 vs pairwise:k=1 |"; rule = rule "---|---|"
            }
            print head; print rule
            for (i = 0; i < n; i++) {
                b = order[i]; nat = t[b, "native"]; line = "| " b " |"
                for (j = 0; j < m; j++) line = line " " us(t[b, spec[j]]) " |"
                for (j = 0; j < m; j++) if (spec[j] != "native") line = line " " ratio(t[b, spec[j]], nat) " |"
                if (coll == "alltoall") {
                    one = t[b, "node:leaders=1:k=1"]
                    line = line " " pct(nat, one) " | " pct(t[b, "pairwise:k=1"], one) " |"
                }
                print line
            }
        }' "$1"
}

start=$(date +%s)
mkdir -p "$out"
done_names=()
for config in "${configs[@]}"; do
    read -r name nodes link <<<"$config"
    [ -n "$only" ] && ! [[ $name =~ $only ]] && continue
    dir=$out/$name${place:+-$place}
    mkdir -p "$dir"
    rm -f "$dir"/bench*.csv "$dir/table.md"
    echo "== bench-node: $name ($MPI; nodes $nodes, links $link${place:+, $place})"
    scripts/cluster up --nodes "$nodes" --link "$link" --shape star
    ranks=$(awk -F'=' '$1 == "XC_RANKS" { print $2 }' /run/xchg-cluster/state)
    if [ "$ranks" -gt "$(nproc)" ]; then export XCHG_WAIT=yield; else unset XCHG_WAIT; fi
    on "$nodes" "$link" -- "$BUILD/tests/node_layout" --pingpong 4194304 --reps 2 2>&1 |
        { grep -E '^node_layout: (nodes=|pingpong)|finalize guard' || true; } | tee "$dir/ping.txt"
    for coll in ${colls//,/ }; do
        on "$nodes" "$link" -- "$BUILD/xchg-bench" --coll "$coll" --algos "$(specs "$coll")" \
            --sizes "$sizes" --rounds "$rounds" --time-ms "$time_ms" --warmup "$warmup" \
            --min-iters "$min_iters" -o "$dir/bench-$coll.csv" 2>&1 |
            { grep -v '^\[' || true; } | tail -n 3
        [ -s "$dir/bench-$coll.csv" ] || { echo "bench_node.sh: $name: xchg-bench wrote no CSV for $coll" >&2; exit 1; }
    done
    {
        echo "## $name: $MPI, nodes of $nodes ranks ($ranks ranks, $(nproc) cores), links $link${place:+, ranks dealt round-robin}"
        echo
        sed 's/^node_layout: /    measured: /' "$dir/ping.txt"
        echo
        for coll in ${colls//,/ }; do
            echo "median microseconds per MPI_${coll^} (the slowest rank's), $rounds alternating turns"
            echo
            table "$dir/bench-$coll.csv" "$coll"
            echo
        done
    } >"$dir/table.md"
    cat "$dir/table.md"
    done_names+=("$dir")
done
[ ${#done_names[@]} -gt 0 ] || { echo "bench_node.sh: BENCH_NODE_ONLY='$only' names no cluster" >&2; exit 2; }
scripts/cluster down >/dev/null
{
    echo "# node:leaders=1:k=1 against native and pairwise on emulated clusters ($(date '+%Y-%m-%d %H:%M'), $(hostname), $MPI, load average $(cut -d' ' -f1-3 /proc/loadavg))"
    [ "${BENCH_NODE_SMOKE:-0}" = 1 ] && echo "# SMOKE RUN (BENCH_NODE_SMOKE=1): a few calls per line, not a measurement"
    echo
    for dir in "${done_names[@]}"; do cat "$dir/table.md"; done
} >"$out/table.md"
echo "== bench-node: done in $(($(date +%s) - start)) s: $out/table.md"
