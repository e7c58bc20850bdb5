# shellcheck shell=bash
# hier.sh: the hierarchical factor algorithm (hier) for MPI_Alltoall and
# MPI_Alltoallv on emulated nodes of different sizes, sourced by run_tests.sh (begin_case,
# preloaded, check_launch, report_launch, $TESTS).
#
#  - coll_check with MPI_Alltoall and MPI_Alltoallv forced to hier:k=1 and hier:k=2, under
#    XCHG_STRICT=1, for the XCHG_NODES layouts 3,2,1 (p=6), 1,4 (p=5), 2,2,2,2 (p=8),
#    1,1,1,1,1 (p=5) and 5,1,1 (p=7): uneven nodes, one-rank nodes, a node that holds most
#    ranks. coll_check's reversed and split communicators see the layouts translated (ranks of
#    a node not consecutive, fewer nodes). The stats must show "xchg: alltoall hier [k=K]" and
#    "xchg: alltoallv hier [k=K]": hier served the calls. allgather is forced to circulant,
#    which is fast (native and auto's choices would double the time);
#  - alltoallv_workloads (uniform, h-relations, g-groups: skewed and empty messages) forced to
#    hier under 3,2,1 (k=1) and 5,1,1 (k=2).
# tests/configs/hier.conf runs hier for MPI_Alltoall on one node (no XCHG_NODES) at every rank
# count of the suite.

if [ -x "$TESTS/coll_check" ]; then
    for layout in 3,2,1 1,4 2,2,2,2 1,1,1,1,1 5,1,1; do
        p=$(($(tr ',' '+' <<<"$layout")))
        for k in 1 2; do
            name="hier coll_check p=$p XCHG_NODES=$layout alltoall,alltoallv=hier:k=$k"
            begin_case "$name" || continue
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 \
                XCHG_NODES="$layout" XCHG_ALLTOALL="hier:k=$k" XCHG_ALLGATHER=circulant \
                XCHG_ALLTOALLV="hier:k=$k" -- "$TESTS/coll_check"
            check_launch $? "$log" coll_check "alltoall=hier:k=$k" allgather=circulant \
                "alltoallv=hier:k=$k"
            report_launch "$name" "$start" "$log"
        done
    done
else
    fail "hier coll_check" "$TESTS/coll_check is not built"
fi

if [ -x "$TESTS/alltoallv_workloads" ]; then
    for run in 3,2,1:1 5,1,1:2; do
        layout=${run%:*}
        k=${run#*:}
        p=$(($(tr ',' '+' <<<"$layout")))
        name="hier alltoallv_workloads p=$p XCHG_NODES=$layout alltoallv=hier:k=$k"
        begin_case "$name" || continue
        preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 \
            XCHG_NODES="$layout" XCHG_ALLTOALLV="hier:k=$k" -- "$TESTS/alltoallv_workloads"
        check_launch $? "$log" alltoallv_workloads "alltoallv=hier:k=$k"
        report_launch "$name" "$start" "$log"
    done
fi
