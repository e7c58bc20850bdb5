#!/usr/bin/env bash
# Plots and a summary from xchg-bench CSV files (columns mpi,ranks,collective,algorithm,params,
# bytes,iters,min_us,median_us,max_us).
#
# Usage: scripts/plot.sh OUTDIR FILE.csv...
#   OUTDIR/time_<collective>_<ranks>ranks.png   median time per call against block size, log-log,
#       one line per algorithm spec (native grey and dashed, auto black and thick), the band
#       around each line from the fastest to the slowest iteration left out for legibility
#   OUTDIR/summary.txt   per collective, rank count and block size: the median time of auto,
#       of native and of the fastest forced algorithm, and auto's speed-up over native
# Needs gnuplot (scripts/setup.sh mpich gnuplot-nox installs it).
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 OUTDIR FILE.csv..." >&2
    exit 2
fi
outdir=$1
shift
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot is not installed" >&2; exit 1; }
mkdir -p "$outdir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# all rows in one file, header once
awk -F, 'FNR == 1 && $1 == "mpi" { next } NF >= 10 { print }' "$@" >"$work/all.csv"
[ -s "$work/all.csv" ] || { echo "plot.sh: no data rows in $*" >&2; exit 1; }

# one picture per (collective, ranks)
awk -F, '{ print $3 "," $2 }' "$work/all.csv" | awk '!seen[$0]++' | while IFS=, read -r coll ranks; do
    data="$work/${coll}_${ranks}.csv"
    # one algorithm's rows together, by block size, so that each line is drawn unbroken
    awk -F, -v c="$coll" -v r="$ranks" '$3 == c && $2 == r { if (!($4 in order)) order[$4] = n++; print order[$4] "," $0 }' \
        "$work/all.csv" | sort -t, -s -k1,1n -k7,7n | cut -d, -f2- >"$data"
    mapfile -t algos < <(awk -F, '!seen[$4]++ { print $4 }' "$data")
    mpi=$(head -n 1 "$data" | cut -d, -f1)
    png="$outdir/time_${coll}_${ranks}ranks.png"
    plots=""
    i=0
    for a in "${algos[@]}"; do
        case "$a" in
        native) style="lw 2 dt 2 lc rgb '#555555' pt 4" ;;
        auto) style="lw 3 lc rgb 'black' pt 7" ;;
        *) style="lw 1.5 lc $((i + 1)) pt $((i % 10 + 1))"; i=$((i + 1)) ;;
        esac
        plots="$plots${plots:+, }'$data' using (strcol(4) eq '$a' ? \$6 : NaN):9 with linespoints $style title '$a'"
    done
    gnuplot <<EOF
set terminal pngcairo size 1000,650 font "sans,11" noenhanced
set output "$png"
set datafile separator ","
set title "MPI_${coll^}: median time per call, $ranks ranks ($mpi)"
set xlabel "block bytes (ki = 1024; alltoallv: mean block)"
set ylabel "microseconds per call"
set logscale x 2
set logscale y 10
set xtics 1,4
set format x "%.0b%B"
set grid
set key outside right top
plot $plots
EOF
    echo "plot.sh: wrote $png"
done

# summary: auto, native and the best forced algorithm per (collective, ranks, bytes)
awk -F, '
{
    key = $3 SUBSEP $2 SUBSEP $6
    if (!(key in seen)) { seen[key] = 1; order[n++] = key }
    if ($4 == "auto") { auto[key] = $9; autoalg[key] = $5 }
    else if ($4 == "native") native[key] = $9
    else if (!(key in best) || $9 + 0 < best[key] + 0) { best[key] = $9; bestalg[key] = $4 (($5 == "" || $5 == "fallback") ? "" : " [" $5 "]") }
}
END {
    printf "%-10s %5s %9s %12s %12s %12s %8s  %-26s %s\n", "collective", "ranks", "bytes", "auto_us", "native_us", "best_us", "auto/nat", "best forced", "auto chose"
    for (i = 0; i < n; i++) {
        split(order[i], k, SUBSEP)
        a = (order[i] in auto) ? auto[order[i]] : "-"
        v = (order[i] in native) ? native[order[i]] : "-"
        b = (order[i] in best) ? best[order[i]] : "-"
        ratio = (a != "-" && v != "-" && a > 0) ? sprintf("%.2fx", v / a) : "-"
        printf "%-10s %5s %9s %12s %12s %12s %8s  %-26s %s\n", k[1], k[2], k[3], a, v, b, ratio, (order[i] in bestalg) ? bestalg[order[i]] : "-", (order[i] in autoalg) ? autoalg[order[i]] : "-"
    }
}' "$work/all.csv" >"$outdir/summary.txt"
echo "plot.sh: wrote $outdir/summary.txt (auto/nat above 1 means auto is faster than native)"
