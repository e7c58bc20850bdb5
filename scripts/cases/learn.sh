# shellcheck shell=bash
# learn.sh: selection that learns (XCHG_LEARN), sourced by run_tests.sh (which provides
# begin_case, preloaded, native, summary_status, pass, fail, rc_reason, $TESTS and $LOGS).
#
#  - learn_check natively at 2 ranks (the program itself is right);
#  - learn_check preloaded at 2, 3 and 4 ranks with XCHG_TEST_SKEW_TIMES=1, so that every rank
#    sees its own distorted timings: the ranks must still run the same algorithm at every call
#    (a rank that settled on its own clock would deadlock or deliver wrong bytes, which the
#    program detects); XCHG_VERBOSE must show settled shapes ("xchg: learn ... -> NAME"), and
#    XCHG_LEARN=FILE must write a tuning table that a second run reads: it must decide
#    from that table ("(table FILE:LINE)"), learn no shape of the world's size that a rule of
#    the table covers (world rank 0, which writes the table, takes part in every such shape;
#    the split communicators' other group is not known to it and is learned again; an alltoallv
#    bucket the first run never met may be learned), and pass;
#  - the watch: learn_check with 200 calls per shape at 2 and 3 ranks under XCHG_TEST_DRIFT=1
#    (every watched call of a settled shape reads 100 times slower than it ran) and
#    XCHG_TEST_SKEW_TIMES=1: settled shapes must be learned again ("xchg: watch ... -> learn
#    again"), on every rank at the same call (odd ranks take another path through xchg on
#    every other call; a rank out of step would deadlock or deliver wrong bytes);
#  - XCHG_LEARN=0: nothing is learned, and the models price with constants measured at MPI_Init
#    (on a loaded machine, the built-in start-ups where each attempt found the peer away),
#    native's calls of 1 B among them ("xchg: native calls of 1 B blocks on 2 ranks measured
#    now: ..." with three times above 0 and those of 4 KiB blocks, 0 where a rank was away, or,
#    on a loaded machine, the line saying that one took
#    longer than a descheduled rank's bound and none is used); not under XCHG_NODES=1,1, whose
#    emulated nodes would
#    price native across a network (shim/calibrate.c measures native's calls on one node only);
#  - the calibration measured again: under XCHG_TEST_DESCHEDULED=1 its first measurement of the
#    pair inside the node reads as if the peer had been away; XCHG_VERBOSE must show that it
#    took a second attempt ("xchg: calibration: the start-up inside a node took N attempts",
#    N >= 2), and where that attempt measured, the machine line must hold measured constants
#    (a large message's tau past 16384 B, which the built-in ones lack); native's calls of 1 B
#    read as a descheduled rank's there, and must be left unused ("... not used", and no
#    "measured now" line for them);
#  - the models sure (tuning/learn_policy.h, xchg_lp_sure): under a table of constants (no rules)
#    that price native at 4 ranks 100 times `shm`, learn_check's shapes of 4 ranks start settled
#    ("xchg: sure ...") and none is learned in its 40 calls; with 200 calls a shape (and every
#    rank's timings distorted) the round after the 128th call settles them ("xchg: learn ...");
#  - across communicators: comm_churn makes one call of each collective on each of its 187
#    duplicates of the world, freeing each before the next, so only learning that outlives a
#    communicator (shim/channel.c keeps a gone channel's domain for the next one of its group)
#    ever settles a shape of 2 ranks: XCHG_VERBOSE must show at least one settled shape at p=2
#    (without the kept domain: none), and every element must be right; the duplicates share
#    their group's decisions too (shim/select.c), so each "xchg: decide COLL p=2 block=B" line
#    appears once (without the sharing: 187 times);
#  - calls that move no bytes: empty_calls at 2 and 3 ranks with an empty cache; the models must
#    leave every such call to native from the first one (each "xchg: decide ... block=0" line
#    names native: the xchg algorithms still synchronise where native ends at once), and no
#    buffer byte may change.
#  - empty_calls at 4 ranks with XCHG_LEARN=0: where the node has fewer processing units than 4
#    and the MPI library's waits poll (MPICH), native's calls are not timed at MPI_Init ("xchg:
#    native calls not timed: ..." and no line of their times); elsewhere no such line.

learn_prog=$TESTS/learn_check

# learned_again TABLE P LOG: the "xchg: learn COLL p=P block=LO-HI" lines of LOG whose shape a
# rule of TABLE for COLL at P ranks covers (bytes as the table writes them: N, NK, NM, NG).
# Which alltoallv buckets a run meets depends on what ran before (the carried statistics), so
# a second run may meet, and learn, a bucket the first did not; one the table covers, never.
learned_again() {
    awk -v p="$2" '
        function bytes(s) {
            if (s ~ /K$/) return substr(s, 1, length(s) - 1) * 1024
            if (s ~ /M$/) return substr(s, 1, length(s) - 1) * 1048576
            if (s ~ /G$/) return substr(s, 1, length(s) - 1) * 1073741824
            return s + 0
        }
        FNR == NR { # rules: collective procs [nodes=N] bytes algorithm
            f = $3 ~ /^nodes=/ ? 4 : 3
            if ($1 ~ /^#/ || NF < f + 1 || $2 != p) next
            k = split($f, r, "-")
            if (k == 1) r[2] = r[1]
            if (r[1] == "*") { r[1] = 0; r[2] = "*" }
            n++; coll[n] = $1; lo[n] = bytes(r[1]); hi[n] = r[2] == "*" ? 1e300 : bytes(r[2])
            next
        }
        /^xchg: learn [a-z]+ p=/ && $4 == "p=" p {
            split(substr($5, 7), b, "-"); blo = b[1] + 0; bhi = b[2] + 0
            for (i = 1; i <= n; i++)
                if (coll[i] == $3 && lo[i] <= blo && bhi <= hi[i]) {
                    printf "%s%s block=%s", (found++ ? "; " : ""), $3, substr($5, 7, length($5) - 7)
                    break
                }
        }' "$1" "$3"
}
# not_passed RC LOG: why the learn_check run that exited with RC and wrote LOG did not pass
# (nothing when it passed)
not_passed() {
    local status
    status=$(summary_status "$2" learn_check)
    if [ "$1" -ne 0 ] || [ "$status" != pass ]; then
        echo "the program did not pass ($(rc_reason "$1"), summary $status)"
    fi
}


if [ -x "$learn_prog" ]; then
    name="learn_check p=2 natively"
    if begin_case "$name"; then
        native "$log" 2 -- "$learn_prog"
        verdict "$name" "$log" "$(not_passed $? "$log")"
    fi
    for p in 2 3 4; do
        learned=$LOGS/learned_p$p.table
        name="learn_check p=$p XCHG_TEST_SKEW_TIMES=1 XCHG_LEARN=FILE"
        if begin_case "$name"; then
            rm -f "$learned"
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_TEST_SKEW_TIMES=1 \
                XCHG_LEARN="$learned" -- "$learn_prog"
            why=$(not_passed $? "$log")
            if [ -z "$why" ]; then
                if ! grep -aqE '^xchg: learn (alltoall|allgather|alltoallv) p=[0-9]+ block=[0-9]+-[0-9]+: .* -> [a-z]+ \[' "$log"; then
                    why="no 'xchg: learn ... -> NAME [...]' line: no shape settled"
                elif ! head -n 1 "$learned" 2>/dev/null | grep -qE '^xchg-tuning [12]$'; then
                    why="XCHG_LEARN=$learned did not write a tuning table"
                fi
            fi
            verdict "$name" "$log" "$why"
        fi
        name="learn_check p=$p XCHG_TUNING=learned table"
        if begin_case "$name"; then
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_TUNING="$learned" -- \
                "$learn_prog"
            why=$(not_passed $? "$log")
            if [ -z "$why" ]; then
                if ! grep -aqF "(table $learned:" "$log"; then
                    why="no decision from the learned table ('(table $learned:LINE)')"
                elif relearned=$(learned_again "$learned" "$p" "$log") && [ -n "$relearned" ]; then
                    why="shapes of $p ranks which the table decides were learned again: $relearned"
                fi
            fi
            verdict "$name" "$log" "$why"
        fi
    done
    for p in 2 3; do
        name="learn_check p=$p 200 calls a shape XCHG_TEST_DRIFT=1 XCHG_TEST_SKEW_TIMES=1"
        if begin_case "$name"; then
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_TEST_SKEW_TIMES=1 \
                XCHG_TEST_DRIFT=1 -- "$learn_prog" 200
            why=$(not_passed $? "$log")
            if [ -z "$why" ] && ! grep -aqE '^xchg: watch (alltoall|allgather|alltoallv) p=[0-9]+ block=[0-9]+-[0-9]+: [a-z]+ now .* -> learn again$' "$log"; then
                why="no 'xchg: watch ... -> learn again' line: the watch saw no drift"
            fi
            verdict "$name" "$log" "$why"
        fi
    done
    # A probe of twophase: its call selects twice (once from the carried statistics, again
    # after agreeing on its own), and must count once; a probe that never completed ran
    # twophase on every later call of the shape (seen at 8 ranks on the emulated cluster).
    harness_prog=$build_dir/bench/harness
    name="learning: a twophase probe completes (p=4 XCHG_NODES=2,1,1, skewed alltoallv 64 KiB)"
    if [ "$MPI" = mpich ] && [ -x "$harness_prog" ] && begin_case "$name"; then
        # fixed constants (a table of no rules), under which twophase is one of the candidates
        printf 'xchg-tuning 1\nmachine beta=3.5e-07 tau=2.35e-10 rho=3.6e-11 port_share=0.9\n' \
            >"$LOGS/twophase_probe.table"
        # every candidate probed: the policy may skip twophase as too dear (its agreement counts)
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_STATS=1 XCHG_NODES=2,1,1 \
            XCHG_TEST_PROBE_ALL=1 XCHG_TUNING="$LOGS/twophase_probe.table" -- \
            "$harness_prog" --sizes 64K --colls alltoallv-skewed --steady-calls 40 -o "$LOGS/twophase_probe.csv"
        rc=$?
        why=""
        twophase_calls=$(grep -aoE '^xchg: alltoallv twophase \[\] calls=[0-9]+' "$log" | grep -oE '[0-9]+$')
        if [ "$rc" -ne 0 ]; then
            why="the harness failed ($(rc_reason "$rc"))"
        elif ! grep -aqE '^xchg: learn alltoallv p=4 block=131072-[0-9]+: .*twophase\[\] [0-9.]+us.* -> ' "$log"; then
            why="no 'xchg: learn alltoallv p=4 block=131072-...' line with a timed twophase: its probe was not timed or never completed"
        elif [ "${twophase_calls:-0}" -gt 100 ]; then
            why="twophase ran $twophase_calls calls (4 ranks, 57 calls each): its probe did not end"
        fi
        verdict "$name" "$log" "$why"
    fi
    name="learn_check p=2 XCHG_LEARN=0"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_LEARN=0 XCHG_CACHE=0 -- "$learn_prog"
        why=$(not_passed $? "$log")
        if [ -z "$why" ] && grep -aq '^xchg: learn ' "$log"; then
            why="'xchg: learn' lines although XCHG_LEARN=0"
        elif [ -z "$why" ] && ! grep -aqE '^xchg: cache off: .* machine .*\(measured now\)$' "$log" &&
            ! { grep -aq 'not measured, the built-in constants stay$' "$log" &&
                grep -aqE '^xchg: cache off: .* machine .*\(copy rate measured now, start-ups built in\)$' "$log"; }; then
            why="no 'xchg: cache off: ... machine ... (measured now)' line (nor, after a calibration that found every attempt's peer away, one with the built-in start-ups): the models did not price with constants measured at MPI_Init"
        elif [ -z "$why" ] && ! grep -aqE '^xchg: native calls of 1 B blocks on 2 ranks measured now: alltoall [0-9.]*[1-9][0-9.e+-]*s allgather [0-9.]*[1-9][0-9.e+-]*s alltoallv [0-9.]*[1-9][0-9.e+-]*s; of 4 KiB: [0-9.e+-]+s [0-9.e+-]+s [0-9.e+-]+s \([0-9.e+-]+ ms at MPI_Init\)$' "$log" &&
            ! grep -aqE '^xchg: native calls of 1 B blocks on 2 ranks: [a-z]+ took [0-9.e+-]+ s, above [0-9.e+-]+ s \(a rank was descheduled\): not used$' "$log"; then
            why="no 'xchg: native calls of 1 B blocks on 2 ranks measured now: ...' line with three times (nor one saying why they were not used): native's small calls were not measured at MPI_Init"
        fi
        verdict "$name" "$log" "$why"
    fi
    name="learn_check p=2 XCHG_NODES=1,1 XCHG_LEARN=0: native's calls measured on one node only"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_LEARN=0 XCHG_CACHE=0 XCHG_NODES=1,1 \
            -- "$learn_prog"
        why=$(not_passed $? "$log")
        if [ -z "$why" ] && grep -aq '^xchg: native calls of 1 B' "$log"; then
            why="native's calls measured at MPI_Init on emulated nodes: $(grep -a '^xchg: native calls' "$log" | head -n 1)"
        fi
        verdict "$name" "$log" "$why"
    fi
    name="learn_check p=2 XCHG_TEST_DESCHEDULED=1: the calibration measures again"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_VERBOSE=1 XCHG_CACHE=0 XCHG_TEST_DESCHEDULED=1 -- "$learn_prog"
        why=$(not_passed $? "$log")
        if [ -z "$why" ] && ! grep -aqE '^xchg: calibration: the start-up inside a node took [23] attempts of 3' "$log"; then
            why="no 'xchg: calibration: the start-up inside a node took 2 (or 3) attempts' line: the first attempt, discarded, was not followed by another"
        elif [ -z "$why" ] && ! grep -aq 'not measured, the built-in constants stay' "$log" &&
            ! grep -aqE '^xchg: cache off: .* machine .* past 16384 B .*\(measured now\)$' "$log"; then
            why="the calibration's last attempt measured, yet the machine line lacks the measured constants (tau_large past 16384 B)"
        elif [ -z "$why" ] && ! grep -aqE '^xchg: native calls of 1 B blocks on 2 ranks: alltoall took [0-9.e+-]+ s, above [0-9.e+-]+ s \(a rank was descheduled\): not used$' "$log"; then
            why="no 'xchg: native calls of 1 B blocks on 2 ranks: alltoall took ... not used' line: a descheduled rank's time was not refused"
        elif [ -z "$why" ] && grep -aq '^xchg: native calls of 1 B blocks on 2 ranks measured now' "$log"; then
            why="native's calls of 1 B were used although a rank read as descheduled"
        fi
        verdict "$name" "$log" "$why"
    fi
    # native at 4 ranks priced 20 to 40 us (start-ups of 20 us), shm 0.1 us (a pass of 0.1 us)
    printf 'xchg-tuning 2\nmachine beta=2e-05 tau=1e-10 rho=1e-11 port_share=0 sync=1e-07\n' \
        >"$LOGS/sure.table"
    for calls in 40 200; do
        name="learn_check p=4 $calls calls a shape: the models sure, no round before call 128"
        if begin_case "$name"; then
            preloaded "$log" 4 XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_CACHE=0 XCHG_TEST_SKEW_TIMES=1 \
                XCHG_TUNING="$LOGS/sure.table" -- "$learn_prog" "$calls"
            why=$(not_passed $? "$log")
            sure=$(grep -acE '^xchg: sure (alltoall|allgather|alltoallv) p=4 block=[0-9]+-[0-9]+: .* -> shm \[' "$log")
            learned=$(grep -acE '^xchg: learn (alltoall|allgather|alltoallv) p=4 ' "$log")
            if [ -n "$why" ]; then
                :
            elif [ "$sure" -lt 3 ]; then
                why="$sure 'xchg: sure ... p=4 ... -> shm' lines, expected one a shape of 4 ranks"
            elif [ "$calls" -eq 40 ] && [ "$learned" -gt 0 ]; then
                why="$learned shapes of 4 ranks learned within 40 calls although the models were sure"
            elif [ "$calls" -eq 200 ] && [ "$learned" -lt 3 ]; then
                why="$learned shapes of 4 ranks learned in 200 calls: no round after the 128th call"
            fi
            verdict "$name" "$log" "$why"
        fi
    done
else
    fail "learn_check" "$learn_prog is not built"
fi

if [ -x "$TESTS/comm_churn" ]; then
    name="learning across communicators of one group (comm_churn p=2)"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_CACHE=0 XCHG_VERBOSE=1 -- "$TESTS/comm_churn"
        check_launch $? "$log" comm_churn
        if [ "$outcome" = pass ] && ! grep -aq '^xchg: learn [a-z]* p=2 ' "$log"; then
            outcome=fail
            why="no shape of 2 ranks settled: learning did not carry over from one duplicate of the world to the next"
        fi
        repeated=$(grep -a '^xchg: decide [a-z]* p=2 ' "$log" | cut -d: -f2 | sort | uniq -d | head -n 1)
        if [ "$outcome" = pass ] && [ -n "$repeated" ]; then
            outcome=fail
            why="a decision of the world's group made again on a later duplicate:$repeated"
        fi
        report_launch "$name" "$start" "$log"
    fi
fi

if [ -x "$TESTS/empty_calls" ]; then
    for p in 2 3; do
        name="calls that move no bytes start from native (empty_calls p=$p)"
        if begin_case "$name"; then
            preloaded "$log" "$p" XCHG_CACHE=0 XCHG_VERBOSE=1 -- "$TESTS/empty_calls"
            check_launch $? "$log" empty_calls
            if [ "$outcome" = pass ]; then
                decided=$(grep -ac '^xchg: decide [a-z]* p=[0-9]* block=0: ' "$log")
                other=$(grep -a '^xchg: decide [a-z]* p=[0-9]* block=0: ' "$log" |
                    grep -av 'block=0: native ' | head -n 1)
                if [ "$decided" -lt 3 ]; then
                    outcome=fail
                    why="$decided 'xchg: decide ... block=0' lines, expected one per collective"
                elif [ -n "$other" ]; then
                    outcome=fail
                    why="an empty call left to an xchg algorithm: $other"
                fi
            fi
            report_launch "$name" "$start" "$log"
        fi
    done
    name="empty_calls p=4 XCHG_LEARN=0: native's calls not timed where the node is oversubscribed and MPI's waits poll"
    if begin_case "$name"; then
        preloaded "$log" 4 XCHG_VERBOSE=1 XCHG_LEARN=0 XCHG_CACHE=0 -- "$TESTS/empty_calls"
        check_launch $? "$log" empty_calls
        skipped='^xchg: native calls not timed: the node runs more ranks than it has processing units, and the MPI library.s waits poll$'
        if [ "$outcome" = pass ] && [ "$MPI" = mpich ] && [ "$NPROC" -lt 4 ]; then
            if ! grep -aqE "$skipped" "$log"; then
                outcome=fail
                why="4 ranks on $NPROC processing units under MPICH: no 'xchg: native calls not timed: ...' line"
            elif grep -aq '^xchg: native calls of 1 B' "$log"; then
                outcome=fail
                why="native's calls timed on an oversubscribed node under MPICH: $(grep -a '^xchg: native calls of 1 B' "$log" | head -n 1)"
            fi
        elif [ "$outcome" = pass ] && grep -aqE "$skipped" "$log"; then
            outcome=fail
            why="native's calls not timed, though $([ "$MPI" = mpich ] && echo "the node has $NPROC processing units for 4 ranks" || echo "Open MPI's waits yield (mpi_yield_when_idle)")"
        fi
        report_launch "$name" "$start" "$log"
    fi
else
    fail "empty_calls" "$TESTS/empty_calls is not built"
fi
