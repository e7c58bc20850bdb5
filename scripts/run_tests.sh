#!/usr/bin/env bash
# run_tests.sh: the whole xchg test suite; `make test` calls it (after building everything) as
#     MPI=mpich|openmpi BUILD=build|build/openmpi scripts/run_tests.sh
#
# This file is the runner: the options, the helpers every case uses, and the loop that sources
# every scripts/cases/*.sh in name order, then the summary. The cases are in those files, the
# number prefixes keeping the suite's order (the rest, by topic, in alphabetical order):
#   00-unit.sh       the unit tests: every $BUILD/tests/unit/test_* (no MPI launcher);
#   10-configs.sh    the MPI correctness programs (coll_check, alltoallv_workloads, the radix_sort
#                    app) with the library preloaded, once per configuration of
#                    tests/configs/*.conf, every forced algorithm checked in the XCHG_STATS lines;
#   20-behaviour.sh  bad XCHG_* values, XCHG_DISABLE, XCHG_VERBOSE, the Fortran programs,
#                    errors_check, comm_churn, large_count, bad tuning tables, and auto under
#                    tables that name one algorithm for every call;
#   30-split.sh      message splitting (MPICH only) with the library of
#                    `make PIECE=$XCHG_TEST_PIECE lib` (default 4096; $BUILD/piece-4096/libxchg.so);
#   NAME.sh          more cases by topic (bench, cache, cluster, hier, learn, shm, torus, ...).
# A case file is sourced, not run: it uses the helpers below (begin_case, preloaded, native,
# run_logged, check_launch, report_launch, verdict, pass, fail, skip, the stats_* readers,
# kept_segments_check) and the variables $TESTS, $LOGS, $LIB, $build_dir, $PIECE; each file's
# header says what it runs.
# Every run that forces an algorithm sets XCHG_STRICT=1, under which a forced algorithm that
# cannot serve a call makes the call fail after a line "xchg: strict: ..."; a log with such a
# line fails its case, naming the line.
# Every launch has no standard input and a time limit (XCHG_TEST_TIMEOUT, default 180 s; after
# 3 timed-out launches the rest are not started and count as failed, so that a hanging library
# fails the suite in minutes); its output is kept in $BUILD/test-logs/ and its tail printed
# when it fails. The programs stop themselves (MPI_Abort) when a call returns an error, since
# the ranks may then be out of step. One line per case,
# "PASS name (seconds)", "FAIL name: why" or "SKIP name: why"; the last line is
# "N passed, M failed" (", K skipped" when something was skipped); exit status 1 if M > 0.
#
# XCHG_TEST_ONLY=REGEX runs only the cases whose name (as in the PASS/FAIL lines) matches the
# extended regular expression anywhere, e.g. XCHG_TEST_ONLY='^coll_check p=4 ' or
# XCHG_TEST_ONLY='split|XCHG_TUNING'; the summary says how many were left out, and a filter
# that matches no case fails. Problems in tests/configs/*.conf and missing builds are reported
# whatever the filter. XCHG_TEST_FUZZ_TIMEOUT (seconds, default 900) limits the fuzzing case
# (scripts/cases/fuzz.sh). The caller's other XCHG_* variables are unset before any case runs.
set -uo pipefail

MPI=${MPI:-mpich}
case $MPI in
mpich) BUILD=${BUILD:-build} ;;
openmpi) BUILD=${BUILD:-build/openmpi} ;;
*)
    echo "run_tests.sh: MPI must be mpich or openmpi, not '$MPI'" >&2
    exit 2
    ;;
esac
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
cd "$root" || exit 2
case $BUILD in
/*) build_dir=$BUILD ;;
*) build_dir=$root/$BUILD ;;
esac
LIB=$build_dir/libxchg.so
# shellcheck disable=SC2034 # the case files use it
TESTS=$build_dir/tests
LOGS=$build_dir/test-logs
TIMEOUT=${XCHG_TEST_TIMEOUT:-180}
ONLY=${XCHG_TEST_ONLY:-}
PIECE=${XCHG_TEST_PIECE:-4096} # message size above which the library of 30-split.sh splits
# shellcheck disable=SC2034 # fuzz.sh uses it (read here: the XCHG_* variables are unset below)
FUZZ_TIMEOUT=${XCHG_TEST_FUZZ_TIMEOUT:-900}
MAX_TIMEOUTS=3 # after this many timed-out launches the rest are not started (a hanging library)
NPROC=$(nproc)

# bash's [[ =~ ]] answers 2 for a malformed expression.
[[ "" =~ $ONLY ]]
if [ $? -eq 2 ]; then
    echo "run_tests.sh: XCHG_TEST_ONLY='$ONLY' is not an extended regular expression" >&2
    exit 2
fi
if ! [[ $PIECE =~ ^[1-9][0-9]*$ ]]; then
    echo "run_tests.sh: XCHG_TEST_PIECE must be a number of bytes, not '$PIECE'" >&2
    exit 2
fi

# The caller's XCHG_* settings must not leak into the cases (XCHG_TEST_* are read above).
for var in $(compgen -e); do
    case $var in XCHG_*) unset "$var" ;; esac
done
# No case reads or writes the user's cache of tables (shim/cache.c): a verdict cached by one case
# would change what the next one runs. The cache's own cases give it a directory of their own.
export XCHG_CACHE=0

rm -rf "$LOGS"
mkdir -p "$LOGS"
npassed=0
nfailed=0
nskipped=0
suite_start=$(date +%s.%N)

# ---- reporting ----

elapsed_since() {
    awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

pass() { # NAME START
    npassed=$((npassed + 1))
    echo "PASS $1 ($(elapsed_since "$2") s)"
}

fail() { # NAME WHY [LOG]
    nfailed=$((nfailed + 1))
    echo "FAIL $1: $2"
    if [ $# -ge 3 ] && [ -f "$3" ]; then
        echo "    log: $3 (last lines below)"
        tail -n 25 "$3" | sed 's/^/    | /'
    fi
}

skip() { # NAME WHY
    nskipped=$((nskipped + 1))
    echo "SKIP $1: $2"
}

# begin_case NAME: whether the case is to run (its name matches XCHG_TEST_ONLY); when it is,
# sets log (its log file) and start. Every case starts with it: `begin_case "$name" || continue`.
nleft_out=0
nbegun=0
# verdict NAME LOG WHY: pass the case when WHY is empty, else fail it with WHY
verdict() {
    if [ -z "$3" ]; then pass "$1" "$start"; else fail "$1" "$3" "$2"; fi
}

begin_case() {
    if [ -n "$ONLY" ] && ! [[ $1 =~ $ONLY ]]; then
        nleft_out=$((nleft_out + 1))
        return 1
    fi
    nbegun=$((nbegun + 1))
    log=$(log_for "$1")
    start=$(date +%s.%N)
}

# ---- launching ----

# A log file name from a case name.
log_for() {
    echo "$LOGS/$(echo "$1" | tr -c 'A-Za-z0-9=.,:_-' '_' | cut -c1-180).log"
}

# run_logged LOG CMD...: no standard input, output to LOG, under the time limit. Once
# MAX_TIMEOUTS launches have timed out, nothing more is started (status 125), so that a library
# that hangs fails the suite in minutes rather than hours.
ntimeouts=0
run_logged() {
    local log=$1 rc
    shift
    if [ $ntimeouts -ge $MAX_TIMEOUTS ]; then
        echo "not started: $ntimeouts launches have timed out already" >"$log"
        return 125
    fi
    timeout -k 10 "$TIMEOUT" "$@" </dev/null >"$log" 2>&1
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        ntimeouts=$((ntimeouts + 1))
    fi
    return $rc
}

# Why a launch with exit status RC failed, in words.
rc_reason() {
    case $1 in
    124 | 137) echo "timed out after $TIMEOUT s" ;;
    125) echo "not started: $MAX_TIMEOUTS launches have timed out already" ;;
    *) echo "exit status $1" ;;
    esac
}

# The MPI's own launcher, for native runs of N ranks (as xchgrun does for Open MPI).
native_launcher() { # N
    if [ "$MPI" = mpich ]; then
        echo mpiexec.mpich -n "$1"
    else
        local opts="-n $1"
        [ "$(id -u)" -eq 0 ] && opts="--allow-run-as-root $opts"
        [ "$1" -gt "$NPROC" ] && opts="--oversubscribe --mca mpi_yield_when_idle 1 $opts"
        echo "mpirun.openmpi $opts"
    fi
}

# preloaded LOG N [VAR=VALUE...] -- PROGRAM [ARGS]: the library preloaded through xchgrun.
preloaded() {
    local log=$1 n=$2
    shift 2
    local vars=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    run_logged "$log" env "${vars[@]}" XCHG_LIB="$LIB" "$root/scripts/xchgrun" \
        --mpi="$MPI" -n "$n" "$@"
}

# native LOG N [VAR=VALUE...] -- PROGRAM [ARGS]: no library.
native() {
    local log=$1 n=$2
    shift 2
    local vars=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    # shellcheck disable=SC2046
    run_logged "$log" env "${vars[@]}" $(native_launcher "$n") "$@"
}

# ---- checking a log ----

# The program's summary "PROG: N checks, M failed[, K skipped]": prints pass, fail, skip or
# missing.
summary_status() { # LOG PROG
    local line
    line=$(grep -aoE "$2: [0-9]+ checks, [0-9]+ failed(, [0-9]+ skipped)?" "$1" | tail -n 1)
    if [ -z "$line" ]; then
        echo missing
        return
    fi
    local checks failed skipped
    checks=$(echo "$line" | sed -E 's/.*: ([0-9]+) checks.*/\1/')
    failed=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    skipped=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    if [ "$failed" != 0 ]; then
        echo fail
    elif [ -n "$skipped" ] && [ "$skipped" != 0 ]; then
        echo skip
    elif [ "$checks" = 0 ]; then
        echo fail
    else
        echo pass
    fi
}

# The XCHG_STATS lines of COLL in LOG: "xchg: COLL NAME [params] calls=N ...".
stats_lines() { # LOG COLL
    grep -aE "^xchg: $2 [a-z0-9_]+ \[[^]]*\] calls=" "$1"
}

# Is LINE (a stats line) SPEC's: NAME, and every KEY=VALUE of the spec among its parameters?
line_is_spec() { # LINE SPEC
    local name=${2%%:*} params="" bracket item items
    [[ $2 == *:* ]] && params=${2#*:}
    [[ $1 =~ ^xchg:\ [a-z]+\ $name\ \[ ]] || return 1
    bracket=${1#*\[}
    bracket=",${bracket%%\]*},"
    IFS=',:' read -ra items <<<"$params"
    for item in "${items[@]}"; do
        [ -z "$item" ] && continue
        [[ $bracket == *",$item,"* ]] || return 1
    done
    return 0
}

# Did SPEC (NAME[:KEY=VALUE,...]) of COLL run? Some stats line of COLL must be SPEC's.
stats_has() { # LOG COLL SPEC
    local line
    while IFS= read -r line; do
        line_is_spec "$line" "$3" && return 0
    done < <(stats_lines "$1" "$2")
    return 1
}

# The largest max_block of the stats lines of COLL that are SPEC's (0 without any).
stats_max_block() { # LOG COLL SPEC
    local line max=0 block
    while IFS= read -r line; do
        line_is_spec "$line" "$3" || continue
        block=$(echo "$line" | sed -nE 's/.* max_block=([0-9]+) .*/\1/p')
        [ -n "$block" ] && [ "$block" -gt "$max" ] && max=$block
    done < <(stats_lines "$1" "$2")
    echo "$max"
}

# as_run SPEC P: the parameters with which a forced SPEC runs on P ranks, as the stats show
# them. A value the communicator cannot use is clamped to what runs (tuning/cost_*.c return
# the parameters as they run): pairwise's and circulant's k to 1 .. P-1, radix's r to 2 .. P
# and then its k to 1 .. r-1 (a radix k without r is left as given: the model picks r). The
# launches force the spec as written, so that clamping is exercised too.
as_run() { # SPEC P
    local spec=$1 p=$2 name items item r="" k="" rest=""
    name=${spec%%:*}
    case $name in pairwise | circulant | radix) ;; *)
        echo "$spec"
        return
        ;;
    esac
    [[ $spec == *:* ]] && IFS=',:' read -ra items <<<"${spec#*:}" || items=()
    for item in "${items[@]}"; do
        case $item in
        r=[0-9]*) r=${item#r=} ;;
        k=[0-9]*) k=${item#k=} ;;
        ?*) rest="$rest,$item" ;;
        esac
    done
    if [ -n "$r" ]; then
        [ "$r" -gt "$p" ] && r=$p
        [ "$r" -lt 2 ] && r=2
        rest="$rest,r=$r"
    fi
    if [ -n "$k" ]; then
        if [ "$name" = radix ]; then
            [ -n "$r" ] && [ "$k" -gt $((r - 1)) ] && k=$((r - 1))
        elif [ "$k" -gt $((p - 1)) ]; then
            k=$((p - 1))
        fi
        [ "$k" -lt 1 ] && k=1
        rest="$rest,k=$k"
    fi
    echo "$name${rest:+:${rest#,}}"
}

# The first "xchg: strict:" line of LOG (XCHG_STRICT=1: a forced algorithm could not serve a
# call, or an alltoallv carried statistics that an agreement contradicts; the call then
# failed); status 1 when there is none. Anywhere in a line, in case the
# ranks' output interleaves.
strict_line() { # LOG
    grep -a -m 1 'xchg: strict:' "$1"
}

# A passing case whose LOG shows that most communicators did not take a kept segment (rank 0's
# XCHG_STATS line at MPI_Finalize: segments made, and taken from the pool, shim/shm.c) fails:
# at least 100 taken and fewer made than taken (sets outcome and why).
kept_segments_check() { # LOG
    local counts made adopted
    counts=$(sed -n 's/^xchg: at MPI_Finalize .* made \([0-9]*\) shared segments and took \([0-9]*\) kept.*/\1 \2/p' "$1")
    read -r made adopted <<<"${counts:-x x}"
    if [ "$outcome" = pass ] && ! { [ "$adopted" -ge 100 ] && [ "$made" -lt "$adopted" ]; } \
        2>/dev/null; then
        outcome=fail
        why="expected most communicators to take a kept segment: '${counts:-no line}' (made, taken)"
    fi
}

# Check a launch of PROG: no strict refusal, exit status, summary line, no configuration
# complaints, and the stats of every forced "COLL=SPEC" (SPEC as it runs: as_run). Sets why
# (empty when it passed) and outcome.
check_launch() { # RC LOG PROG [COLL=SPEC...]
    local rc=$1 log=$2 prog=$3 status pair coll spec line
    shift 3
    why=""
    outcome=fail
    status=$(summary_status "$log" "$prog")
    if line=$(strict_line "$log"); then
        why="a check of XCHG_STRICT=1 failed: $line"
    elif [ "$rc" -ge 124 ] && [ "$rc" -le 125 ] || [ "$rc" -eq 137 ]; then
        why=$(rc_reason "$rc")
    elif [ "$status" = missing ]; then
        why="no '$prog: N checks, M failed' line (exit status $rc)"
    elif [ "$status" = fail ]; then
        why="checks failed (exit status $rc)"
    elif [ "$rc" -ne 0 ]; then
        why="exit status $rc"
    elif grep -aqE '^xchg: XCHG_' "$log"; then
        why="the library complained about the configuration: $(grep -aE '^xchg: XCHG_' "$log" | head -n 1)"
    else
        for pair in "$@"; do
            coll=${pair%%=*}
            spec=${pair#*=}
            [ "$spec" = auto ] && continue
            if ! stats_has "$log" "$coll" "$spec"; then
                why="forced $coll to ${spec%%:*}, but no 'xchg: $coll ${spec%%:*} [...]' stats line has the parameters '${spec#"${spec%%:*}"}': it did not run as forced"
                return
            fi
        done
        outcome=$status
    fi
}

report_launch() { # NAME START LOG
    case $outcome in
    pass) pass "$1" "$2" ;;
    skip) skip "$1" "$(grep -a 'SKIP' "$3" | head -n 1)" ;;
    *) fail "$1" "$why" "$3" ;;
    esac
}

# ---- the cases: scripts/cases/*.sh, in name order ----

if [ ! -f "$LIB" ]; then
    fail "library" "$LIB is not built"
fi
for f in scripts/cases/*.sh; do
    # shellcheck source=/dev/null
    [ -f "$f" ] && source "$f"
done

echo "suite time: $(elapsed_since "$suite_start") s ($MPI, $BUILD, logs in $LOGS)"
if [ -n "$ONLY" ]; then
    echo "XCHG_TEST_ONLY='$ONLY': $nbegun cases run, $nleft_out left out"
    if [ $nbegun -eq 0 ]; then
        fail "XCHG_TEST_ONLY" "'$ONLY' matches no case"
    fi
fi
if [ $nskipped -gt 0 ]; then
    echo "$npassed passed, $nfailed failed, $nskipped skipped"
else
    echo "$npassed passed, $nfailed failed"
fi
[ $nfailed -eq 0 ]
