/*
 * table_parse.c: the tuning table in memory: its text parsed into rules, the machine line and
 * native's cost curves; the rule for a call looked up; a curve read between its points. Pure
 * C, no MPI calls.
 *
 * docs/tuning-table.md is the one description of the format (versions 1 and 2: the version
 * line, the machine line, native's cost curves, the rules, lookup, what is reported and
 * skipped); this file follows it (table_load.c reads a table from a file, table_write.c writes
 * one). What the code adds to that description:
 *  - xchg_table_parse handles one line at a time (parse_version, parse_machine, parse_native,
 *    parse_rule); a bad line is reported through the caller's report function with its line
 *    number and the reason, quoting at most XCHG_QUOTE_MAX characters of it, and skipped. It
 *    returns the first bad line number, 0 when every line was good, and -1 when there is no
 *    version line at all (reported as a problem of the whole file, line 0; the table stays
 *    empty), so that a caller and a test can tell the three apart.
 *  - A rule's algorithm is looked up in the registry (tuning/registry.c) by name; a name it
 *    does not know is reported and the rule skipped, so that a table written by a newer xchg
 *    still loads.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "size.h"
#include "table.h"
#include "table_internal.h"

/* more than any valid line has (a native line: 3 + its points), to report "too many" */
#define TABLE_MAX_FIELDS (3 + XCHG_NATIVE_MAX_POINTS + 1)

const char *const xchg_table_machine_keys[M_NKEYS] = {
    "beta",      "tau",       "rho",          "port_share", "beta_inter", "tau_inter",
    "inject",    "sync",      "gap_inter",    "tau_large",  "large_from", "rho_cached",
    "cached_bytes"};

void xchg_table_report_line(parse_state_t *st, int line, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (st->first_bad == 0)
        st->first_bad = line;
    if (st->report)
        st->report(st->arg, line, message);
}

/* "N", "N-M", "N-*" or "*" into [lo, hi] with min_value <= lo <= hi <= max_value; "*" as
 * the upper end means max_value; what names the range in messages ("communicator-size",
 * "byte", "nodes="). Returns 0, or -1 with why filled. */
static int parse_range(const char *text, const char *what, int suffixes, uint64_t min_value,
                       uint64_t max_value, uint64_t *lo, uint64_t *hi, char *why, size_t whylen)
{
    const char *forms =
        suffixes ? "N, N-M, N-* or *, where N may end in K, M or G" : "N, N-M, N-* or *";
    const char *dash = strchr(text, '-');
    const char *end = text + strlen(text);

    if (strcmp(text, "*") == 0) {
        *lo = min_value;
        *hi = max_value;
        return 0;
    }
    if (xchg_parse_number(text, dash ? dash : end, suffixes, lo) != 0 ||
        (dash && strcmp(dash + 1, "*") != 0 &&
         xchg_parse_number(dash + 1, end, suffixes, hi) != 0)) {
        snprintf(why, whylen, "bad %s range '%.*s%s' (expected %s)", what, XCHG_QUOTE(text), forms);
        return -1;
    }
    if (!dash)
        *hi = *lo;
    else if (strcmp(dash + 1, "*") == 0)
        *hi = max_value;
    if (*lo < min_value) {
        snprintf(why, whylen, "bad %s range '%.*s%s' (%s start at %llu)", what, XCHG_QUOTE(text),
                 strcmp(what, "nodes=") == 0 ? "node counts" : "sizes",
                 (unsigned long long)min_value);
        return -1;
    }
    if (*lo > max_value || *hi > max_value) {
        snprintf(why, whylen, "bad %s range '%.*s%s' (numbers go up to %llu)", what,
                 XCHG_QUOTE(text), (unsigned long long)max_value);
        return -1;
    }
    if (*lo > *hi) {
        snprintf(why, whylen, "%s range '%.*s%s' is reversed (%llu > %llu)", what, XCHG_QUOTE(text),
                 (unsigned long long)*lo, (unsigned long long)*hi);
        return -1;
    }
    return 0;
}

/* Split line (modified in place) into at most max fields; returns the number of fields, or
 * max + 1 when there are more. */
static int split_fields(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v')
            p++;
        if (*p == '\0')
            return n;
        if (n == max)
            return max + 1;
        fields[n++] = p;
        while (*p && !(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v'))
            p++;
        if (*p)
            *p++ = '\0';
    }
}

/* A version 2 item in a file: 1 when the file declares version 2, else 0 with the item
 * reported (the line is skipped, as an xchg that reads only version 1 would skip it). */
static int allowed_v2(parse_state_t *st, int line, const char *what)
{
    if (st->version >= 2)
        return 1;
    xchg_table_report_line(
        st, line, "%s needs 'xchg-tuning 2' (the file declares version 1); line skipped", what);
    return 0;
}
/* The whole of text as a number >= 0 in C notation into *value; 0, or -1. A number too small
 * for a double reads as strtod rounds it (a subnormal or 0: its ERANGE is not an error, or a
 * table whose writer printed a subnormal time would not read back); one too large is not
 * finite and refused. */
static int parse_nonnegative(const char *text, double *value)
{
    char *end;
    *value = strtod(text, &end);
    return text[0] != '\0' && *end == '\0' && isfinite(*value) && *value >= 0 ? 0 : -1;
}

/* One KEY=VALUE of the machine line into values[key]: a number >= 0, for inject a whole
 * number of messages. 0, or -1 reported. */
static int machine_value(parse_state_t *st, int line, int key, const char *text, double *value)
{
    uint64_t count;

    if (key == M_INJECT) {
        if (xchg_parse_number(text, text + strlen(text), 0, &count) == 0 && count <= INT_MAX) {
            *value = (double)count;
            return 0;
        }
        xchg_table_report_line(
            st, line,
            "machine line: bad value inject=%.*s%s (expected a whole number of messages "
            "from 0 to %d); line skipped",
            XCHG_QUOTE(text), INT_MAX);
        return -1;
    }
    if (parse_nonnegative(text, value) != 0) {
        xchg_table_report_line(
            st, line, "machine line: bad value %s=%.*s%s (expected a number >= 0); line skipped",
            xchg_table_machine_keys[key], XCHG_QUOTE(text));
        return -1;
    }
    return 0;
}

static void parse_machine(parse_state_t *st, int line, char **fields, int nfields)
{
    double values[M_NKEYS] = {0};
    int seen[M_NKEYS] = {0};
    xchg_machine_t *machine = &st->table->machine;

    if (st->machine_line) {
        xchg_table_report_line(st, line,
                               "second machine line (the one of line %d is used); line skipped",
                               st->machine_line);
        return;
    }
    if (nfields > 1 + M_NKEYS) {
        xchg_table_report_line(
            st, line,
            "machine line has too many fields (expected machine beta=B tau=T rho=R "
            "port_share=S, in version 2 also beta_inter=B tau_inter=T inject=N sync=S "
            "gap_inter=G tau_large=T large_from=BYTES rho_cached=R cached_bytes=BYTES); line "
            "skipped");
        return;
    }
    for (int f = 1; f < nfields; f++) {
        char *eq = strchr(fields[f], '=');
        int key = -1;
        if (eq) {
            *eq = '\0';
            for (int k = 0; k < M_NKEYS; k++)
                if (strcmp(fields[f], xchg_table_machine_keys[k]) == 0)
                    key = k;
        }
        if (key < 0) {
            xchg_table_report_line(
                st, line,
                "machine line: '%.*s%s' is not one of beta=, tau=, rho=, port_share=, "
                "beta_inter=, tau_inter=, inject=, sync=, gap_inter=, tau_large=, large_from=, "
                "rho_cached=, cached_bytes=; line skipped",
                XCHG_QUOTE(fields[f]));
            return;
        }
        if (seen[key]) {
            xchg_table_report_line(st, line, "machine line gives %s twice; line skipped",
                                   xchg_table_machine_keys[key]);
            return;
        }
        if (key > M_PORT_SHARE) {
            char what[48];
            snprintf(what, sizeof what, "machine line: %s=", xchg_table_machine_keys[key]);
            if (!allowed_v2(st, line, what))
                return;
        }
        if (machine_value(st, line, key, eq + 1, &values[key]) != 0)
            return;
        seen[key] = 1;
    }
    for (int k = 0; k <= M_PORT_SHARE; k++)
        if (!seen[k]) {
            xchg_table_report_line(st, line,
                                   "machine line lacks %s= (it needs beta, tau, rho and "
                                   "port_share); line skipped",
                                   xchg_table_machine_keys[k]);
            return;
        }
    machine->beta = values[M_BETA];
    machine->tau = values[M_TAU];
    machine->rho = values[M_RHO];
    machine->port_share = values[M_PORT_SHARE];
    machine->beta_inter = values[M_BETA_INTER];
    machine->tau_inter = values[M_TAU_INTER];
    machine->inject = (int)values[M_INJECT];
    machine->sync = values[M_SYNC];
    machine->gap_inter = values[M_GAP_INTER];
    machine->tau_large = values[M_TAU_LARGE];
    machine->large_from = values[M_LARGE_FROM];
    machine->rho_cached = values[M_RHO_CACHED];
    machine->cached_bytes = values[M_CACHED_BYTES];
    st->table->has_machine = 1;
    st->machine_line = line;
}

static int find_coll(const char *name)
{
    for (int c = 0; c < XCHG_NCOLLS; c++)
        if (strcmp(name, xchg_coll_name(c)) == 0)
            return c;
    return -1;
}

/* 1 when the name of spec (NAME[:KEY=VALUE,...]) is one of coll's algorithms; else 0,
 * reported with the known names (a table written by a newer xchg may name more). */
static int known_algorithm(parse_state_t *st, int line, int coll, const char *spec)
{
    char name[128], names[256];
    size_t name_len = strcspn(spec, ":"), used = 0;

    if (name_len >= sizeof name)
        name_len = sizeof name - 1;
    memcpy(name, spec, name_len);
    name[name_len] = '\0';
    if (xchg_algo_find(coll, name) >= 0)
        return 1;
    names[0] = '\0';
    for (int i = 0; i < xchg_nalgos && used < sizeof names; i++)
        if (xchg_algos[i].coll == coll)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                     xchg_algos[i].name);
    xchg_table_report_line(st, line, "unknown algorithm '%.*s%s' for %s (known: %s); rule skipped",
                           XCHG_QUOTE(name), xchg_coll_name(coll), names);
    return 0;
}

/* 1 when text is a nodes= field. */
static int is_nodes(const char *text)
{
    return strncmp(text, "nodes=", 6) == 0;
}

/* The rule's fields hold COLLECTIVE PROCS [nodes=N] BYTES ALGORITHM; 0, or -1 reported. */
static int rule_shape(parse_state_t *st, int line, char **fields, int nfields, int *has_nodes)
{
    *has_nodes = nfields >= 3 && is_nodes(fields[2]);
    for (int f = 0; f < nfields && f < 5; f++)
        if (f != 2 && is_nodes(fields[f])) {
            xchg_table_report_line(
                st, line,
                "%s rule: '%.*s%s' is out of place (nodes= comes right after PROCS: "
                "COLLECTIVE PROCS nodes=N BYTES ALGORITHM); line skipped",
                fields[0], XCHG_QUOTE(fields[f]));
            return -1;
        }
    if (nfields != 4 + *has_nodes) {
        xchg_table_report_line(st, line,
                               "%s rule has %s fields (expected COLLECTIVE PROCS [nodes=N] BYTES "
                               "ALGORITHM[:KEY=VALUE,...]); line skipped",
                               fields[0], nfields < 4 + *has_nodes ? "too few" : "too many");
        return -1;
    }
    return *has_nodes && !allowed_v2(st, line, "nodes=") ? -1 : 0;
}

static void parse_rule(parse_state_t *st, int line, char **fields, int nfields)
{
    xchg_rule_t rule;
    uint64_t lo, hi;
    char why[384];
    int has_nodes;

    memset(&rule, 0, sizeof rule);
    rule.line = line;
    rule.coll = find_coll(fields[0]);
    if (rule.coll < 0) {
        xchg_table_report_line(st, line,
                               "unknown collective '%.*s%s' (expected alltoall, allgather or "
                               "alltoallv, or the keyword machine or native); line skipped",
                               XCHG_QUOTE(fields[0]));
        return;
    }
    if (rule_shape(st, line, fields, nfields, &has_nodes) != 0)
        return;

    /* communicator sizes, nodes (version 2) and size keys */
    if (parse_range(fields[1], "communicator-size", 0, 1, INT_MAX, &lo, &hi, why, sizeof why) !=
        0) {
        xchg_table_report_line(st, line, "%s; line skipped", why);
        return;
    }
    rule.pmin = (int)lo;
    rule.pmax = (int)hi;
    if (has_nodes) {
        if (parse_range(fields[2] + 6, "nodes=", 0, 1, INT_MAX, &lo, &hi, why, sizeof why) != 0) {
            xchg_table_report_line(st, line, "%s; line skipped", why);
            return;
        }
        rule.nmin = (int)lo;
        rule.nmax = (int)hi;
    }
    if (parse_range(fields[2 + has_nodes], "byte", 1, 0, SIZE_MAX, &lo, &hi, why, sizeof why) !=
        0) {
        xchg_table_report_line(st, line, "%s; line skipped", why);
        return;
    }
    rule.bmin = (size_t)lo;
    rule.bmax = (size_t)hi;

    /* algorithm: an unknown name is told apart from bad parameters of a known one */
    if (!known_algorithm(st, line, rule.coll, fields[3 + has_nodes]))
        return;
    if (xchg_spec_parse(rule.coll, fields[3 + has_nodes], &rule.algo, &rule.params, why,
                        sizeof why) != 0) {
        xchg_table_report_line(st, line, "bad parameters in '%.*s%s': %s; line skipped",
                               XCHG_QUOTE(fields[3 + has_nodes]), why);
        return;
    }

    if (st->table->nrules == st->rules_cap) {
        int cap = st->rules_cap ? 2 * st->rules_cap : 16;
        xchg_rule_t *rules = realloc(st->table->rules, (size_t)cap * sizeof *rules);
        if (!rules) {
            xchg_table_report_line(st, line, "out of memory for %d rules; line skipped", cap);
            return;
        }
        st->table->rules = rules;
        st->rules_cap = cap;
    }
    st->table->rules[st->table->nrules++] = rule;
}

/* One point BYTES:SECONDS of a native curve into *point; 0, or -1 with why filled. */
static int parse_point(const char *text, xchg_native_point_t *point, char *why, size_t whylen)
{
    const char *colon = strchr(text, ':');
    uint64_t bytes;
    double seconds;

    if (!colon) {
        snprintf(why, whylen, "bad point '%.*s%s' (expected BYTES:SECONDS, e.g. 64K:4.1e-05)",
                 XCHG_QUOTE(text));
        return -1;
    }
    if (xchg_parse_number(text, colon, 1, &bytes) != 0 || bytes > SIZE_MAX) {
        snprintf(why, whylen,
                 "bad block size in point '%.*s%s' (expected N:SECONDS, where N may end in K, "
                 "M or G)",
                 XCHG_QUOTE(text));
        return -1;
    }
    if (parse_nonnegative(colon + 1, &seconds) != 0) {
        snprintf(why, whylen, "bad time in point '%.*s%s' (expected seconds, a number >= 0)",
                 XCHG_QUOTE(text));
        return -1;
    }
    point->bytes = (size_t)bytes;
    point->seconds = seconds;
    return 0;
}

/* `native COLLECTIVE N BYTES:SECONDS ...`: the measured curve of the MPI library's own
 * collective on communicators of N ranks. */
static void parse_native(parse_state_t *st, int line, char **fields, int nfields)
{
    xchg_native_point_t points[XCHG_NATIVE_MAX_POINTS];
    const xchg_native_curve_t *earlier;
    uint64_t size;
    char why[384];
    int coll, npoints = nfields - 3;

    if (nfields < 4 || nfields > 3 + XCHG_NATIVE_MAX_POINTS) {
        xchg_table_report_line(
            st, line,
            "native line has %s (expected native COLLECTIVE PROCS BYTES:SECONDS ..., "
            "1 to %d points); line skipped",
            nfields < 4 ? "too few fields" : "too many points", XCHG_NATIVE_MAX_POINTS);
        return;
    }
    coll = find_coll(fields[1]);
    if (coll < 0) {
        xchg_table_report_line(
            st, line,
            "native curve: unknown collective '%.*s%s' (expected alltoall, allgather "
            "or alltoallv); line skipped",
            XCHG_QUOTE(fields[1]));
        return;
    }
    if (xchg_parse_number(fields[2], fields[2] + strlen(fields[2]), 0, &size) != 0 || size < 1 ||
        size > INT_MAX) {
        xchg_table_report_line(
            st, line,
            "native curve: bad communicator size '%.*s%s' (expected one number from 1 "
            "to %d: a curve is for one size); line skipped",
            XCHG_QUOTE(fields[2]), INT_MAX);
        return;
    }

    /* the points, block sizes strictly increasing */
    for (int i = 0; i < npoints; i++) {
        if (parse_point(fields[3 + i], &points[i], why, sizeof why) != 0) {
            xchg_table_report_line(st, line, "native curve: %s; line skipped", why);
            return;
        }
        if (i > 0 && points[i].bytes <= points[i - 1].bytes) {
            xchg_table_report_line(
                st, line,
                "native curve: point '%.*s%s' does not come after a smaller block size "
                "(%zu after %zu: block sizes must increase); line skipped",
                XCHG_QUOTE(fields[3 + i]), points[i].bytes, points[i - 1].bytes);
            return;
        }
    }

    earlier = xchg_native_curve_find(&st->table->native, coll, (int)size);
    if (earlier) {
        xchg_table_report_line(
            st, line,
            "second native curve for %s on %d ranks (the one of line %d is used); line "
            "skipped",
            xchg_coll_name(coll), (int)size, earlier->line);
        return;
    }
    if (st->table->native.ncurves == XCHG_NATIVE_MAX_CURVES) {
        xchg_table_report_line(st, line, "more than %d native curves; line skipped",
                               XCHG_NATIVE_MAX_CURVES);
        return;
    }
    if (xchg_native_curve_add(&st->table->native, coll, (int)size, points, npoints, line) != 0)
        xchg_table_report_line(st, line, "out of memory for a native curve; line skipped");
}

/* The version line, the first line that is not blank or a comment: 0 when it is
 * `xchg-tuning 1` or `xchg-tuning 2` (st->version set), else -1 (reported: the file means
 * nothing to this xchg). */
static int parse_version(parse_state_t *st, int line, char **fields, int nfields)
{
    if (strcmp(fields[0], "xchg-tuning") != 0) {
        xchg_table_report_line(st, line,
                               "missing version line: the first line must be 'xchg-tuning 1' or "
                               "'xchg-tuning %d'; file ignored",
                               XCHG_TABLE_VERSION);
        return -1;
    }
    if (nfields != 2 || (strcmp(fields[1], "1") != 0 && strcmp(fields[1], "2") != 0)) {
        xchg_table_report_line(
            st, line,
            "unsupported table version '%.*s%s' (this xchg reads 'xchg-tuning 1' and "
            "'xchg-tuning %d'); file ignored",
            XCHG_QUOTE(nfields >= 2 ? fields[1] : ""), XCHG_TABLE_VERSION);
        return -1;
    }
    st->version = fields[1][0] - '0';
    return 0;
}

int xchg_table_parse(const char *text, xchg_table_t *table, xchg_table_report_fn *report, void *arg)
{
    parse_state_t st = {table, report, arg, 0, 0, table->nrules, 0};
    int version_seen = 0;
    int line = 0;
    const char *p = text;

    while (*p) {
        size_t len = strcspn(p, "\n");
        char *buf = malloc(len + 1);
        char *fields[TABLE_MAX_FIELDS];
        char *hash;
        int nfields;

        /* one line, its comment cut off, split into fields */
        line++;
        if (!buf) {
            xchg_table_report_line(&st, line, "out of memory reading the line; line skipped");
            p += len + (p[len] == '\n');
            continue;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (p[len] == '\n');
        hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        nfields = split_fields(buf, fields, TABLE_MAX_FIELDS);

        /* the version line comes before anything else, or the file means nothing */
        if (nfields == 0) {
            /* blank or comment */
        } else if (!version_seen) {
            if (parse_version(&st, line, fields, nfields) != 0) {
                free(buf);
                return st.first_bad;
            }
            version_seen = 1;
        } else if (strcmp(fields[0], "xchg-tuning") == 0) {
            xchg_table_report_line(&st, line, "second version line; line skipped");
        } else if (strcmp(fields[0], "machine") == 0) {
            parse_machine(&st, line, fields, nfields);
        } else if (strcmp(fields[0], "native") == 0) {
            parse_native(&st, line, fields, nfields);
        } else {
            parse_rule(&st, line, fields, nfields);
        }
        free(buf);
    }
    if (!version_seen) {
        xchg_table_report_line(
            &st, 0,
            "no 'xchg-tuning 1' line (nor 'xchg-tuning %d': the file is empty or holds "
            "only blank lines and comments); file ignored",
            XCHG_TABLE_VERSION);
        return -1;
    }
    return st.first_bad;
}

const xchg_rule_t *xchg_table_lookup(const xchg_table_t *table, int coll, int comm_size, int nnodes,
                                     size_t size_key)
{
    for (int i = 0; i < table->nrules; i++) {
        const xchg_rule_t *rule = &table->rules[i];
        if (rule->coll == coll && rule->pmin <= comm_size && comm_size <= rule->pmax &&
            (rule->nmax == 0 || (rule->nmin <= nnodes && nnodes <= rule->nmax)) &&
            rule->bmin <= size_key && size_key <= rule->bmax)
            return rule;
    }
    return NULL;
}

/* The index of the curve of (coll, comm_size), -1 when there is none. */
static int curve_index(const xchg_native_curves_t *curves, int coll, int comm_size)
{
    for (int i = 0; curves && i < curves->ncurves; i++)
        if (curves->curves[i].coll == coll && curves->curves[i].comm_size == comm_size)
            return i;
    return -1;
}

const xchg_native_curve_t *xchg_native_curve_find(const xchg_native_curves_t *curves, int coll,
                                                  int comm_size)
{
    int i = curve_index(curves, coll, comm_size);
    return i < 0 ? NULL : &curves->curves[i];
}

/* The slope of the segment from a to b in seconds per byte; 0 when the two block sizes are
 * one double apart or less (sizes above 2^53), where the slope would be infinite. */
static double segment_slope(const xchg_native_point_t *a, const xchg_native_point_t *b)
{
    double width = (double)b->bytes - (double)a->bytes;
    return width > 0 ? (b->seconds - a->seconds) / width : 0.0;
}

double xchg_native_curve_at(const xchg_native_curve_t *curve, size_t size_key)
{
    const xchg_native_point_t *points = curve->points;
    int n = curve->npoints, i = 1;
    double x = (double)size_key, width, weight, lo, hi, value, slope;

    if (n == 1 || size_key <= points[0].bytes)
        return points[0].seconds;
    /* the segment whose right end is the first point at or above the key, else the last */
    while (i < n - 1 && points[i].bytes < size_key)
        i++;
    if (size_key <= points[i].bytes) {
        /* between its ends, weighted so that it never leaves them (a difference of times
         * scaled back would: 9.8e-6 falling to 4.1e-308 read -1.7e-21 at the point) */
        width = (double)points[i].bytes - (double)points[i - 1].bytes;
        if (!(width > 0))
            return points[i].seconds;
        weight = (x - (double)points[i - 1].bytes) / width;
        value = (1 - weight) * points[i - 1].seconds + weight * points[i].seconds;
        lo = fmin(points[i - 1].seconds, points[i].seconds);
        hi = fmax(points[i - 1].seconds, points[i].seconds);
        return value < lo ? lo : value > hi ? hi : value;
    }
    /* beyond the last point: the last segment's line, but never falling */
    slope = segment_slope(&points[n - 2], &points[n - 1]);
    return points[n - 1].seconds + (slope > 0 ? slope : 0.0) * (x - (double)points[n - 1].bytes);
}

int xchg_native_curve_add(xchg_native_curves_t *curves, int coll, int comm_size,
                          const xchg_native_point_t *points, int npoints, int line)
{
    int at = curve_index(curves, coll, comm_size);
    xchg_native_point_t *copy;

    /* a valid curve: increasing block sizes, finite non-negative times */
    if (npoints < 1 || npoints > XCHG_NATIVE_MAX_POINTS)
        return -1;
    for (int i = 0; i < npoints; i++)
        if (!isfinite(points[i].seconds) || points[i].seconds < 0 ||
            (i > 0 && points[i].bytes <= points[i - 1].bytes))
            return -1;

    /* its slot: the curve it replaces, or a new one at the end */
    if (at < 0 && curves->ncurves == XCHG_NATIVE_MAX_CURVES)
        return -1;
    if (at < 0 && curves->ncurves == curves->cap) {
        int cap = curves->cap ? 2 * curves->cap : 16;
        xchg_native_curve_t *grown = realloc(curves->curves, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        curves->curves = grown;
        curves->cap = cap;
    }
    copy = malloc((size_t)npoints * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, points, (size_t)npoints * sizeof *copy);
    if (at >= 0)
        free(curves->curves[at].points);
    else
        at = curves->ncurves++;
    curves->curves[at] = (xchg_native_curve_t){coll, comm_size, npoints, copy, line};
    return 0;
}

void xchg_table_free(xchg_table_t *table)
{
    free(table->rules);
    for (int i = 0; i < table->native.ncurves; i++)
        free(table->native.curves[i].points);
    free(table->native.curves);
    memset(table, 0, sizeof *table);
}
