/*
 * table_check.h: what the tuning-table harnesses (fuzz_table_parse.c, fuzz_table_load.c) check
 * on a parsed table, whatever the text was (tuning/table.h states each promise):
 *  - the return value and the reports agree: -1 and one report at line 0 when there is no
 *    version line, the first reported line otherwise (0: no report); reports come in line
 *    order, each one line of text under 300 characters that ends in "line skipped", "rule
 *    skipped" or "file ignored" (the reason was not cut off);
 *  - a file ignored as a whole (no or a bad version line) leaves the table empty;
 *  - every rule is well formed: a collective, its own algorithm's registry index, ranges that
 *    are not reversed, communicator sizes and node counts from 1, nodes= only in version 2,
 *    parameters that format (xchg_params_format) and parse again to the same values;
 *  - the machine line's constants are finite and >= 0, version 2's only in version 2;
 *    xchg_table_needs_v2 is never set by a version 1 file;
 *  - native curves: at most one per collective and size, 1 to XCHG_NATIVE_MAX_POINTS points,
 *    block sizes strictly increasing, times finite and >= 0; xchg_native_curve_find finds
 *    each; xchg_native_curve_at is >= 0 everywhere probed, finite up to the last point (not
 *    NaN beyond it), and at a point its time (up to rounding on the scale of its segment);
 *  - xchg_table_lookup is the first rule that covers the call, probed at and around every
 *    rule's range ends;
 *  - the table writes (xchg_table_write, with a comment taken from the input) into text that
 *    parses without a report to the same rules, machine line and curves, and writes again
 *    to the same text.
 */
#ifndef XCHG_FUZZ_TABLE_CHECK_H
#define XCHG_FUZZ_TABLE_CHECK_H

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tuning/registry.h"
#include "../../tuning/table.h"
#include "../../tuning/table_write.h"
#include "fuzz.h"

/* Every report of one parse, in order. */
typedef struct reports {
    int n, cap;
    int *line;
    char **message;
} reports_t;

static void collect_report(void *arg, int line, const char *message)
{
    reports_t *r = arg;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->line = realloc(r->line, (size_t)r->cap * sizeof *r->line);
        r->message = realloc(r->message, (size_t)r->cap * sizeof *r->message);
        if (!r->line || !r->message)
            abort();
    }
    r->line[r->n] = line;
    r->message[r->n] = strdup(message);
    if (!r->message[r->n])
        abort();
    r->n++;
}

static void free_reports(reports_t *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->message[i]);
    free(r->line);
    free(r->message);
    memset(r, 0, sizeof *r);
}

/* The lines of text as the parser counts them (the last one may lack its '\n'). */
static int count_lines(const char *text)
{
    int lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    return lines + (*text && text[strlen(text) - 1] != '\n');
}

/* The version the text declares: its first line that is not blank or a comment, when it is
 * exactly `xchg-tuning 1` or `xchg-tuning 2`; else 0. */
static int declared_version(const char *text)
{
    const char *blanks = " \t\r\f\v";
    int version = -1;
    for (const char *p = text; *p && version < 0; p += *p == '\n') {
        size_t len = strcspn(p, "#\n");
        char *line = strndup(p, len), *save = NULL, *first, *second;
        if (!line)
            abort();
        first = strtok_r(line, blanks, &save);
        second = first ? strtok_r(NULL, blanks, &save) : NULL;
        if (first)
            version = strcmp(first, "xchg-tuning") == 0 && second &&
                              !strtok_r(NULL, blanks, &save) &&
                              (strcmp(second, "1") == 0 || strcmp(second, "2") == 0)
                          ? second[0] - '0'
                          : 0;
        free(line);
        p += strcspn(p, "\n");
    }
    return version < 0 ? 0 : version;
}

static void check_reports(const char *text, int rc, const reports_t *r)
{
    int lines = count_lines(text);
    if (rc == -1)
        FUZZ_CHECK(r->n == 1 && r->line[0] == 0, "rc -1 with %d reports", r->n);
    else if (rc == 0)
        FUZZ_CHECK(r->n == 0, "rc 0 with %d reports, the first at line %d: %s", r->n, r->line[0],
                   r->message[0]);
    else
        FUZZ_CHECK(r->n > 0 && r->line[0] == rc, "rc %d, first report at line %d", rc,
                   r->n ? r->line[0] : -1);
    for (int i = 0; i < r->n; i++) {
        const char *m = r->message[i];
        FUZZ_CHECK(r->line[i] >= (rc == -1 ? 0 : 1) && r->line[i] <= lines &&
                       (i == 0 || r->line[i] >= r->line[i - 1]),
                   "report %d at line %d (%d lines, previous %d)", i, r->line[i], lines,
                   i ? r->line[i - 1] : 0);
        FUZZ_CHECK(strlen(m) < 300 && !strchr(m, '\n') &&
                       (fuzz_ends_with(m, "line skipped") || fuzz_ends_with(m, "rule skipped") ||
                        fuzz_ends_with(m, "file ignored")),
                   "line %d: message of %zu characters: '%s'", r->line[i], strlen(m), m);
    }
}

/* The parameters of a rule format and parse again to the same values. */
static void check_params(const xchg_rule_t *rule)
{
    const xchg_algo_t *algo = &xchg_algos[rule->algo];
    char text[256], formatted[128], err[512];
    xchg_params_t back;
    int index = -1;

    xchg_params_format(algo, &rule->params, formatted, sizeof formatted);
    snprintf(text, sizeof text, "%s%s%s", algo->name, formatted[0] ? ":" : "", formatted);
    FUZZ_CHECK(xchg_spec_parse(rule->coll, text, &index, &back, err, sizeof err) == 0 &&
                   index == rule->algo,
               "line %d: '%s' does not parse again: %s", rule->line, text, err);
    FUZZ_CHECK(memcmp(&back, &rule->params, sizeof back) == 0,
               "line %d: '%s' parses again to other parameters", rule->line, text);
}

static void check_rules(const xchg_table_t *table, int version, int lines)
{
    for (int i = 0; i < table->nrules; i++) {
        const xchg_rule_t *rule = &table->rules[i];
        FUZZ_CHECK(rule->coll >= 0 && rule->coll < XCHG_NCOLLS && rule->algo >= 0 &&
                       rule->algo < xchg_nalgos && xchg_algos[rule->algo].coll == rule->coll,
                   "rule %d (line %d): collective %d, algorithm %d", i, rule->line, rule->coll,
                   rule->algo);
        FUZZ_CHECK(rule->pmin >= 1 && rule->pmin <= rule->pmax && rule->bmin <= rule->bmax,
                   "rule %d (line %d): procs %d-%d, bytes %zu-%zu", i, rule->line, rule->pmin,
                   rule->pmax, rule->bmin, rule->bmax);
        FUZZ_CHECK((rule->nmin == 0 && rule->nmax == 0) ||
                       (version == 2 && rule->nmin >= 1 && rule->nmin <= rule->nmax),
                   "rule %d (line %d): nodes %d-%d in version %d", i, rule->line, rule->nmin,
                   rule->nmax, version);
        FUZZ_CHECK(rule->line >= 1 && rule->line <= lines &&
                       (i == 0 || rule->line > table->rules[i - 1].line),
                   "rule %d at line %d", i, rule->line);
        check_params(rule);
    }
}

static void check_machine(const xchg_table_t *table, int version)
{
    const xchg_machine_t *m = &table->machine;
    const double values[] = {m->beta, m->tau, m->rho, m->port_share, m->beta_inter, m->tau_inter};
    if (!table->has_machine)
        return;
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++)
        FUZZ_CHECK(isfinite(values[k]) && values[k] >= 0, "machine value %zu is %g", k, values[k]);
    FUZZ_CHECK(m->inject >= 0 && m->native == NULL && m->node_share == 0, "machine inject %d",
               m->inject);
    FUZZ_CHECK(version == 2 || (m->beta_inter == 0 && m->tau_inter == 0 && m->inject == 0),
               "version 2 constants in a version %d file", version);
}

/* curve_at at key: >= 0, finite up to the last point (beyond it the rising line may pass the
 * largest double: +inf, never NaN) */
static double check_curve_at(const xchg_native_curve_t *curve, size_t key)
{
    double t = xchg_native_curve_at(curve, key);
    int within = key <= curve->points[curve->npoints - 1].bytes;
    FUZZ_CHECK((within ? isfinite(t) : !isnan(t)) && t >= 0,
               "curve of %s on %d ranks (line %d) at %zu: %g", xchg_coll_name(curve->coll),
               curve->comm_size, curve->line, key, t);
    return t;
}

static void check_curves(const xchg_table_t *table)
{
    const xchg_native_curves_t *curves = &table->native;
    FUZZ_CHECK(curves->ncurves >= 0 && curves->ncurves <= XCHG_NATIVE_MAX_CURVES, "%d curves",
               curves->ncurves);
    for (int i = 0; i < curves->ncurves; i++) {
        const xchg_native_curve_t *c = &curves->curves[i];
        FUZZ_CHECK(c->coll >= 0 && c->coll < XCHG_NCOLLS && c->comm_size >= 1 && c->npoints >= 1 &&
                       c->npoints <= XCHG_NATIVE_MAX_POINTS,
                   "curve %d: collective %d, size %d, %d points", i, c->coll, c->comm_size,
                   c->npoints);
        FUZZ_CHECK(xchg_native_curve_find(curves, c->coll, c->comm_size) == c,
                   "curve %d is not the one found for its collective and size", i);
        for (int j = 0; j < c->npoints; j++) {
            const xchg_native_point_t *pt = &c->points[j];
            double at, scale;
            FUZZ_CHECK(isfinite(pt->seconds) && pt->seconds >= 0 &&
                           (j == 0 || pt->bytes > c->points[j - 1].bytes),
                       "curve %d point %d: %zu:%g", i, j, pt->bytes, pt->seconds);
            /* at a point its time, up to rounding on the scale of its segment */
            scale = j > 0 && c->points[j - 1].seconds > pt->seconds ? c->points[j - 1].seconds
                                                                    : pt->seconds;
            at = check_curve_at(c, pt->bytes);
            FUZZ_CHECK(fabs(at - pt->seconds) <= 1e-12 * scale,
                       "curve %d at its point %zu: %.17g, not %.17g", i, pt->bytes, at,
                       pt->seconds);
            if (pt->bytes > 0)
                check_curve_at(c, pt->bytes - 1);
            if (pt->bytes < SIZE_MAX)
                check_curve_at(c, pt->bytes + 1);
        }
        check_curve_at(c, 0);
        check_curve_at(c, SIZE_MAX);
    }
}

/* The first rule that covers the call, as xchg_table_lookup promises. */
static const xchg_rule_t *first_covering(const xchg_table_t *table, int coll, int p, int nnodes,
                                         size_t key)
{
    for (int i = 0; i < table->nrules; i++) {
        const xchg_rule_t *r = &table->rules[i];
        int nodes_match = r->nmax == 0 || (r->nmin <= nnodes && nnodes <= r->nmax);
        if (r->coll == coll && r->pmin <= p && p <= r->pmax && nodes_match && r->bmin <= key &&
            key <= r->bmax)
            return r;
    }
    return NULL;
}

/* Lookup at the ends of the first rules' ranges and one step beyond them. */
static void check_lookup(const xchg_table_t *table)
{
    for (int i = 0; i < table->nrules && i < 32; i++) {
        const xchg_rule_t *r = &table->rules[i];
        const int procs[] = {r->pmin, r->pmax, r->pmin > 1 ? r->pmin - 1 : 1,
                             r->pmax < INT_MAX ? r->pmax + 1 : INT_MAX};
        const int nodes[] = {1, r->nmin > 0 ? r->nmin : 2, r->nmax > 0 ? r->nmax : 3,
                             r->nmax > 0 && r->nmax < INT_MAX ? r->nmax + 1 : 4};
        const size_t keys[] = {r->bmin, r->bmax, r->bmin > 0 ? r->bmin - 1 : 0,
                               r->bmax < SIZE_MAX ? r->bmax + 1 : SIZE_MAX};
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int c = 0; c < 4; c++) {
                    const xchg_rule_t *got =
                        xchg_table_lookup(table, r->coll, procs[a], nodes[b], keys[c]);
                    const xchg_rule_t *want =
                        first_covering(table, r->coll, procs[a], nodes[b], keys[c]);
                    FUZZ_CHECK(got == want,
                               "lookup %s p=%d nodes=%d key=%zu: the rule of line %d, not %d",
                               xchg_coll_name(r->coll), procs[a], nodes[b], keys[c],
                               got ? got->line : 0, want ? want->line : 0);
                }
    }
}

/* 1 when two rules decide the same calls the same way (nodes=: no field and every layout are
 * the same thing, and the writer leaves the latter out). */
static int same_rule(const xchg_rule_t *a, const xchg_rule_t *b)
{
    int a_any = a->nmax == 0 || (a->nmin <= 1 && a->nmax == INT_MAX);
    int b_any = b->nmax == 0 || (b->nmin <= 1 && b->nmax == INT_MAX);
    /* the parameters as bytes: xchg_spec_parse zeroes them, padding included, before it
     * sets the keys given */
    return a->coll == b->coll && a->pmin == b->pmin && a->pmax == b->pmax && a->bmin == b->bmin &&
           a->bmax == b->bmax && a->algo == b->algo &&
           memcmp(&a->params, &b->params, sizeof a->params) == 0 &&
           (a_any ? b_any : a->nmin == b->nmin && a->nmax == b->nmax);
}

static int same_curves(const xchg_native_curves_t *a, const xchg_native_curves_t *b)
{
    if (a->ncurves != b->ncurves)
        return 0;
    for (int i = 0; i < a->ncurves; i++) {
        const xchg_native_curve_t *x = &a->curves[i], *y = &b->curves[i];
        if (x->coll != y->coll || x->comm_size != y->comm_size || x->npoints != y->npoints)
            return 0;
        for (int j = 0; j < x->npoints; j++)
            if (x->points[j].bytes != y->points[j].bytes ||
                x->points[j].seconds != y->points[j].seconds)
                return 0;
    }
    return 1;
}

static int same_machine(const xchg_table_t *a, const xchg_table_t *b)
{
    const xchg_machine_t *x = &a->machine, *y = &b->machine;
    return a->has_machine == b->has_machine &&
           (!a->has_machine || (x->beta == y->beta && x->tau == y->tau && x->rho == y->rho &&
                                x->port_share == y->port_share && x->beta_inter == y->beta_inter &&
                                x->tau_inter == y->tau_inter && x->inject == y->inject));
}

/* table written with comment into a new string (the caller frees it) */
static char *write_table(const xchg_table_t *table, const char *comment)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    int rc;
    if (!out)
        abort();
    rc = xchg_table_write(out, table, comment);
    FUZZ_CHECK(fclose(out) == 0 && rc == 0, "xchg_table_write failed");
    return text;
}

static void check_round_trip(const xchg_table_t *table, const char *comment)
{
    xchg_table_t back;
    reports_t reports = {0};
    char *text = write_table(table, comment), *again;
    int rc;

    memset(&back, 0, sizeof back);
    rc = xchg_table_parse(text, &back, collect_report, &reports);
    FUZZ_CHECK(rc == 0 && reports.n == 0,
               "the written table reads back with rc %d: line %d: %s\n%s", rc,
               reports.n ? reports.line[0] : 0, reports.n ? reports.message[0] : "", text);
    FUZZ_CHECK(back.nrules == table->nrules, "%d rules read back as %d\n%s", table->nrules,
               back.nrules, text);
    for (int i = 0; i < table->nrules; i++)
        FUZZ_CHECK(same_rule(&table->rules[i], &back.rules[i]),
                   "rule %d (line %d) reads back as another rule\n%s", i, table->rules[i].line,
                   text);
    FUZZ_CHECK(same_machine(table, &back), "the machine line reads back otherwise\n%s", text);
    FUZZ_CHECK(same_curves(&table->native, &back.native), "the curves read back otherwise\n%s",
               text);
    again = write_table(&back, comment);
    FUZZ_CHECK(strcmp(text, again) == 0, "written again, the table differs:\n%s---\n%s", text,
               again);
    free(again);
    free(text);
    free_reports(&reports);
    xchg_table_free(&back);
}

/* Everything above on table, parsed from text with return value rc and reports. */
static void check_table(const char *text, const xchg_table_t *table, int rc,
                        const reports_t *reports, const char *comment)
{
    int version = declared_version(text);

    check_reports(text, rc, reports);
    if (version == 0)
        FUZZ_CHECK(table->nrules == 0 && !table->has_machine && table->native.ncurves == 0,
                   "a file without a valid version line gave %d rules", table->nrules);
    check_rules(table, version, count_lines(text));
    check_machine(table, version);
    FUZZ_CHECK(version == 2 || !xchg_table_needs_v2(table), "a version %d file needs version 2",
               version);
    check_curves(table);
    check_lookup(table);
    check_round_trip(table, comment);
}

#endif
