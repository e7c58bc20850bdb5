# shellcheck shell=bash
# docs.sh: the repository's text as a newcomer reads it, sourced by run_tests.sh (begin_case,
# pass, fail, skip, $MPI, $LOGS, $root). No MPI is started, so it runs once, in the MPICH suite.
#
#  - no path into the project's private paper folder (two dots, a slash, "shared"): papers are
#    cited by authors, title, year and section (docs/references.md lists them);
#  - no reference to a tracker's issue by number ("issue" and a number): the text says what is
#    meant;
#  - README.md at most DOCS_README_MAX lines (the rest belongs in docs/);
#  - every XCHG_ variable that the code reads is documented in README.md, and every one README.md
#    documents is read. Read: a C string literal that is exactly a variable's name ("XCHG_NAME",
#    as getenv, read_flag and the name tables of tuning/env.c take it) outside comments in shim/,
#    tuning/, tools/, algos/ and sim/; a shell expansion ($XCHG_NAME, ${XCHG_NAME...}) outside
#    comments in scripts/ (xchgrun, cluster, the test runner and its cases). Documented: a
#    table row of README.md whose first cell starts with a backquoted name ("| `XCHG_NAME`");
#    every backquoted XCHG_ name in that first cell counts, and a name that ends in * documents
#    every variable it is a prefix of (`XCHG_CLUSTER_*`).
# The searches cover the tracked files of a git checkout (git grep), else every file of the tree
# but build/ and .git. Each failure names every file:line (or variable and reading file); the
# case's log holds the whole list.

DOCS_README_MAX=350

# docs_grep REGEX: file:line:text of every line that matches the extended regular expression,
# case-insensitively, in the repository's text files.
docs_grep() {
    if [ "$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$root" && pwd -P)" ]; then
        git -C "$root" grep -n -I -i -E -e "$1" -- .
    else
        (cd "$root" && grep -r -n -I -i -E --exclude-dir=build --exclude-dir=.git -e "$1" . |
            sed 's|^\./||')
    fi
}

# docs_none NAME REGEX WHAT: pass when no line matches, else fail naming the first lines.
docs_none() {
    local name=$1 hits
    begin_case "$name" || return 0
    docs_grep "$2" >"$log"
    hits=$(wc -l <"$log")
    if [ "$hits" -eq 0 ]; then
        pass "$name" "$start"
    else
        fail "$name" "$hits lines with $3, e.g. $(cut -d: -f1,2 "$log" | head -n 8 | paste -sd ' ')" "$log"
    fi
}

# docs_vars_read: "NAME FILE" for every variable the code reads (see the header), sorted.
docs_vars_read() {
    (
        cd "$root" || exit
        find shim tuning tools algos sim -name '*.[ch]' -type f | sort | while read -r f; do
            sed -e 's|/\*.*\*/||g' -e 's|//.*||' -e '/^[[:space:]]*\(\*\|\/\*\)/d' "$f" |
                grep -oE '"XCHG_[A-Z0-9_]+"' | tr -d '"' | sed "s|\$| $f|"
        done
        find scripts -type f | sort | while read -r f; do
            sed -e '/^[[:space:]]*#/d' "$f" | grep -oE '\$\{?XCHG_[A-Z0-9_]+' |
                sed -e 's/^\${\{0,1\}//' -e "s|\$| $f|"
        done
    ) | sort -u
}

# docs_vars_documented: every XCHG_ name in the first cell of a README.md table row that starts
# with one, sorted.
# shellcheck disable=SC2016 # the backquotes are Markdown, not an expansion
docs_vars_documented() {
    grep -E '^\| *`XCHG_' "$root/README.md" | cut -d'|' -f2 | grep -oE '`XCHG_[A-Z0-9_]*\*?`' |
        tr -d '`' | sort -u
}

# docs_vars_problem READ DOCUMENTED: empty when both directions hold, else what is wrong, in one
# line naming every variable (and the files that read it).
docs_vars_problem() {
    awk -v docs="$2" '
        BEGIN { while ((getline line < docs) > 0) doc[++ndoc] = line }
        !($1 in files) { order[++n] = $1; files[$1] = $2; next }
        { files[$1] = files[$1] " " $2 }
        END {
            if (n < 10) { printf "only %d variable names found in the code: the search is broken", n; exit }
            for (i = 1; i <= n; i++) {
                found = 0
                for (j = 1; j <= ndoc; j++) {
                    d = doc[j]
                    if (d == order[i] || (d ~ /\*$/ && index(order[i], substr(d, 1, length(d) - 1)) == 1)) {
                        found = 1; used[d] = 1
                    }
                }
                if (!found) missing = missing (missing == "" ? "" : ", ") order[i] " (" files[order[i]] ")"
            }
            for (j = 1; j <= ndoc; j++)
                if (!(doc[j] in used)) unread = unread (unread == "" ? "" : ", ") doc[j]
            if (missing != "") out = "read but not documented in README.md: " missing
            if (unread != "") out = out (out == "" ? "" : "; ") "documented in README.md but read nowhere: " unread
            printf "%s", out
        }' "$1"
}

if [ "$MPI" != mpich ]; then
    name="docs (text checks)"
    begin_case "$name" && skip "$name" "run once, in the MPICH suite (no MPI is involved)"
else
    dots=..
    docs_none "docs: no $dots/shared paths" '\.\./shared' "a path into the paper folder"
    docs_none "docs: no issue numbers" 'issues?[[:space:]]+#?[0-9]' "an issue number"

    name="docs: README at most $DOCS_README_MAX lines"
    if begin_case "$name"; then
        lines=$(wc -l <"$root/README.md" 2>"$log")
        if [ -z "$lines" ]; then
            fail "$name" "README.md cannot be read" "$log"
        elif [ "$lines" -gt "$DOCS_README_MAX" ]; then
            fail "$name" "README.md has $lines lines, more than $DOCS_README_MAX"
        else
            pass "$name" "$start"
        fi
    fi

    name="docs: every XCHG_ variable read is documented, and the reverse"
    if begin_case "$name"; then
        docs_read=$LOGS/docs-vars-read.txt
        docs_documented=$LOGS/docs-vars-documented.txt
        docs_vars_read >"$docs_read"
        docs_vars_documented >"$docs_documented"
        why=$(docs_vars_problem "$docs_read" "$docs_documented")
        {
            echo "read (name, file):"
            sed 's/^/  /' "$docs_read"
            echo "documented in README.md:"
            sed 's/^/  /' "$docs_documented"
            echo "${why:-both directions hold}"
        } >"$log"
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    fi
fi
