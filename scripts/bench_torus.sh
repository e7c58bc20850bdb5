#!/usr/bin/env bash
# bench_torus.sh: the torus algorithm against pairwise, radix and native for
# MPI_Alltoall on the emulated cluster's ring and torus (scripts/cluster), with the bytes every
# link carried next to the paper's transmission bound. Needs root (network namespaces).
#
# Clusters (one rank per node, every link limited to $BENCH_TORUS_LINK each way):
#   ring8      8 nodes in a ring: torus:dims=8 is AR; bound ceil(p^2/8) m = 8 m per link
#   torus4x4   16 nodes in a 4x4 torus: torus:dims=4x4 is AT2; bound r c^2/8 m = 8 m per link
# (Liu et al., "Optimal all-to-all personalized communication in all-port tori", 2006, Lemmas 2 and
# 4: the busiest directed link carries at least that much in any algorithm; m is the block.) The
# cluster routes messages between non-neighbours through the nodes in between (dimension order,
# shorter way round, ties towards increasing index), so every algorithm's traffic shares the links
# as on a torus.
#
# For each cluster: it is brought up; node_layout measures the ping-pong rate between the first
# and the last node (ping.txt), natively; then, block by block (1 KiB to 256 KiB by default,
# powers of two; the torus4x4 up to $BENCH_TORUS_TORUS_MAX), every algorithm in turn runs
# xchg-bench --coll alltoall --algos ALGO --sizes BLOCK with WARMUP untimed and ITERS timed calls
# (one launch each, so the rows of a block are measured side by side, minutes apart at most).
# Around each launch the tx_bytes counter of every link end (the veth xlJ in node I is the
# direction I -> J) is read in every node's namespace (/sys/class/net/xl*/statistics); the
# difference divided by the launch's calls (WARMUP + ITERS) is the link's bytes per call.
# Those bytes include what the launch adds besides the calls (TCP/IP and Ethernet headers,
# about 5 % at full frames, TCP acknowledgements, MPI's connection set-up and headers,
# xchg-bench's barrier and reduction per iteration), so small blocks show more than the bound.
#
# Output under $BENCH_TORUS_OUT (default build/bench-torus):
#   CLUSTER/ping.txt     the measured ping-pong rate
#   CLUSTER/links.txt    the bytes per call of every directed link, per algorithm and block
#   bench.csv            cluster,mpi,ranks,link,algorithm,params,block_bytes,iters,calls,
#                        min_us,median_us,max_us,link_max_bytes,link_mean_bytes,bound_bytes,
#                        max_over_bound,mean_over_bound,bound_time_us
#                        (link_* per call; bound_time_us = bound_bytes at the link rate)
#   summary.md           per cluster: the median time of each algorithm per block and which
#                        wins, then the bytes per link (max, mean) against the bound
#
# Environment:
#   MPI=openmpi|mpich (default openmpi: its native collectives yield while they wait, with
#   mpi_yield_when_idle 1 from xchgrun, as xchg's algorithms do with XCHG_WAIT=yield)
#   BUILD (default build/openmpi for Open MPI, build for MPICH: xchg-bench, tests/node_layout)
#   BENCH_TORUS_LINK=10mbit   BENCH_TORUS_ONLY=REGEX (ring8, torus4x4)
#   BENCH_TORUS_SIZES=1K,2K,4K,8K,16K,32K,64K,128K,256K   BENCH_TORUS_TORUS_MAX=256K
#   BENCH_TORUS_ALGOS=torus,pairwise,radix,native   BENCH_TORUS_WARMUP=1   BENCH_TORUS_ITERS=3
#   BENCH_TORUS_LOCK=/tmp/xchg-cluster.lock: held (flock) from each cluster's `up` to its
#   `down`, so that one cluster exists at a time among those who use the same lock
# Each cluster is torn down after its runs (also when interrupted).
set -euo pipefail
cd "$(dirname "$0")/.."
MPI=${MPI:-openmpi}
case $MPI in
openmpi) BUILD=${BUILD:-build/openmpi} ;;
mpich) BUILD=${BUILD:-build} ;;
*) echo "bench_torus.sh: MPI must be openmpi or mpich, not '$MPI'" >&2; exit 2 ;;
esac
link=${BENCH_TORUS_LINK:-10mbit}
sizes=${BENCH_TORUS_SIZES:-1K,2K,4K,8K,16K,32K,64K,128K,256K}
torus_max=${BENCH_TORUS_TORUS_MAX:-256K}
algos=${BENCH_TORUS_ALGOS:-torus,pairwise,radix,native}
only=${BENCH_TORUS_ONLY:-}
warmup=${BENCH_TORUS_WARMUP:-1}
iters=${BENCH_TORUS_ITERS:-3}
lock=${BENCH_TORUS_LOCK:-/tmp/xchg-cluster.lock}
out=${BENCH_TORUS_OUT:-build/bench-torus}
cores=$(nproc)

die() {
    echo "bench_torus.sh: $*" >&2
    exit 2
}

# "256K" -> 262144 (K, M: powers of 1024)
to_bytes() {
    case $1 in
    *[kK]) echo $((${1%?} * 1024)) ;;
    *[mM]) echo $((${1%?} * 1048576)) ;;
    *) echo "$1" ;;
    esac
}
# a tc rate -> bytes per second (kbit, mbit, gbit: powers of 1000 bits)
rate_bytes() {
    case $1 in
    *kbit) echo $((${1%kbit} * 1000 / 8)) ;;
    *mbit) echo $((${1%mbit} * 1000000 / 8)) ;;
    *gbit) echo $((${1%gbit} * 1000000000 / 8)) ;;
    *) return 1 ;;
    esac
}

[[ $warmup =~ ^[0-9]+$ ]] || die "BENCH_TORUS_WARMUP='$warmup' is not a number"
[[ $iters =~ ^[1-9][0-9]*$ ]] || die "BENCH_TORUS_ITERS='$iters' is not a positive number"
rate=$(rate_bytes "$link") || die "BENCH_TORUS_LINK='$link' is not a rate such as 10mbit"
IFS=, read -r -a size_list <<<"$sizes"
for s in "${size_list[@]}"; do
    [[ $s =~ ^[1-9][0-9]*[kKmM]?$ ]] || die "BENCH_TORUS_SIZES: '$s' is not a size such as 64K"
done
[[ $torus_max =~ ^[1-9][0-9]*[kKmM]?$ ]] || die "BENCH_TORUS_TORUS_MAX='$torus_max' is not a size"
IFS=, read -r -a algo_list <<<"$algos"
why=$(scripts/cluster check) || die "${why#cluster: }"
for f in xchg-bench tests/node_layout; do
    [ -x "$BUILD/$f" ] || die "$BUILD/$f is missing (make MPI=$MPI all)"
done
calls=$((warmup > 1 ? warmup + iters : 1 + iters)) # xchg-bench makes at least one warm-up call

# name  nodes  shape...  ranks  bound in blocks per link  largest block
configs=(
    "ring8 8 ring 8 $(((64 + 7) / 8)) 0"
    "torus4x4 16 torus 4x4 $((4 * 16 / 8)) $(to_bytes "$torus_max")"
)

# Every link end's tx_bytes: "xcnI xlJ BYTES" lines.
link_bytes() { # NNODES
    local i
    for ((i = 0; i < $1; i++)); do
        # shellcheck disable=SC2016 # expanded by the node's shell
        ip netns exec "xcn$i" sh -c 'for d in /sys/class/net/xl*; do
            printf "xcn%s %s %s\n" "$1" "${d##*/}" "$(cat "$d/statistics/tx_bytes")"; done' sh "$i"
    done
}

held=0
cleanup() {
    if [ $held = 1 ]; then
        scripts/cluster down >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$out"
csv=$out/bench.csv
echo "cluster,mpi,ranks,link,algorithm,params,block_bytes,iters,calls,min_us,median_us,max_us,link_max_bytes,link_mean_bytes,bound_bytes,max_over_bound,mean_over_bound,bound_time_us" >"$csv"
start=$(date +%s)
for config in "${configs[@]}"; do
    read -r name nnodes shape dims bound_blocks largest <<<"$config"
    [ -n "$only" ] && ! [[ $name =~ $only ]] && continue
    dir=$out/$name
    mkdir -p "$dir"
    : >"$dir/links.txt"

    # the cluster, from up to down under the lock (and one cluster session at a time)
    exec {lock_fd}>>"$lock"
    echo "== bench-torus: $name ($MPI, $shape $dims, $nnodes nodes of 1 rank, links $link): waiting for $lock"
    flock "$lock_fd"
    exec {session_fd}>>/run/lock/xchg-cluster.session
    flock "$session_fd"
    export XCHG_CLUSTER_HELD=1
    held=1
    echo "-- $(date -u +%T): cluster up"
    scripts/cluster up --nodes 1 --link "$link" --shape "$shape" "$dims"
    if [ "$nnodes" -gt "$cores" ]; then export XCHG_WAIT=yield; else unset XCHG_WAIT; fi
    unset XCHG_TUNING XCHG_ALLTOALL XCHG_TORUS

    # the link as MPI sees it
    scripts/xchgrun --mpi="$MPI" --nodes 1 --link "$link" --shape "$shape" "$dims" --keep \
        --native "$BUILD/tests/node_layout" --pingpong 4194304 --reps 2 </dev/null 2>&1 |
        { grep -E '^node_layout: (nodes=|pingpong)' || true; } | tee "$dir/ping.txt"

    for s in "${size_list[@]}"; do
        block=$(to_bytes "$s")
        [ "$largest" -gt 0 ] && [ "$block" -gt "$largest" ] && continue
        for algo in "${algo_list[@]}"; do
            spec=$algo
            [ "$algo" = torus ] && spec="torus:dims=$dims"
            before=$(link_bytes "$nnodes")
            line=$(scripts/xchgrun --mpi="$MPI" --nodes 1 --link "$link" --shape "$shape" "$dims" \
                --keep --native "$BUILD/xchg-bench" --coll alltoall --algos "$spec" --sizes "$block" \
                --warmup "$warmup" --min-iters "$iters" --max-iters "$iters" --time-ms 1 \
                </dev/null 2>"$dir/stderr.txt" | grep -E "^[^,]+,$nnodes,alltoall," | tail -n 1) || true
            after=$(link_bytes "$nnodes")
            if [ -z "$line" ]; then
                echo "bench_torus.sh: $name $algo $block: no result (stderr: $dir/stderr.txt)" >&2
                tail -n 5 "$dir/stderr.txt" >&2
                continue
            fi
            # per directed link: bytes per call; then max and mean
            stats=$(paste -d' ' <(echo "$before") <(echo "$after") | awk -v calls="$calls" \
                -v label="$algo $block" -v file="$dir/links.txt" '
                { d = ($6 - $3) / calls; printf "%s %s->xcn%s %.0f\n", label, $1, substr($2, 3), d >> file
                  if (d > max) max = d; sum += d; n++ }
                END { printf "%.0f %.0f", max, sum / n }')
            read -r lmax lmean <<<"$stats"
            IFS=, read -r mpi_name ranks _coll _alg params _bytes it tmin tmed tmaxv <<<"$line"
            bound=$((bound_blocks * block))
            awk -v c="$name" -v m="$mpi_name" -v r="$ranks" -v l="$link" -v a="$algo" \
                -v p="$params" -v b="$block" -v it="$it" -v calls="$calls" -v t0="$tmin" \
                -v t1="$tmed" -v t2="$tmaxv" -v lmax="$lmax" -v lmean="$lmean" -v bound="$bound" \
                -v rate="$rate" 'BEGIN {
                printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.3f,%.3f,%.0f\n", c, m, r, l, a,
                    p, b, it, calls, t0, t1, t2, lmax, lmean, bound, lmax / bound, lmean / bound,
                    bound / rate * 1e6 }' >>"$csv"
            printf '%-9s %-9s %7s B: median %10.0f us, link max %.2f mean %.2f x bound (%s)\n' \
                "$name" "$algo" "$block" "$tmed" "$(echo "$lmax $bound" | awk '{ print $1 / $2 }')" \
                "$(echo "$lmean $bound" | awk '{ print $1 / $2 }')" "$params"
        done
    done

    echo "-- $(date -u +%T): cluster down"
    scripts/cluster down >/dev/null
    held=0
    unset XCHG_CLUSTER_HELD
    flock -u "$session_fd"
    exec {session_fd}>&-
    flock -u "$lock_fd"
    exec {lock_fd}>&-
done

# ---- the Markdown summary ----
{
    echo "# Torus against pairwise, radix and native on the emulated ring and torus"
    echo
    echo "Measured by scripts/bench_torus.sh on $(date -u +%F) ($MPI, $cores cores, links $link"
    echo "each way, one rank per node, $warmup warm-up and $iters timed calls per row, median;"
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - start)) s in all)."
    for config in "${configs[@]}"; do
        read -r name nnodes shape dims bound_blocks largest <<<"$config"
        grep -q "^$name," "$csv" || continue
        echo
        echo "## $name: $shape $dims, $nnodes nodes"
        echo
        sed 's/^node_layout: /measured: /' "$out/$name/ping.txt" | sed 's/^/    /'
        echo
        echo "Median time of one call (ms); bound = the paper's transmission bound at the link rate"
        echo "($bound_blocks blocks over the busiest link, headers not counted):"
        echo
        awk -F, -v c="$name" -v list="$algos" '
            BEGIN { n = split(list, a, ",") }
            $1 == c { t[$7, $5] = $11 / 1000; bt[$7] = $18 / 1000; if (!($7 in seen)) { seen[$7] = 1; order[++nb] = $7 } }
            END {
                printf "| block |"; for (i = 1; i <= n; i++) printf " %s |", a[i]; printf " bound | fastest | torus / fastest other |\n"
                printf "|---|"; for (i = 1; i <= n; i++) printf "---|"; printf "---|---|---|\n"
                for (j = 1; j <= nb; j++) {
                    b = order[j]; best = ""; other = ""
                    printf "| %s |", (b >= 1024 ? b / 1024 " KiB" : b " B")
                    for (i = 1; i <= n; i++) {
                        v = t[b, a[i]]
                        printf " %s |", (v == "" ? "-" : sprintf("%.2f", v))
                        if (v != "" && (best == "" || v < t[b, best])) best = a[i]
                        if (v != "" && a[i] != "torus" && (other == "" || v < t[b, other])) other = a[i]
                    }
                    ratio = (t[b, "torus"] != "" && other != "") ? sprintf("%.2f (%s)", t[b, "torus"] / t[b, other], other) : "-"
                    printf " %.2f | %s | %s |\n", bt[b], best, ratio
                }
            }' "$csv"
        echo
        echo "Bytes per call on the directed links, as a multiple of the bound ($bound_blocks m):"
        echo "max over the links / mean over the links (headers and the launch's other traffic included):"
        echo
        awk -F, -v c="$name" -v list="$algos" '
            BEGIN { n = split(list, a, ",") }
            $1 == c { x[$7, $5] = sprintf("%.2f / %.2f", $16, $17); if (!($7 in seen)) { seen[$7] = 1; order[++nb] = $7 } }
            END {
                printf "| block |"; for (i = 1; i <= n; i++) printf " %s |", a[i]; printf "\n"
                printf "|---|"; for (i = 1; i <= n; i++) printf "---|"; printf "\n"
                for (j = 1; j <= nb; j++) {
                    b = order[j]
                    printf "| %s |", (b >= 1024 ? b / 1024 " KiB" : b " B")
                    for (i = 1; i <= n; i++) printf " %s |", (x[b, a[i]] == "" ? "-" : x[b, a[i]])
                    printf "\n"
                }
            }' "$csv"
    done
} >"$out/summary.md"
echo "bench_torus.sh: $csv, $out/summary.md"
