# shellcheck shell=bash
# input.sh: bad input that must be reported, briefly, and survived (sourced by run_tests.sh,
# which provides log_for, preloaded, summary_status, pass, fail, $TESTS and $LOGS).
#
# Each case runs coll_check at 2 ranks with the library preloaded and one bad setting: the
# program must pass, and the library must print exactly one "xchg: " line (world rank 0 only),
# shorter than 300 characters, naming the variable or the file and giving the reason. Cases:
# XCHG_TUNING naming a FIFO (must not hang), /dev/zero, an empty file, a comment-only file, a
# file starting with a NUL byte, a file with a 100 KB bad rule line; a 100 KB XCHG_ALLTOALL
# value; XCHG_ALLTOALL=radix:r=2,r=3 (a repeated key). And XCHG_TUNING naming one table on
# rank 0 and another on the others: every rank must decide from rank 0's. And a table that
# names two algorithms inside one size bucket of MPI_Alltoallv, with calls whose type handles
# differ between the ranks (tests/mpi/decision_cache.c): every rank must run the same one.

# input_case NAME VAR=VALUE NAMING REASON: the one "xchg: " line must contain NAMING and
# REASON (both fixed strings).
input_case() {
    local name="input: $1" setting=$2 naming=$3 reason=$4 rc status lines n why=""
    begin_case "$name" || return 0
    preloaded "$log" 2 XCHG_WAIT=yield "$setting" -- "$TESTS/coll_check"
    rc=$?
    status=$(summary_status "$log" coll_check)
    lines=$(grep -a '^xchg: ' "$log")
    n=$(grep -ac '^xchg: ' "$log")
    if [ "$rc" -ne 0 ] || [ "$status" != pass ]; then
        why="the program did not pass ($(rc_reason "$rc"), summary $status)"
    elif [ "$n" -ne 1 ]; then
        why="expected exactly one 'xchg: ' line, found $n"
    elif [[ $lines != *"$naming"* ]]; then
        why="the message does not name '${naming:0:80}'"
    elif [[ $lines != *"$reason"* ]]; then
        why="the message does not give the reason '$reason'"
    elif [ ${#lines} -ge 300 ]; then
        why="the message has ${#lines} characters (expected fewer than 300)"
    fi
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
}

# input_table NAME FILE REASON [LINE]: XCHG_TUNING=FILE, reported as "xchg: FILE:LINE: ..."
# when LINE is given, else as "xchg: XCHG_TUNING=FILE: ...".
input_table() {
    local naming="XCHG_TUNING=$2:"
    [ $# -ge 4 ] && naming="$2:$4: "
    input_case "$1" "XCHG_TUNING=$2" "xchg: $naming" "$3"
}

if [ -x "$TESTS/coll_check" ]; then
    input_huge=$(head -c 102400 /dev/zero | tr '\0' 7)

    # not a regular file: a FIFO nobody writes (opening it for reading would block forever),
    # a device that never ends
    input_fifo=$LOGS/input.fifo
    rm -f "$input_fifo"
    if mkfifo "$input_fifo"; then
        input_table "XCHG_TUNING=FIFO" "$input_fifo" "not a regular file (a FIFO); file ignored"
    else
        fail "input: XCHG_TUNING=FIFO" "mkfifo $input_fifo failed"
    fi
    rm -f "$input_fifo"
    input_table "XCHG_TUNING=/dev/zero" /dev/zero "not a regular file (a character device)"

    # no version line: empty, comments and blanks only
    : >"$LOGS/input-empty.table"
    input_table "XCHG_TUNING=empty file" "$LOGS/input-empty.table" "no 'xchg-tuning 1' line"
    printf '# a comment\n\n   # another, indented\n' >"$LOGS/input-comments.table"
    input_table "XCHG_TUNING=comment-only file" "$LOGS/input-comments.table" \
        "no 'xchg-tuning 1' line"

    # not text: a NUL byte first, reported at line 1, the whole file ignored
    printf '\0xchg-tuning 1\nalltoall * * native\n' >"$LOGS/input-nul.table"
    input_table "XCHG_TUNING=NUL byte first" "$LOGS/input-nul.table" \
        "NUL byte: the file is not text; file ignored" 1

    # a 100 KB bad rule line: a short quote, then the reason
    printf 'xchg-tuning 1\nalltoall * * pairwise:k=%s\n' "$input_huge" >"$LOGS/input-long.table"
    input_table "XCHG_TUNING=100 KB bad rule line" "$LOGS/input-long.table" \
        "value is too long (102411 characters" 2

    # a 100 KB XCHG_ALLTOALL value; a repeated key
    input_case "XCHG_ALLTOALL=100 KB value" "XCHG_ALLTOALL=$input_huge" \
        "xchg: XCHG_ALLTOALL=${input_huge:0:40}...: " \
        "value is too long (102400 characters"
    input_case "XCHG_ALLTOALL=radix:r=2,r=3" "XCHG_ALLTOALL=radix:r=2,r=3" \
        "xchg: XCHG_ALLTOALL=radix:r=2,r=3: " "key 'r' given twice; using auto"
    unset input_huge input_fifo

    # ranks that find different tables under XCHG_TUNING (a file changed while the job started,
    # or a path that each node's file system fills differently): world rank 0 reads it and every
    # rank decides from its text, so all run the same algorithms; were each rank to read its
    # own, rank 0 would run shm and the others messages
    name="input: XCHG_TUNING that differs between ranks"
    if begin_case "$name"; then
        # rank 0's table is longer than one piece of the broadcast (64 KiB): 80 KB of comments
        { printf 'xchg-tuning 1\nalltoall * * shm\nallgather * * shm\nalltoallv * * shm\n'
          for i in $(seq 1000); do printf '# padding %04d %070d\n' "$i" 0; done
        } >"$LOGS/input-rank0.table"
        printf 'xchg-tuning 1\n%s\n%s\n%s\n' 'alltoall * * pairwise' 'allgather * * ring' \
            'alltoallv * * pairwise' >"$LOGS/input-ranks.table"
        cat >"$LOGS/input-rank-table.sh" <<EOF
#!/bin/sh
# XCHG_TUNING by world rank (MPICH's PMI_RANK, Open MPI's OMPI_COMM_WORLD_RANK)
rank=\${PMI_RANK:-\${OMPI_COMM_WORLD_RANK:-0}}
XCHG_TUNING=$LOGS/input-ranks.table
[ "\$rank" = 0 ] && XCHG_TUNING=$LOGS/input-rank0.table
export XCHG_TUNING
exec "\$@"
EOF
        chmod +x "$LOGS/input-rank-table.sh"
        preloaded "$log" 3 XCHG_WAIT=yield XCHG_VERBOSE=1 -- "$LOGS/input-rank-table.sh" \
            "$TESTS/coll_check"
        rc=$?
        status=$(summary_status "$log" coll_check)
        if [ "$rc" -ne 0 ] || [ "$status" != pass ]; then
            fail "$name" "the program did not pass ($(rc_reason "$rc"), summary $status)" "$log"
        elif ! grep -aqF "shm [] (table $LOGS/input-rank0.table:2)" "$log"; then
            fail "$name" "no decision from rank 0's table (XCHG_VERBOSE)" "$log"
        else
            pass "$name" "$start"
        fi
    fi

    # the decision cache keeps one decision per size bucket of MPI_Alltoallv, made from the
    # first call's counts; the even ranks' MPI_Alltoall takes its memorised call where the odd
    # ranks' (other type handles) selects again and may push a decision out of the cache: were
    # alltoallv's decisions in the same table, an odd rank would decide that bucket again from
    # other counts (shm where the others run pairwise): wrong bytes or an MPI error within 10
    # rounds, or a hang
    name="input: a table that splits an MPI_Alltoallv size bucket, type handles that differ"
    if begin_case "$name"; then
        printf 'xchg-tuning 1\n%s\n%s\n%s\n%s\n' 'alltoall * * pairwise' 'allgather * * ring' \
            'alltoallv * 0-1799 pairwise' 'alltoallv * 1800-* shm' >"$LOGS/input-bucket.table"
        preloaded "$log" 2 XCHG_TUNING="$LOGS/input-bucket.table" -- "$TESTS/decision_cache" 100 \
            1600 1900
        rc=$?
        status=$(summary_status "$log" decision_cache)
        if [ "$rc" -ne 0 ] || [ "$status" != pass ]; then
            fail "$name" "the program did not pass ($(rc_reason "$rc"), summary $status)" "$log"
        else
            pass "$name" "$start"
        fi
    fi
fi
