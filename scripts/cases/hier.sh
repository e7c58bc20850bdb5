# shellcheck shell=bash
# hier.sh: the hierarchical factor alltoall (hier, issue 13) on emulated nodes of different
# sizes, sourced by run_tests.sh (begin_case, preloaded, check_launch, report_launch, stats_has,
# $TESTS).
#
# coll_check with MPI_Alltoall forced to hier:k=1 and hier:k=2, under XCHG_STRICT=1, for the
# XCHG_NODES layouts 3,2,1 (p=6), 1,4 (p=5), 2,2,2,2 (p=8), 1,1,1,1,1 (p=5) and 5,1,1 (p=7):
# uneven nodes, one-rank nodes, a node that holds most ranks. coll_check's reversed and split
# communicators see the layouts translated (ranks of a node not consecutive, fewer nodes). The
# stats must show "xchg: alltoall hier [k=K]": hier served the calls. allgather and alltoallv
# are forced to circulant and pairwise, which are fast (native and auto's choices would triple
# the time) and checked as usual. tests/configs/hier.conf runs hier on one node (no
# XCHG_NODES) at every rank count of the suite.

if [ -x "$TESTS/coll_check" ]; then
    for layout in 3,2,1 1,4 2,2,2,2 1,1,1,1,1 5,1,1; do
        p=$(($(tr ',' '+' <<<"$layout")))
        for k in 1 2; do
            name="hier coll_check p=$p XCHG_NODES=$layout alltoall=hier:k=$k"
            begin_case "$name" || continue
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 \
                XCHG_NODES="$layout" XCHG_ALLTOALL="hier:k=$k" XCHG_ALLGATHER=circulant \
                XCHG_ALLTOALLV=pairwise -- "$TESTS/coll_check"
            check_launch $? "$log" coll_check "alltoall=hier:k=$k" allgather=circulant \
                alltoallv=pairwise
            report_launch "$name" "$start" "$log"
        done
    done
else
    fail "hier coll_check" "$TESTS/coll_check is not built"
fi
