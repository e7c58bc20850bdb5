# shellcheck shell=bash
# load.sh: a short form of scripts/load_check.sh (sourced by run_tests.sh, which provides
# begin_case, run_logged, verdict, $root, $LOGS and $MPI): 20 seconds of its random runs on one
# node under this MPI, 2 or 3 ranks, two processes spinning at nice 5 meanwhile, a fixed seed.
# The script must exit 0 and end with "load_check: N runs, 0 failed" for some N of 1 or more, so
# that the tool `make test-load` runs keeps working. The long form (minutes, and --cluster) is
# run by hand:
#     make test-load LOAD_MINUTES=15

name="load_check $MPI (20 s of random checked runs at 2 or 3 ranks, 2 spinners)"
if begin_case "$name"; then
    run_logged "$log" "$root/scripts/load_check.sh" --minutes 0.34 --mpi "$MPI" --spinners 2 \
        --max-ranks 3 --seed 1 --limit 120 -o "$LOGS/load-check-$MPI"
    rc=$?
    why=""
    if [ $rc -ne 0 ]; then
        why="load_check.sh exited with status $rc"
    elif ! grep -aqE '^load_check: [1-9][0-9]* runs, 0 failed' "$log"; then
        why="no 'load_check: N runs, 0 failed' line"
    fi
    verdict "$name" "$log" "$why"
fi
