# shellcheck shell=bash
# shm.sh: the shm algorithms (MPI_Alltoall, MPI_Allgather, MPI_Alltoallv through a segment of
# shared memory, algos/*_shm.c and shim/shm.c), sourced by run_tests.sh (begin_case,
# preloaded, check_launch, report_launch, $TESTS). tests/configs/shm.conf runs coll_check forced
# to shm at every rank count of the suite; here:
#  - pieces: coll_check at 4 and 7 ranks with XCHG_SHM_BYTES=4K, so that blocks above 4K / p^2
#    (alltoall) or 4K / p (allgather) and alltoallv messages beyond a sender's region go through
#    the segment in several passes;
#  - growth: alltoallv_workloads (messages up to 1 MiB) at 4 ranks with XCHG_SHM_BYTES=4M: the
#    segment that MPI_Init made with halves of 1 MiB grows collectively to 4 MiB and the calls
#    beyond go in pieces; rank 0's count of segments made (an XCHG_STATS line at MPI_Finalize)
#    must be 3 or more: MPI_Init's, the reversed communicator's, and a growth (2 without one);
#  - lifetime: comm_churn (communicators made, used and freed) forced to shm: a segment per
#    communicator, freed with it;
#  - progress: progress_check (rank 0's large send pending while it waits in the collective,
#    rank 1 receiving it before it joins) forced to shm, with transports whose large messages
#    need the sender's progress (MPICH: UCX_TLS=posix,self UCX_RNDV_SCHEME=am; Open MPI:
#    btl_vader_single_copy_mechanism none): without progress driven from the wait it hangs;
#  - refusals: under XCHG_NODES=2,2 (emulated nodes) and with XCHG_SHM_BYTES=0 a forced shm
#    cannot serve the calls: XCHG_STRICT=1 must stop the first call with the predicate's reason,
#    and without it the calls fall back (coll_check passes, no decision for shm on a
#    communicator of more than one rank, where shm is a local copy and serves);
#  - bad input: XCHG_SHM_BYTES=lots is reported by name and the default used (shm still runs);
#  - growth refused: bench/harness's MPI_Alltoallv of 64 MiB blocks at 2 ranks forced to shm
#    with XCHG_SHM_BYTES=1G: the segment it needs is past what a process may hold, so growing
#    fails in the middle of the call (agreed through the segment) and the call goes in pieces
#    through the smaller one; the harness checks every byte of the first and last calls.

shm_forced=(XCHG_ALLTOALL=shm XCHG_ALLGATHER=shm XCHG_ALLTOALLV=shm)
shm_expect=(alltoall=shm allgather=shm alltoallv=shm)

if [ -x "$TESTS/coll_check" ]; then
    for p in 4 7; do
        name="shm coll_check p=$p XCHG_SHM_BYTES=4K (pieces)"
        if begin_case "$name"; then
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_SHM_BYTES=4K \
                "${shm_forced[@]}" -- "$TESTS/coll_check"
            check_launch $? "$log" coll_check "${shm_expect[@]}"
            report_launch "$name" "$start" "$log"
        fi
    done

    name="shm coll_check p=4 XCHG_NODES=2,2 strict (refused)"
    if begin_case "$name"; then
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_STRICT=1 XCHG_NODES=2,2 "${shm_forced[@]}" \
            -- "$TESTS/coll_check"
        if grep -aq "xchg: strict: alltoall shm cannot serve p=4 .*do not all share one machine's memory" "$log"; then
            pass "$name" "$start"
        else
            fail "$name" "no 'xchg: strict: alltoall shm cannot serve ... do not all share one machine's memory' line" "$log"
        fi
    fi

    for env in XCHG_NODES=2,2 XCHG_SHM_BYTES=0; do
        name="shm coll_check p=4 $env (falls back)"
        begin_case "$name" || continue
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_STATS=1 XCHG_VERBOSE=1 "$env" "${shm_forced[@]}" \
            -- "$TESTS/coll_check"
        check_launch $? "$log" coll_check
        ran='xchg: decide [a-z]+ p=([2-9]|[1-9][0-9]+) block=[0-9]+: shm '
        if [ "$outcome" = pass ] && grep -aqE "$ran" "$log"; then
            outcome=fail
            why="shm was chosen on more than one rank although it cannot serve: $(grep -aE "$ran" "$log" | head -n 1)"
        elif [ "$outcome" = pass ] && ! grep -aq 'fallback: forced shm cannot serve this call' "$log"; then
            outcome=fail
            why="no 'fallback: forced shm cannot serve this call' line under XCHG_VERBOSE=1"
        fi
        report_launch "$name" "$start" "$log"
    done

    name="shm coll_check p=3 XCHG_SHM_BYTES=lots (reported, default used)"
    if begin_case "$name"; then
        preloaded "$log" 3 XCHG_WAIT=yield XCHG_STATS=1 XCHG_SHM_BYTES=lots "${shm_forced[@]}" \
            -- "$TESTS/coll_check"
        rc=$?
        if ! grep -aq "^xchg: XCHG_SHM_BYTES=lots: expected a byte size" "$log"; then
            fail "$name" "no 'xchg: XCHG_SHM_BYTES=lots: expected a byte size ...' line" "$log"
        else
            # the complaint was expected: check the rest without it
            sed -i '/^xchg: XCHG_SHM_BYTES=lots/d' "$log"
            check_launch "$rc" "$log" coll_check "${shm_expect[@]}"
            report_launch "$name" "$start" "$log"
        fi
    fi
else
    fail "shm coll_check" "$TESTS/coll_check is not built"
fi

if [ -x "$TESTS/alltoallv_workloads" ]; then
    name="shm alltoallv_workloads p=4 XCHG_SHM_BYTES=4M (segment grows, then pieces)"
    if begin_case "$name"; then
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_ALLTOALLV=shm \
            XCHG_SHM_BYTES=4M -- "$TESTS/alltoallv_workloads"
        check_launch $? "$log" alltoallv_workloads alltoallv=shm
        made=$(sed -n 's/^xchg: at MPI_Finalize .* made \([0-9]*\) shared segments.*/\1/p' "$log")
        if [ "$outcome" = pass ] && ! [ "${made:-0}" -ge 3 ] 2>/dev/null; then
            outcome=fail
            why="expected the segment to grow (3 or more made): '${made:-no line}'"
        fi
        report_launch "$name" "$start" "$log"
    fi
fi

if [ -x "$TESTS/comm_churn" ]; then
    # every world-sized communicator after the first takes the segment its predecessor left
    # (shim/shm.c, the pool): rank 0's count of those at MPI_Finalize (an XCHG_STATS line) must
    # say so; no XCHG_VERBOSE: Open MPI's launcher may cut a line of a long output in two
    name="shm comm_churn p=2 (a freed communicator's segment serves the next)"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_STATS=1 XCHG_STRICT=1 "${shm_forced[@]}" -- "$TESTS/comm_churn"
        check_launch $? "$log" comm_churn "${shm_expect[@]}"
        kept_segments_check "$log"
        report_launch "$name" "$start" "$log"
    fi
fi

if [ -x "$TESTS/progress_check" ]; then
    if [ "$MPI" = mpich ]; then
        slow_sender=(UCX_TLS=posix,self UCX_RNDV_SCHEME=am)
    else
        slow_sender=(OMPI_MCA_btl_vader_single_copy_mechanism=none)
    fi
    for p in 2 4; do
        name="shm progress_check p=$p ${slow_sender[*]}"
        begin_case "$name" || continue
        preloaded "$log" "$p" XCHG_STATS=1 XCHG_STRICT=1 "${slow_sender[@]}" "${shm_forced[@]}" \
            -- "$TESTS/progress_check"
        check_launch $? "$log" progress_check "${shm_expect[@]}"
        report_launch "$name" "$start" "$log"
    done
else
    fail "shm progress_check" "$TESTS/progress_check is not built"
fi

# shellcheck disable=SC2154 # build_dir comes from run_tests.sh
if [ -x "$build_dir/bench/harness" ]; then
    name="shm harness p=2 alltoallv 64 MiB XCHG_SHM_BYTES=1G (growth refused, pieces)"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_STATS=1 XCHG_STRICT=1 XCHG_VERBOSE=1 XCHG_SHM_BYTES=1G \
            XCHG_ALLTOALLV=shm -- "$build_dir/bench/harness" --sizes 64M \
            --colls alltoallv,alltoallv-skewed --modes short --short-warmup 1 --short-calls 2 \
            -o "$LOGS/shm_growth_refused.csv"
        rc=$?
        if [ "$rc" -ne 0 ]; then
            fail "$name" "$(rc_reason "$rc")" "$log"
        elif ! grep -aq "its calls go through the smaller one in more pieces" "$log"; then
            fail "$name" "no 'its calls go through the smaller one in more pieces' line: growing did not fail" "$log"
        else
            pass "$name" "$start"
        fi
    fi
else
    fail "shm harness" "$build_dir/bench/harness is not built (make MPI=$MPI all)"
fi
