#!/usr/bin/env bash
# plot_hier.sh: one small picture of scripts/bench_hier.sh's results: for each cluster folder
# given (each with rep*.csv), the speed-up over native (native's median time / the algorithm's,
# each the median over the jobs of a line's median) of pairwise, radix, hier:k=1, hier and auto
# against the block size (and pairwise:k=1 where the run had it), one panel per cluster, 2 panels
# a row.
#
#   scripts/plot_hier.sh OUT.png DIR...
# Needs gnuplot and python3.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 OUT.png DIR..." >&2
    exit 2
fi
png=$1
shift
command -v gnuplot >/dev/null || { echo "plot_hier.sh: gnuplot is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cols="native pairwise radix hier:k=1 hier auto pairwise:k=1"
panels=()
for dir in "$@"; do
    ls "$dir"/rep*.csv >/dev/null 2>&1 || { echo "plot_hier.sh: no rep*.csv in $dir" >&2; exit 1; }
    name=$(basename "$dir")
    python3 - "$dir" "$cols" >"$work/$name.dat" <<'EOF'
import csv, glob, statistics, sys
d, cols = sys.argv[1], sys.argv[2].split()
t = {}
for f in glob.glob(d + "/rep*.csv"):
    for r in csv.DictReader(open(f)):
        t.setdefault((int(r["bytes"]), r["algorithm"]), []).append(float(r["median_us"]))
for b in sorted({b for b, _ in t}):
    nat = statistics.median(t[(b, "native")]) if (b, "native") in t else None
    vals = []
    for c in cols[1:]:
        ts = t.get((b, c))
        vals.append("%.4f" % (nat / statistics.median(ts)) if ts and nat else "NaN")
    print(b, " ".join(vals))
EOF
    panels+=("$name")
done
# the pairwise:k=1 line where the run had it (bench_hier.sh's BENCH_HIER_ALGOS)
has_k1() {
    awk '$7 != "NaN" { found = 1 } END { exit !found }' "$1" &&
        printf "%s" ", '' u 1:7 w lp lc 'red' dt 3 t 'pairwise:k=1'"
}
n=${#panels[@]}
rows=$(((n + 1) / 2))
{
    echo "set terminal pngcairo size 900,$((280 * rows)) font ',9'"
    echo "set output '$png'"
    echo "set multiplot layout $rows,2"
    echo "set logscale x 2; set format x '%.0b%B'; set grid"
    echo "set ylabel 'native time / time'; set xlabel 'block (bytes)'"
    echo "set key top left maxrows 3 samplen 2; set yrange [0:2.5]"
    for name in "${panels[@]}"; do
        echo "set title '$name'"
        echo "plot '$work/$name.dat' u 1:2 w lp t 'pairwise', '' u 1:3 w lp t 'radix', \
'' u 1:4 w lp lw 2 t 'hier:k=1', '' u 1:5 w lp t 'hier', '' u 1:6 w lp lc 'black' lw 2 t 'auto', \
1 w l lc 'grey' dt 2 t 'native'$(has_k1 "$work/$name.dat")"
    done
    echo "unset multiplot"
} >"$work/plot.gp"
gnuplot "$work/plot.gp"
echo "plot_hier.sh: $png"
