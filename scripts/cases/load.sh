# shellcheck shell=bash
# load.sh: a short form of scripts/load_check.sh (sourced by run_tests.sh, which provides
# begin_case, run_logged, verdict, $root, $LOGS and $MPI): 10 seconds of its random runs on one
# node under this MPI, 2 or 3 ranks, of its shorter programs (coll_check, alltoallv_workloads,
# topo_check, decision_cache), one process spinning at nice 5 meanwhile, a fixed seed. (Under
# Open MPI one run takes 10 to 15 s so, and with two spinners and every program two runs took
# 41 s.)
# The script must exit 0 and end with "load_check: N runs, 0 failed" for some N of 1 or more, so
# that the tool `make test-load` runs keeps working. The long form (minutes, and --cluster) is
# run by hand:
#     make test-load LOAD_MINUTES=15

name="load_check $MPI (10 s of random checked runs at 2 or 3 ranks, 1 spinner)"
if begin_case "$name"; then
    run_logged "$log" "$root/scripts/load_check.sh" --minutes 0.17 --mpi "$MPI" --spinners 1 \
        --max-ranks 3 --seed 1 --limit 120 \
        --programs coll_check,alltoallv_workloads,topo_check,decision_cache \
        -o "$LOGS/load-check-$MPI"
    rc=$?
    why=""
    if [ $rc -ne 0 ]; then
        why="load_check.sh exited with status $rc"
    elif ! grep -aqE '^load_check: [1-9][0-9]* runs, 0 failed' "$log"; then
        why="no 'load_check: N runs, 0 failed' line"
    fi
    verdict "$name" "$log" "$why"
fi
