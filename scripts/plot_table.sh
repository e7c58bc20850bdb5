#!/usr/bin/env bash
# Draw a tuning table (docs/tuning-table.md describes the format) as a picture: for each collective
# a panel whose cells are communicator sizes (rows) by block-size buckets (columns), coloured
# by the algorithm the table chooses there and labelled with its parameters. Cells no rule
# covers are white (the cost models decide those at run time).
#
# Usage: scripts/plot_table.sh TABLE OUT.png [PMIN-PMAX] [MAX-BYTES]
#   PMIN-PMAX  communicator sizes drawn (default: from the table's rules, 2 at least)
#   MAX-BYTES  the last bucket drawn (default 4194304); buckets are 0 and powers of two
# Needs gnuplot (scripts/setup.sh mpich gnuplot-nox installs it).
# shellcheck disable=SC2154 # pmin, pmax, ncols, xtics and machine come from the generated meta.sh
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 TABLE OUT.png [PMIN-PMAX] [MAX-BYTES]" >&2
    exit 2
fi
table=$1
out=$2
prange=${3:-}
max_bytes=${4:-4194304}
command -v gnuplot >/dev/null || { echo "plot_table.sh: gnuplot is not installed" >&2; exit 1; }
[ -r "$table" ] || { echo "plot_table.sh: cannot read $table" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The grid, by first-match lookup exactly as xchg_table_lookup does it:
#   cells.dat   collective-index column row colour-index label   (one line per cell)
#   algos.txt   collective-index colour-index name                (legends)
#   meta.sh     shell variables: pmin pmax ncols xtics title
awk -v prange="$prange" -v max_bytes="$max_bytes" -v work="$work" '
function num(s,    n, u) {
    u = 1
    if (s ~ /[Kk]$/) u = 1024; else if (s ~ /[Mm]$/) u = 1048576; else if (s ~ /[Gg]$/) u = 1073741824
    if (u > 1) s = substr(s, 1, length(s) - 1)
    return s * u
}
# range text into lo[0], hi[0]; inf stands for "*"
function range(s, lo, hi,    parts) {
    if (s == "*") { lo[0] = -1; hi[0] = inf; return }
    if (split(s, parts, "-") == 2) {
        lo[0] = num(parts[1]); hi[0] = (parts[2] == "*") ? inf : num(parts[2])
    } else { lo[0] = num(s); hi[0] = lo[0] }
}
function human(b) {
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) "M"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) "K"
    return b ""
}
BEGIN { inf = 1e300; nr = 0; coll["alltoall"] = 0; coll["allgather"] = 1; coll["alltoallv"] = 2
        pmax_seen = 2; machine = "" }
{ sub(/#.*/, "") }
NF == 0 { next }
$1 == "xchg-tuning" { next }
$1 == "machine" { machine = $2 " " $3 " " $4 " " $5; next }
NF == 4 && ($1 in coll) {
    range($2, lo, hi); plo[nr] = lo[0]; phi[nr] = hi[0]
    range($3, lo, hi); blo[nr] = lo[0]; bhi[nr] = hi[0]
    rc[nr] = coll[$1]
    n = index($4, ":"); name[nr] = n ? substr($4, 1, n - 1) : $4; par[nr] = n ? substr($4, n + 1) : ""
    if (phi[nr] < inf && phi[nr] > pmax_seen) pmax_seen = phi[nr]
    if (plo[nr] > pmax_seen) pmax_seen = plo[nr]
    nr++
}
END {
    if (prange != "") { split(prange, pr, "-"); pmin = pr[1] + 0; pmax = pr[2] + 0 }
    else { pmin = 2; pmax = pmax_seen }
    nb = 0; bucket[nb++] = 0
    for (b = 1; b <= max_bytes; b *= 2) bucket[nb++] = b
    ncolors = 0
    colour["native"] = 0; names[0] = "native"; ncolors = 1
    for (c = 0; c < 3; c++)
        for (p = pmin; p <= pmax; p++)
            for (i = 0; i < nb; i++) {
                hit = -1
                for (r = 0; r < nr && hit < 0; r++)
                    if (rc[r] == c && plo[r] <= p && p <= phi[r] && blo[r] <= bucket[i] && bucket[i] <= bhi[r])
                        hit = r
                if (hit < 0) continue
                if (!(name[hit] in colour)) { colour[name[hit]] = ncolors; names[ncolors++] = name[hit] }
                label = par[hit]; gsub(/,/, " ", label)
                printf "%d %d %d %d \"%s\"\n", c, i, p, colour[name[hit]], label > (work "/cells.dat")
                used[c, colour[name[hit]]] = 1
            }
    for (c = 0; c < 3; c++)
        for (k = 0; k < ncolors; k++)
            if ((c, k) in used) printf "%d %d %s\n", c, k, names[k] > (work "/algos.txt")
    xt = ""
    step = nb > 16 ? 2 : 1
    for (i = 0; i < nb; i += step) xt = xt (xt == "" ? "" : ", ") "\"" human(bucket[i]) "\" " i
    printf "pmin=%d\npmax=%d\nncols=%d\nxtics=%c%s%c\nmachine=%c%s%c\n", pmin, pmax, nb, 39, xt, 39, 39, machine, 39 > (work "/meta.sh")
}' "$table"

[ -s "$work/cells.dat" ] || { echo "plot_table.sh: $table has no rule for sizes ${prange:-2-...}" >&2; exit 1; }
# shellcheck disable=SC1091
. "$work/meta.sh"
colours=('#9e9e9e' '#1f77b4' '#ff7f0e' '#2ca02c' '#d62728' '#9467bd' '#8c564b' '#e377c2' '#17becf' '#bcbd22')
rows=$((pmax - pmin + 1))
height=$((3 * (rows * 28 + 130) + 60))
width=$((ncols * 46 + 260))
legend=("" "" "")
while read -r c idx name; do
    legend[c]="${legend[c]}, NaN with boxes fs solid lc rgb '${colours[idx % ${#colours[@]}]}' title '$name'"
done <"$work/algos.txt"
palette="0 '${colours[0]}'"
for ((i = 1; i < ${#colours[@]}; i++)); do palette="$palette, $i '${colours[i]}'"; done

gnuplot <<EOF
set terminal pngcairo size $width,$height font "sans,10" noenhanced
set output "$out"
set multiplot layout 3,1 title "tuning table $(basename "$table"): algorithm per communicator size and block size\n$machine"
set xrange [-0.5:$ncols-0.5]
set yrange [$pmin-0.5:$pmax+0.5]
set xtics ($xtics)
set ytics 1
set xlabel "block bytes (bucket: from this size up to the next one)"
set ylabel "ranks"
set key outside right top
set style fill solid 1.0 noborder
set palette defined ($palette)
set cbrange [0:${#colours[@]}-1]
unset colorbox
colour(i) = int(i) % ${#colours[@]}
$(for c in 0 1 2; do
    names=(MPI_Alltoall MPI_Allgather MPI_Alltoallv)
    echo "set title '${names[c]}'"
    echo "plot '$work/cells.dat' using (\$1 == $c ? \$2 : NaN):3:(0.5):(0.5):(colour(\$4)) with boxxyerror fc palette notitle, \\"
    echo "     '$work/cells.dat' using (\$1 == $c ? \$2 : NaN):3:5 with labels font ',7' notitle ${legend[c]}"
done)
unset multiplot
EOF
echo "plot_table.sh: wrote $out"
