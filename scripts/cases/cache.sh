# shellcheck shell=bash
# cache.sh: the per-user cache of tables (shim/cache.c), sourced by run_tests.sh (begin_case,
# preloaded, summary_status, pass, fail, $TESTS, $LOGS). Every case gives the cache a directory
# of its own under $LOGS (the suite runs with XCHG_CACHE=0 otherwise).
#  - learned, then read: learn_check at 2 ranks learns and writes the cache (a file of mode 0600
#    in a directory of mode 0700, made by xchg); a second run decides from it ("(cache FILE:N)")
#    and learns again fewer of the shapes the first learned than the first did;
#  - an unsettled round's verdict so far: learn_check with 8 calls per shape and every candidate
#    probed, so that rounds end cut short; each shape that never settled is in the cache with
#    one of its verdicts so far, and the second run takes it from there without probing it;
#  - refused directories: a symlink planted in place of the directory, and a directory writable
#    by others: reported by name, nothing written there, the program passes;
#  - bad files: a file cut at the end of a line (what is left parses: only the end line tells),
#    one cut inside a line, a foreign version, binary garbage and a symlink planted in place of
#    the file: each reported once by name and ignored as a whole (no decision from the cache),
#    the program passes;
#  - obeyed: a cache file whose rules name native for every MPI_Alltoall and the ring for every
#    MPI_Allgather of 2 ranks; the harness's XCHG_STATS lines (every call on a duplicate of the
#    world) must show only those (a cached verdict runs as it is, native included);
#  - two jobs finishing at once: both write the same file (each its own temporary file, then a
#    rename), and a third run reads it without a problem.

cache_prog=$TESTS/learn_check

# cache_run LOG DIR: learn_check at 2 ranks with the cache in DIR, verbose
cache_run() {
    preloaded "$1" 2 XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_CACHE="$2" -- "$cache_prog"
}

# cache_file LOG: the cache file the run named ("xchg: cache FILE: ...")
cache_file() {
    sed -n 's/^xchg: cache \(\/[^ ]*\.table\): .*/\1/p' "$1" | head -n 1
}

# learned_shapes LOG: the shapes a run learned ("xchg: learn SHAPE: ..."), sorted, once each
learned_shapes() {
    sed -n 's/^xchg: learn \([^:]*\):.*/\1/p' "$1" | sort -u
}

# cache_fails LOG: why the run did not pass (empty when it passed)
cache_fails() {
    local status
    status=$(summary_status "$1" learn_check)
    [ "$status" = pass ] || echo "the program did not pass (summary $status)"
}

if [ -x "$cache_prog" ]; then
    dir=$LOGS/cache-$MPI
    name="cache learned, then read"
    if begin_case "$name"; then
        rm -rf "$dir"
        cache_run "$log" "$dir"
        why=$(cache_fails "$log")
        file=$(cache_file "$log")
        first=$(grep -ac '^xchg: learn ' "$log")
        if [ -z "$why" ]; then
            if [ -z "$file" ] || [ ! -f "$file" ]; then
                why="no cache file written (verbose names '${file:-nothing}')"
            elif [ "$(stat -c %a "$file")" != 600 ] || [ "$(stat -c %a "$dir")" != 700 ]; then
                why="modes: file $(stat -c %a "$file") (want 600), directory $(stat -c %a "$dir") (want 700)"
            elif ! grep -qE '^(alltoall|allgather|alltoallv) +2 +nodes=1 ' "$file"; then
                why="the cache holds no learned rule for 2 ranks"
            else
                cp "$log" "$log.first"
                cache_run "$log" "$dir"
                why=$(cache_fails "$log")
                # the shapes the first run learned that the second learned again (a shape
                # the models were sure of in one run may be unsure in the other: the
                # constants are measured at each MPI_Init, so only these count)
                again=$(comm -12 <(learned_shapes "$log.first") <(learned_shapes "$log") |
                    grep -c .)
                if [ -z "$why" ] && ! grep -aqF "(cache $file:" "$log"; then
                    why="the second run decided nothing from the cache"
                elif [ -z "$why" ] && [ "$again" -ge "$first" ]; then
                    why="the second run learned again $again of the $first shapes the first learned: the cache saved nothing"
                fi
            fi
        fi
        verdict "$name" "$log" "$why"
    fi

    # A round the program ends before it settles: learn_check with 8 calls per shape and every
    # candidate probed (XCHG_TEST_PROBE_ALL=1), so that rounds of three or more candidates are
    # cut short after the models' choice and native. Such a shape ("so far" lines only, never a
    # "learn" line) must be in the cache with one of its verdicts so far, and the second run
    # must take it from the cache and probe it no more.
    name="cache keeps an unsettled round's verdict so far"
    if begin_case "$name"; then
        udir=$LOGS/cache-unsettled-$MPI
        rm -rf "$udir"
        unsettled_run() {
            preloaded "$1" 2 XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_CACHE="$udir" \
                XCHG_TEST_PROBE_ALL=1 -- "$cache_prog" 8
        }
        # verdict_lines LOG: "KIND COLLECTIVE P LOW ALGORITHM" for each "so far" or "learn" line,
        # LOW as the cache writes a size (4096: 4K)
        verdict_lines() {
            sed -nE 's/^xchg: (so far|learn) ([a-z]+) p=([0-9]+) block=([0-9]+)-[0-9]+:.* -> ([a-z0-9]+) .*/\1 \2 \3 \4 \5/p' "$1" |
                sed 's/^so far /so_far /' |
                awk '{ low = $4
                       if (low > 0 && low % 1048576 == 0) low = low / 1048576 "M"
                       else if (low > 0 && low % 1024 == 0) low = low / 1024 "K"
                       print $1, $2, $3, low, $5 }'
        }
        # unsettled_shapes LOG: "COLLECTIVE P LOW VERDICTS..." for each shape with only "so far" lines
        unsettled_shapes() {
            verdict_lines "$1" |
                awk '{ key = $2 " " $3 " " $4
                       if ($1 == "learn") settled[key] = 1; else seen[key] = seen[key] " " $5 }
                     END { for (k in seen) if (!(k in settled)) print k seen[k] }'
        }
        unsettled_run "$log"
        why=$(cache_fails "$log")
        file=$(cache_file "$log")
        shapes=$(unsettled_shapes "$log")
        if [ -z "$why" ] && [ -z "$shapes" ]; then
            why="every round settled within 8 calls (or none reached native): nothing to check"
        elif [ -z "$why" ] && { [ -z "$file" ] || [ ! -f "$file" ]; }; then
            why="no cache file written"
        fi
        while [ -z "$why" ] && read -r coll procs low verdicts; do
            rule=$(awk -v c="$coll" -v p="$procs" -v l="$low" \
                '$1 == c && $2 == p && ($4 == l || index($4, l "-") == 1) { print $5 }' "$file" | tail -n 1)
            if [ -z "$rule" ]; then
                why="no cache rule for $coll of $procs ranks from $low B, whose round did not settle"
            elif [[ " $verdicts " != *" ${rule%%:*} "* ]]; then
                why="the cache says $rule for $coll of $procs ranks from $low B; its verdicts were:$verdicts"
            fi
        done <<<"$shapes"
        if [ -z "$why" ]; then
            cp "$log" "$log.first"
            unsettled_run "$log"
            why=$(cache_fails "$log")
            probed=$(verdict_lines "$log" | awk '{ print $2, $3, $4 }')
            while [ -z "$why" ] && read -r coll procs low verdicts; do
                if grep -qxF "$coll $procs $low" <<<"$probed"; then
                    why="the second run probed $coll of $procs ranks from $low B again"
                fi
            done <<<"$shapes"
            if [ -z "$why" ] && ! grep -aqF "(cache $file:" "$log"; then
                why="the second run decided nothing from the cache"
            fi
        fi
        verdict "$name" "$log" "$why"
    fi

    name="cache refused: symlinked directory, directory writable by others"
    if begin_case "$name"; then
        why=""
        target=$LOGS/cache-target-$MPI
        rm -rf "$target" "$dir.link" "$dir.open"
        mkdir -m 700 "$target"
        ln -s "$target" "$dir.link"
        cache_run "$log" "$dir.link"
        if [ -n "$(cache_fails "$log")" ]; then
            why="symlink: $(cache_fails "$log")"
        elif ! grep -aq "cache directory $dir.link: not a directory of this user's alone" "$log"; then
            why="symlink: no report naming $dir.link"
        elif [ -n "$(ls -A "$target")" ]; then
            why="symlink: something was written through it: $(ls -A "$target")"
        fi
        mkdir -m 777 "$dir.open"
        chmod 777 "$dir.open"
        cache_run "$log.open" "$dir.open"
        if [ -z "$why" ] && [ -n "$(cache_fails "$log.open")" ]; then
            why="open directory: $(cache_fails "$log.open")"
        elif [ -z "$why" ] && ! grep -aq "cache directory $dir.open: not a directory of this user's alone" "$log.open"; then
            why="open directory: no report naming $dir.open"
        elif [ -z "$why" ] && [ -n "$(ls -A "$dir.open")" ]; then
            why="open directory: written to: $(ls -A "$dir.open")"
        fi
        cat "$log.open" >>"$log"
        verdict "$name" "$log" "$why"
    fi

    for bad in truncated midline foreign garbage symlink; do
        name="cache bad file: $bad"
        begin_case "$name" || continue
        bdir=$LOGS/cache-bad-$MPI
        rm -rf "$bdir"
        cache_run "$log" "$bdir" # writes a good file to spoil
        file=$(cache_file "$log")
        why=""
        if [ -z "$file" ] || [ ! -f "$file" ]; then
            verdict "$name" "$log" "the first run wrote no cache file"
            continue
        fi
        case $bad in
        # cut at the end of a line, two thirds in: what is left parses as a table
        truncated) head -c "$(($(stat -c %s "$file") * 2 / 3))" "$file" | sed '$d' >"$file.t" &&
            mv "$file.t" "$file" ;;
        midline) head -c "$(($(stat -c %s "$file") * 2 / 3))" "$file" >"$file.t" && mv "$file.t" "$file" ;;
        foreign) sed -i '1s/.*/xchg-tuning 99/' "$file" ;;
        garbage) head -c 3000 /dev/urandom >"$file" ;;
        symlink) rm -f "$file" && ln -s /etc/passwd "$file" ;;
        esac
        cache_run "$log" "$bdir"
        why=$(cache_fails "$log")
        reports=$(grep -ac "^xchg: cache $file" "$log")
        if [ -z "$why" ] && [ "$reports" -lt 1 ]; then
            why="no report naming $file"
        elif [ -z "$why" ] && grep -aqF "(cache $file:" "$log"; then
            why="a decision came from the spoilt file"
        elif [ -z "$why" ] && [ "$bad" = symlink ] && [ "$(stat -c %F /etc/passwd)" != "regular file" ]; then
            why="/etc/passwd was touched"
        fi
        verdict "$name" "$log" "$why"
    done

    name="cache obeyed: native and ring as cached"
    if begin_case "$name"; then
        odir=$LOGS/cache-obeyed-$MPI
        rm -rf "$odir"
        cache_run "$log" "$odir"
        file=$(cache_file "$log")
        why=""
        if [ -z "$file" ]; then
            why="the first run named no cache file"
        else
            printf 'xchg-tuning 2\nalltoall 2 nodes=1 * native\nallgather 2 nodes=1 * ring\n' >"$file"
            printf '# end: %d bytes above\n' "$(stat -c %s "$file")" >>"$file"
            # the harness: every call on a duplicate of the world, so every call has 2 ranks
            preloaded "$log" 2 XCHG_WAIT=yield XCHG_STATS=1 XCHG_CACHE="$odir" -- \
                "$build_dir/bench/harness" --short-calls 3 --steady-calls 20
            [ $? -eq 0 ] || why="the harness failed"
            others=$(grep -aE '^xchg: (alltoall|allgather) ' "$log" | grep -avE '^xchg: alltoall native |^xchg: allgather ring ' | head -n 1)
            if [ -z "$why" ] && [ -n "$others" ]; then
                why="a call ran what the cache does not name: $others"
            elif [ -z "$why" ] && ! grep -aq '^xchg: alltoall native ' "$log"; then
                why="no MPI_Alltoall ran native"
            fi
        fi
        verdict "$name" "$log" "$why"
    fi

    name="cache two jobs at once, then read"
    if begin_case "$name"; then
        cdir=$LOGS/cache-concurrent-$MPI
        rm -rf "$cdir"
        cache_run "$log.a" "$cdir" &
        cache_run "$log.b" "$cdir"
        wait
        why=""
        for l in "$log.a" "$log.b"; do
            [ -z "$why" ] && why=$(cache_fails "$l")
        done
        cat "$log.a" "$log.b" >"$log"
        cache_run "$log.c" "$cdir"
        cat "$log.c" >>"$log"
        file=$(cache_file "$log.c")
        if [ -z "$why" ] && [ -n "$(cache_fails "$log.c")" ]; then
            why="the third run: $(cache_fails "$log.c")"
        elif [ -z "$why" ] && grep -aq "^xchg: cache $file:[0-9]*:" "$log.c"; then
            why="the file the two jobs left has a problem: $(grep -a "^xchg: cache $file" "$log.c" | head -n 1)"
        elif [ -z "$why" ] && ! grep -aqF "(cache $file:" "$log.c"; then
            why="the third run decided nothing from the file the two jobs left"
        elif [ -z "$why" ] && ls "$cdir" | grep -q '\.tmp$'; then
            why="temporary files left: $(ls "$cdir")"
        fi
        verdict "$name" "$log" "$why"
    fi
else
    fail "cache" "$cache_prog is not built"
fi
