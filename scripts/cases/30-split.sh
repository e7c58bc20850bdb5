# shellcheck shell=bash
# 30-split.sh: message splitting, sourced by run_tests.sh after the behaviour cases
# (begin_case, preloaded, check_launch, report_launch, stats_max_block, $PIECE, $TESTS,
# $build_dir), on the MPIs of PIECE_MPIS (MPICH): coll_check at 3 and 4 ranks and
# alltoallv_workloads at 4 ranks, forced to pairwise, ring, radix, circulant and twophase, with
# the library built by `make PIECE=$XCHG_TEST_PIECE lib` (default 4096;
# $BUILD/piece-4096/libxchg.so), which splits every message above that many bytes; the stats
# must show blocks above it.

PIECE_MPIS="mpich" # MPIs on which the splitting cases run

# split_case P PROG COLL=SPEC...: PROG at P ranks with the library of `make PIECE=$PIECE lib`
# and every COLL forced to SPEC (strictly). Besides the usual checks, each forced algorithm's
# stats must show a block above $PIECE bytes (the size key; for twophase the transposes'
# blocks are at least about that large), so its messages were cut into pieces in round.c.
split_case() {
    local p=$1 prog=$2 pair coll vars=() max
    shift 2
    local name="split at $PIECE $prog p=$p $*"
    begin_case "$name" || return 0
    for pair in "$@"; do
        coll=${pair%%=*}
        vars+=("XCHG_${coll^^}=${pair#*=}")
    done
    # LIB given to one call of preloaded only (bash restores it afterwards)
    LIB=$piece_lib preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 "${vars[@]}" \
        -- "$TESTS/$prog"
    check_launch $? "$log" "$prog" "$@"
    for pair in "$@"; do
        [ "$outcome" = pass ] || break
        max=$(stats_max_block "$log" "${pair%%=*}" "${pair#*=}")
        if [ "$max" -le "$PIECE" ]; then
            outcome=fail
            why="${pair%%=*} ${pair#*=} saw no block above $PIECE bytes (max_block=$max): nothing was split"
        fi
    done
    report_launch "$name" "$start" "$log"
}

# The rest of the suite splits only messages above 1 GiB (large_count, which needs memory that
# test machines rarely have). coll_check's largest blocks (3000 elements, 12 to 72 KB) and
# alltoallv_workloads' are far above the piece size.
case " $PIECE_MPIS " in
*" $MPI "*)
    piece_lib=$build_dir/piece-$PIECE/libxchg.so
    if [ ! -f "$piece_lib" ]; then
        fail "split at $PIECE" "$piece_lib is not built (make MPI=$MPI PIECE=$PIECE lib)"
    else
        for p in 3 4; do
            split_case "$p" coll_check alltoall=pairwise allgather=ring alltoallv=pairwise
            split_case "$p" coll_check alltoall=radix allgather=circulant alltoallv=twophase
        done
        split_case 4 alltoallv_workloads alltoallv=pairwise
        split_case 4 alltoallv_workloads alltoallv=twophase
    fi
    ;;
*)
    echo "(message splitting at $PIECE bytes is not run on $MPI)"
    ;;
esac
