#!/usr/bin/env bash
# load_check.sh (make test-load): the correctness programs of tests/mpi/ in random settings,
# one run after another, while processes spin on every core at a lower priority, for a given
# time; each run checks every byte it receives and a run that exits non-zero or outlasts its
# limit is a failure. Races that a quiet machine never shows (a rank descheduled in the middle
# of a pass, a peer's late arrival) show here, if anywhere.
#
#   scripts/load_check.sh                        10 minutes on one node, MPICH and Open MPI
#   scripts/load_check.sh --minutes 30 --seed 7
#   scripts/load_check.sh --cluster --minutes 15 the emulated cluster (root; Open MPI)
#
# One node (the default), per run, at random:
#   MPI       MPICH or Open MPI (--mpi), through scripts/xchgrun (Open MPI with more ranks than
#             cores: --oversubscribe --mca mpi_yield_when_idle 1);
#   ranks     2 to 5 (--max-ranks; threads_check 2 or 3);
#   program   coll_check, learn_check, alltoallv_workloads, soak --calls 20000, comm_churn,
#             many_comms 500, threads_check --level multiple --iterations 100, topo_check,
#             decision_cache 30 (with a table that names two algorithms inside one size bucket
#             of MPI_Alltoallv, neither shm forced nor XCHG_NODES: the table must decide);
#   settings  each with its own chance: XCHG_WAIT=yield, XCHG_STRICT=1,
#             XCHG_TEST_DESCHEDULED=1, every collective forced to shm, or XCHG_NODES of two
#             emulated nodes (not with shm forced: strict mode refuses that pair by design).
# The emulated cluster (--cluster, scripts/cluster: network namespaces, root; Open MPI, whose
# own collectives yield with more ranks than cores), per run:
#   layout    nodes of 3,2,2,1, 3,2,1, 1,4, 2,2,2,2 or 4,1,1,1,1 ranks, links of 1 Gbit/s or
#             100 Mbit/s, ranks placed node by node or dealt round-robin (XCHG_CLUSTER_PLACE);
#   program   coll_check or alltoallv_workloads;
#   settings  auto, or forced node (leaders and ports from the models), node with 2 or 3
#             leaders, or hier, twophase and ring; XCHG_STRICT=1, XCHG_WAIT=yield at random.
# Every run has a cache of its own (XCHG_CACHE under the output folder), so no run starts from
# another's verdicts.
#
# Options:
#   --minutes M     how long to start new runs (default 10; a fraction is fine)
#   --mpi LIST      mpich, openmpi or both (default both; the cluster runs Open MPI)
#   --cluster       the emulated cluster instead of one node
#   --spinners N    processes spinning at nice 5 meanwhile (default twice the cores; 0: none)
#   --seed S        the seed of the random choices, so that a sequence can be run again
#                   (default: from the clock; printed)
#   --limit S       seconds a run may take (default 300)
#   --programs LIST one node: pick the program among these only (comma-separated names of the
#                   list above; default all)
#   --max-ranks N   one node: at most N ranks a run (default 5, at least 2; MPICH's own
#                   collectives busy-poll with more ranks than cores, so its runs take longer)
#   -o DIR          logs (default build/load-check); a failed run's log is kept as
#                   DIR/fail-N.log with the line that runs it again
# Output: one line per run (ok or FAIL, its number, the settings), then "load_check: R runs,
# F failed" and per program its runs. Exit status 1 when a run failed, 2 for bad options.
# Build first (`make all`, and `make MPI=openmpi all` for Open MPI). Nothing else should run
# meanwhile that must be timed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}
die() {
    echo "load_check.sh: $*" >&2
    exit 2
}

minutes=10
mpis=both
cluster=0
spinners=$((2 * $(nproc)))
seed=""
limit=300
max_ranks=5
all_programs=(coll_check learn_check alltoallv_workloads soak comm_churn many_comms threads_check
    topo_check decision_cache)
programs=("${all_programs[@]}")
outdir=build/load-check
while [ $# -gt 0 ]; do
    case "$1" in
    --minutes) minutes=${2:?--minutes needs a number}; shift 2 ;;
    --mpi) mpis=${2:?--mpi needs mpich, openmpi or both}; shift 2 ;;
    --cluster) cluster=1; shift ;;
    --spinners) spinners=${2:?--spinners needs a number}; shift 2 ;;
    --seed) seed=${2:?--seed needs a number}; shift 2 ;;
    --limit) limit=${2:?--limit needs seconds}; shift 2 ;;
    --max-ranks) max_ranks=${2:?--max-ranks needs a number}; shift 2 ;;
    --programs)
        IFS=, read -r -a programs <<<"${2:?--programs needs a list of programs}"
        programs_given=1
        shift 2
        ;;
    -o) outdir=${2:?-o needs a directory}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (--help lists them)" ;;
    esac
done
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--minutes '$minutes' is not a number"
[[ $spinners =~ ^[0-9]+$ ]] || die "--spinners '$spinners' is not a number"
[[ $limit =~ ^[1-9][0-9]*$ ]] || die "--limit '$limit' is not a positive number of seconds"
[[ $max_ranks =~ ^[0-9]+$ ]] && [ "$max_ranks" -ge 2 ] ||
    die "--max-ranks '$max_ranks' is not a number of 2 or more"
for prog in "${programs[@]}"; do
    case " ${all_programs[*]} " in *" $prog "*) ;; *) die "--programs: '$prog' is not one of ${all_programs[*]}" ;; esac
done
[ ${#programs[@]} -ge 1 ] || die "--programs: no program named"
[ "$cluster" = 1 ] && [ "${programs_given:-0}" = 1 ] && die "--programs is for one node (the cluster runs coll_check and alltoallv_workloads)"
[ -z "$seed" ] && seed=$(($(date +%s) % 32768))
[[ $seed =~ ^[0-9]+$ ]] || die "--seed '$seed' is not a number"
case "$mpis" in
mpich | openmpi) mpi_list=("$mpis") ;;
both) mpi_list=(mpich openmpi) ;;
*) die "--mpi must be mpich, openmpi or both, not '$mpis'" ;;
esac
if [ "$cluster" = 1 ]; then
    [ "$mpis" = mpich ] && die "--cluster runs Open MPI (MPICH's own collectives busy-poll there)"
    mpi_list=(openmpi)
    "$root/scripts/cluster" check >/dev/null 2>&1 ||
        die "this machine cannot run the emulated cluster (scripts/cluster check)"
fi
for mpi in "${mpi_list[@]}"; do
    build=build
    [ "$mpi" = openmpi ] && build=build/openmpi
    for f in libxchg.so tests/coll_check; do
        [ -e "$build/$f" ] || die "no $build/$f: run 'make MPI=$mpi all' first"
    done
done

# The caller's XCHG_* variables do not reach the runs: each run's settings are its own.
for var in $(compgen -e | grep '^XCHG_' || true); do unset "$var"; done
unset LD_PRELOAD

mkdir -p "$outdir"
outdir=$(readlink -f "$outdir")
rm -rf "$outdir/caches"
# decision_cache's table (tests/mpi/decision_cache.c): 1600 and 1900 B lie in one size bucket
printf 'xchg-tuning 1\n%s\n%s\n%s\n%s\n' 'alltoall * * pairwise' 'allgather * * ring' \
    'alltoallv * 0-1799 pairwise' 'alltoallv * 1800-* shm' >"$outdir/bucket.table"
spin_pids=()
cleanup() {
    [ ${#spin_pids[@]} -gt 0 ] && kill "${spin_pids[@]}" 2>/dev/null
    [ "$cluster" = 1 ] && "$root/scripts/cluster" down >/dev/null 2>&1
    rm -rf "$outdir/caches"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ((i = 0; i < spinners; i++)); do
    nice -n 5 bash -c 'while :; do :; done' &
    spin_pids+=($!)
done

RANDOM=$seed
pick() { # one of the arguments
    local n=$#
    shift $((RANDOM % n))
    echo "$1"
}
chance() { [ $((RANDOM % $1)) = 0 ]; } # 1 in N

# One run's settings into run_env (VAR=VALUE words) and run_cmd (xchgrun's arguments).
one_node_run() {
    local mpi prog np args=() build
    mpi=$(pick "${mpi_list[@]}")
    build=build
    [ "$mpi" = openmpi ] && build=build/openmpi
    prog=$(pick "${programs[@]}")
    np=$((2 + RANDOM % (max_ranks - 1)))
    case "$prog" in
    soak) args=(--calls 20000) ;;
    many_comms) args=(500) ;;
    threads_check) args=(--level multiple --iterations 100); np=$((np > 3 ? 3 : np)) ;;
    decision_cache) args=(30 1600 1900) ;;
    esac
    run_env=()
    chance 3 && run_env+=(XCHG_WAIT=yield)
    chance 3 && run_env+=(XCHG_STRICT=1)
    chance 3 && run_env+=(XCHG_TEST_DESCHEDULED=1)
    if [ "$prog" = decision_cache ]; then
        run_env+=(XCHG_TUNING="$outdir/bucket.table")
    elif chance 4; then
        run_env+=(XCHG_ALLTOALL=shm XCHG_ALLGATHER=shm XCHG_ALLTOALLV=shm)
    elif chance 3 && [ "$np" -ge 3 ]; then
        local a=$((1 + RANDOM % (np - 1)))
        run_env+=("XCHG_NODES=$a,$((np - a))")
    fi
    run_what="$mpi $np $prog${args[*]:+ ${args[*]}}"
    run_cmd=(--mpi="$mpi" -n "$np" "$root/$build/tests/$prog" "${args[@]}")
    run_prog=$prog
}

cluster_run() {
    local layout link prog
    layout=$(pick 3,2,2,1 3,2,1 1,4 2,2,2,2 4,1,1,1,1)
    link=$(pick 1gbit 1gbit 100mbit)
    prog=$(pick coll_check alltoallv_workloads)
    run_env=()
    case $((RANDOM % 4)) in
    0) run_env+=(XCHG_ALLTOALL=node XCHG_ALLGATHER=node XCHG_ALLTOALLV=node) ;;
    1)
        run_env+=(XCHG_ALLTOALL=node:leaders=2 XCHG_ALLGATHER=node:k=1
            XCHG_ALLTOALLV=node:leaders=3)
        ;;
    2) run_env+=(XCHG_ALLTOALL=hier XCHG_ALLGATHER=ring XCHG_ALLTOALLV=twophase) ;;
    esac
    chance 3 && run_env+=(XCHG_STRICT=1)
    chance 3 && run_env+=(XCHG_WAIT=yield)
    chance 3 && run_env+=(XCHG_CLUSTER_PLACE=interleave)
    run_what="openmpi nodes=$layout $link $prog"
    run_cmd=(--mpi=openmpi --nodes "$layout" --link "$link" --keep
        "$root/build/openmpi/tests/$prog")
    run_prog=$prog
}

echo "load_check: seed $seed, $spinners spinners at nice 5, $minutes minutes of runs" \
    "($([ "$cluster" = 1 ] && echo "emulated cluster" || echo "one node, ${mpi_list[*]}"))," \
    "logs in $outdir"
end=$(awk -v now="$(date +%s)" -v m="$minutes" 'BEGIN { printf "%d", now + m * 60 }')
runs=0
failed=0
declare -A per_prog=()
while [ "$(date +%s)" -lt "$end" ]; do
    runs=$((runs + 1))
    if [ "$cluster" = 1 ]; then cluster_run; else one_node_run; fi
    per_prog[$run_prog]=$((${per_prog[$run_prog]:-0} + 1))
    log=$outdir/run.log
    cache=$outdir/caches/run-$runs
    mkdir -p "$cache"
    rc=0
    env "${run_env[@]}" XCHG_CACHE="$cache" timeout -k 10 "$limit" \
        "$root/scripts/xchgrun" "${run_cmd[@]}" >"$log" 2>&1 || rc=$?
    rm -rf "$cache"
    if [ "$rc" = 0 ]; then
        echo "ok   $runs $run_what ${run_env[*]}"
    else
        failed=$((failed + 1))
        why="exit status $rc"
        [ "$rc" = 124 ] && why="no end within $limit s"
        {
            echo "# again: ${run_env[*]} scripts/xchgrun ${run_cmd[*]}"
            cat "$log"
        } >"$outdir/fail-$runs.log"
        echo "FAIL $runs $run_what ${run_env[*]}: $why (log: $outdir/fail-$runs.log)"
    fi
done
echo "load_check: $runs runs, $failed failed (seed $seed)"
for prog in $(printf '%s\n' "${!per_prog[@]}" | sort); do
    echo "  $prog: ${per_prog[$prog]}"
done
[ "$failed" = 0 ]
