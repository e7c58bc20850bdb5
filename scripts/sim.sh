#!/usr/bin/env bash
# sim.sh: `make sim`, the simulator at scale (build/xchg-sim, docs/sim.md).
#
#  1. the largest runs, p = 4096, each with its wall time and peak memory (the simulator's own
#     getrusage figure and /usr/bin/time's) -> $OUT/largest.txt;
#  2. the sweep: every registered algorithm (model's parameters, and k=1 where k is a key) at
#     p = 2, 4, ..., 1024 with blocks of 8, 256 and 4096 bytes on the flat network, on nodes
#     of 8 ranks and on the most square torus, runs whose buffers would pass 2 GiB left out
#     -> $OUT/sweep.csv;
#  3. plots: $OUT/sim_<net>_<bytes>B.png, simulated time against p, one line per algorithm,
#     one panel per collective (gnuplot, as scripts/plot.sh; no gnuplot: no plots);
#  4. the cost models against the simulator -> $OUT/model_vs_sim.csv, and as Markdown (model
#     time over simulated time per row and column) $OUT/model_vs_sim.md (docs/sim.md's table).
# Every run checks every byte; a failed run fails the script.
#
# Constants: the library's defaults (beta 3 us, tau 0.2 ns/byte, port_share 1), rho 0 (the
# simulator times messages, not the algorithms' copies); two levels: 10 beta and 10 tau between
# nodes, inject 1. SIM_SMOKE=1: a one-minute version (p <= 64, no p = 4096).
set -euo pipefail
BUILD=${BUILD:-build}
sim="$BUILD/xchg-sim"
OUT="$BUILD/sim"
[ -x "$sim" ] || { echo "sim.sh: $sim is not built (make $sim)" >&2; exit 1; }
mkdir -p "$OUT"
smoke=${SIM_SMOKE:-0}
status=0

# ---- 1. the largest runs ----
largest() { # ARGS...: one run, its figures
    local t
    t=$(mktemp)
    if /usr/bin/time -f "process: %e s wall, %M KiB peak resident" -o "$t" "$sim" "$@"; then :; else
        echo "FAILED: xchg-sim $*"
        status=1
    fi
    cat "$t"
    rm -f "$t"
    echo
}
if [ "$smoke" = 0 ]; then
    {
        echo "# make sim: the largest runs ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
        largest alltoall radix p=4096 bytes=8
        largest alltoall radix:r=2,k=1 p=4096 bytes=8
        largest allgather circulant p=4096 bytes=8
        largest alltoall hier p=4096 bytes=8 --net 'nodes=16*256' --beta-inter 3e-5 --tau-inter 2e-9 --inject 1
        largest alltoall torus p=1024 bytes=8 --net torus=32x32 --port-share 0
    } | tee "$OUT/largest.txt"
fi

# ---- 2. the sweep ----
if [ "$smoke" = 0 ]; then
    plist=2,4,8,16,32,64,128,256,512,1024
else
    plist=2,4,8,16,32,64
fi
echo "sweep: p = $plist, blocks 8, 256, 4096 bytes -> $OUT/sweep.csv"
if ! "$sim" --sweep --sweep-p "$plist" --sweep-bytes 8,256,4096 --mem-limit 2 >"$OUT/sweep.csv"; then
    echo "sim.sh: a sweep run failed (see above)" >&2
    status=1
fi

# ---- 3. plots ----
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "(gnuplot is missing: no plots; scripts/setup.sh mpich gnuplot-nox installs it)"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    # net kind (flat, nodes, torus) as a column of its own
    awk -F, 'NR > 1 { split($7, n, "="); print n[1] "," $0 }' "$OUT/sweep.csv" >"$work/all.csv"
    for net in flat nodes torus; do
        for bytes in 8 256 4096; do
            png="$OUT/sim_${net}_${bytes}B.png"
            cmds=""
            for coll in alltoall allgather alltoallv; do
                awk -F, -v n="$net" -v b="$bytes" -v c="$coll" \
                    '$1 == n && $7 == b && $2 == c' "$work/all.csv" >"$work/$coll.csv"
                mapfile -t specs < <(cut -d, -f3 "$work/$coll.csv" | awk '!seen[$0]++')
                plot=""
                for s in "${specs[@]}"; do
                    awk -F, -v s="$s" '$3 == s { print $6, $10 }' "$work/$coll.csv" | sort -n \
                        >"$work/$coll.$s.dat"
                    plot="$plot${plot:+, }'$work/$coll.$s.dat' using 1:2 with linespoints title '$s'"
                done
                if [ -n "$plot" ]; then
                    cmds="$cmds
set title '$coll'
plot $plot"
                else
                    cmds="$cmds
set title '$coll: no runs'
unset key
plot [1:2] NaN notitle
set key"
                fi
            done
            gnuplot <<EOF
set terminal png size 1500,500
set output '$png'
set multiplot layout 1,3 title 'xchg-sim, $net network, $bytes-byte blocks: simulated time'
set logscale xy
set xlabel 'ranks p'
set ylabel 'simulated seconds'
set key top left font ',8'
set grid
$cmds
unset multiplot
EOF
            echo "plot: $png"
        done
    done
fi

# ---- 4. the cost models against the simulator ----
{
    first=1
    table() { # ARGS...: one run's CSV line
        local line
        line=$("$sim" "$@" --csv) || { echo "FAILED: xchg-sim $*" >&2; status=1; return; }
        if [ $first = 1 ]; then head -n 1 <<<"$line"; first=0; fi
        tail -n 1 <<<"$line"
    }
    for p in 16 64 257 1024; do
        [ "$smoke" = 1 ] && [ "$p" -gt 64 ] && continue
        for b in 8 1024; do
            for spec in "alltoall pairwise" "alltoall pairwise:k=1" "alltoall radix" \
                "alltoall radix:r=2,k=1" "alltoall hier:k=1" "allgather ring" \
                "allgather circulant" "allgather circulant:k=1" "alltoallv pairwise" \
                "alltoallv pairwise --no-carry" "alltoallv pairwise:k=1 --no-carry" \
                "alltoallv pairwise:k=1" "alltoallv pairwise:k=1 --no-carry --workload hrel:h=4"; do
                # shellcheck disable=SC2086
                table $spec p=$p bytes=$b
            done
            [ "$p" -le 257 ] && table alltoallv twophase p=$p bytes=$b &&
                table alltoallv twophase p=$p bytes=$b --workload hrel:h=4
            case $p in
            16) shape=4x4 nodes=3,5,8 ;;
            64) shape=8x8 nodes='8*8' ;;
            257) shape=257 nodes='16*16,1' ;;
            1024) shape=32x32 nodes='16*64' ;;
            esac
            two="--beta-inter 3e-5 --tau-inter 2e-9 --inject 1"
            # shellcheck disable=SC2086
            table alltoall hier p=$p bytes=$b --net "nodes=$nodes" $two
            # shellcheck disable=SC2086
            table alltoall hier:k=1 p=$p bytes=$b --net "nodes=$nodes" $two
            # shellcheck disable=SC2086
            table alltoall pairwise:k=1 p=$p bytes=$b --net "nodes=$nodes" $two
            [ "$p" -le 257 ] && table alltoallv hier:k=1 p=$p bytes=$b --net "nodes=$nodes" $two --no-carry --workload hrel:h=4
            table alltoall torus p=$p bytes=$b --net "torus=$shape" --port-share 0
            table alltoall pairwise:k=1 p=$p bytes=$b --net "torus=$shape" --port-share 0
        done
    done
} >"$OUT/model_vs_sim.csv"

# ---- 5. the same as a Markdown table (docs/sim.md): model time / simulated time ----
awk -F, '
NR == 1 { next }
{
    kind = $7; sub(/=.*/, "", kind)
    row = $1 " `" $2 "` | " kind " | " $8
    col = $5 "|" $6
    if (!(row in seen)) { seen[row] = 1; rows[nr++] = row }
    if (!(col in cseen)) { cseen[col] = 1; cols[nc++] = col }
    cell[row, col] = sprintf("%.2f", $11)
}
END {
    printf "| collective, algorithm | network | workload |"
    for (c = 0; c < nc; c++) { split(cols[c], pc, "|"); printf " p=%s, %s B |", pc[1], pc[2] }
    printf "\n|---|---|---|"
    for (c = 0; c < nc; c++) printf "---|"
    printf "\n"
    for (r = 0; r < nr; r++) {
        printf "| %s |", rows[r]
        for (c = 0; c < nc; c++) printf " %s |", ((rows[r], cols[c]) in cell) ? cell[rows[r], cols[c]] : ""
        printf "\n"
    }
}' "$OUT/model_vs_sim.csv" >"$OUT/model_vs_sim.md"
echo "model against simulator: $OUT/model_vs_sim.csv, $OUT/model_vs_sim.md"
exit $status
