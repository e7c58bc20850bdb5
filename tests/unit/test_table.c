/*
 * test_table.c: the tuning-table parser, lookup, file reader and writer (tuning/table_parse.c,
 * table_load.c, table_write.c), without MPI.
 * Valid files, every kind of bad line (each reported once with its line number and skipped),
 * the version line (and files without one), edge ranges, the first-bad-line return value,
 * first-match lookup, a writer -> parser round trip, huge bad lines (the message quotes a short
 * prefix and gives the reason), and loading: only regular text files of at most 4 MiB (a FIFO,
 * /dev/zero, a directory, a larger file and a file with a NUL byte are reported and ignored).
 * Only the baseline algorithms (native, pairwise, ring) are named, so the test does not depend
 * on which other algorithms are registered.
 * Native curves (`native COLLECTIVE N BYTES:SECONDS ...`): valid lines, every bad form, reading
 * the curve between and beyond its points, adding and replacing curves, the writer, and the
 * cost of native with and without a curve (tuning/cost_native.c).
 * Version 2: the machine line's beta_inter=, tau_inter=, inject=, sync= and gap_inter=, the
 * rules' nodes= field (valid forms, lookup by node count, every bad form, a huge bad value), each
 * of them reported and skipped in a version 1 file, and the writer (version 2 only when a table
 * needs it).
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tuning/cost.h"
#include "../../tuning/registry.h"
#include "../../tuning/table.h"
#include "../../tuning/table_write.h"

#include "unit.h"

/* Reports collected from the parser. */
#define MAX_REPORTS 16
typedef struct reports {
    int n;
    int line[MAX_REPORTS];
    char message[MAX_REPORTS][512];
} reports_t;

static void collect(void *arg, int line, const char *message)
{
    reports_t *r = arg;
    if (r->n < MAX_REPORTS) {
        r->line[r->n] = line;
        snprintf(r->message[r->n], sizeof r->message[0], "%s", message);
    }
    r->n++;
}

static int parse(const char *text, xchg_table_t *table, reports_t *reports)
{
    memset(table, 0, sizeof *table);
    memset(reports, 0, sizeof *reports);
    return xchg_table_parse(text, table, collect, reports);
}

static int algo(int coll, const char *name)
{
    int index = xchg_algo_find(coll, name);
    if (index < 0) {
        printf("test_table: the registry has no %s for %s\n", name, xchg_coll_name(coll));
        exit(2);
    }
    return index;
}

static void check_rule(const xchg_table_t *table, int i, int coll, int pmin, int pmax, size_t bmin,
                       size_t bmax, int algo_index, int nports, int line)
{
    const xchg_rule_t *r;
    CHECK(i < table->nrules, "rule %d exists (nrules %d)", i, table->nrules);
    if (i >= table->nrules)
        return;
    r = &table->rules[i];
    CHECK(r->coll == coll && r->pmin == pmin && r->pmax == pmax && r->bmin == bmin &&
              r->bmax == bmax && r->algo == algo_index && r->params.nports == nports &&
              r->params.radix == 0 && r->params.inner == NULL && r->line == line,
          "rule %d: expected coll %d procs %d-%d bytes %zu-%zu algo %d k=%d line %d, got coll %d "
          "procs %d-%d bytes %zu-%zu algo %d k=%d r=%d inner=%s line %d",
          i, coll, pmin, pmax, bmin, bmax, algo_index, nports, line, r->coll, r->pmin, r->pmax,
          r->bmin, r->bmax, r->algo, r->params.nports, r->params.radix,
          r->params.inner ? r->params.inner->name : "-", r->line);
}

static void test_valid(void)
{
    static const char text[] = "# a tuning table\n"
                               "\n"
                               "xchg-tuning 1   # version\n"
                               "# written by hand\n"
                               "machine beta=2.5e-06 tau=1e-10 rho=5.5e-11 port_share=0.75\n"
                               "alltoall   2-3   0-511    pairwise:k=2\n"
                               "alltoall\t4-*\t512-64K\tnative   # tabs and a trailing comment\n"
                               "allgather  *     *        ring\n"
                               "alltoallv  8     1k-2M    pairwise:k=1\r\n"
                               "alltoallv  9-16  1G-*     native\n"
                               "   \n"
                               "alltoall   5     7        pairwise";
    xchg_table_t table;
    reports_t reports;
    int rc = parse(text, &table, &reports);

    CHECK(rc == 0, "valid file: return value, expected 0, got %d", rc);
    CHECK(reports.n == 0, "valid file: expected no reports, got %d (first: line %d %s)", reports.n,
          reports.line[0], reports.message[0]);
    CHECK(table.nrules == 6, "valid file: expected 6 rules, got %d", table.nrules);
    CHECK(table.has_machine == 1, "valid file: has_machine expected 1, got %d", table.has_machine);
    CHECK(table.machine.beta == 2.5e-06 && table.machine.tau == 1e-10 &&
              table.machine.rho == 5.5e-11 && table.machine.port_share == 0.75,
          "machine line: expected 2.5e-06 1e-10 5.5e-11 0.75, got %g %g %g %g", table.machine.beta,
          table.machine.tau, table.machine.rho, table.machine.port_share);
    check_rule(&table, 0, XCHG_ALLTOALL, 2, 3, 0, 511, algo(XCHG_ALLTOALL, "pairwise"), 2, 6);
    check_rule(&table, 1, XCHG_ALLTOALL, 4, INT_MAX, 512, 65536, algo(XCHG_ALLTOALL, "native"), 0,
               7);
    check_rule(&table, 2, XCHG_ALLGATHER, 1, INT_MAX, 0, SIZE_MAX, algo(XCHG_ALLGATHER, "ring"), 0,
               8);
    check_rule(&table, 3, XCHG_ALLTOALLV, 8, 8, 1024, 2u << 20, algo(XCHG_ALLTOALLV, "pairwise"), 1,
               9);
    check_rule(&table, 4, XCHG_ALLTOALLV, 9, 16, (size_t)1 << 30, SIZE_MAX,
               algo(XCHG_ALLTOALLV, "native"), 0, 10);
    check_rule(&table, 5, XCHG_ALLTOALL, 5, 5, 7, 7, algo(XCHG_ALLTOALL, "pairwise"), 0, 12);
    xchg_table_free(&table);
    CHECK(table.nrules == 0 && table.rules == NULL && table.has_machine == 0,
          "free: expected an empty table, got nrules %d rules %p has_machine %d", table.nrules,
          (void *)table.rules, table.has_machine);

    /* a table without a machine line, and an empty one */
    rc = parse("xchg-tuning 1\nallgather 2 0 ring\n", &table, &reports);
    CHECK(rc == 0 && reports.n == 0 && table.nrules == 1 && table.has_machine == 0,
          "no machine line: expected rc 0, 0 reports, 1 rule, has_machine 0; got %d %d %d %d", rc,
          reports.n, table.nrules, table.has_machine);
    xchg_table_free(&table);
    rc = parse("xchg-tuning 1\n", &table, &reports);
    CHECK(rc == 0 && reports.n == 0 && table.nrules == 0,
          "version line only: expected rc 0, 0 reports, 0 rules; got %d %d %d", rc, reports.n,
          table.nrules);
    xchg_table_free(&table);
}

/* One bad line after the version line `xchg-tuning version`: reported once at line 2 with a
 * message containing want, skipped; the good rule on line 3 is still read. */
static void check_bad_line_in(int version, const char *bad, const char *want)
{
    char text[512];
    xchg_table_t table;
    reports_t reports;
    int rc;

    snprintf(text, sizeof text, "xchg-tuning %d\n%s\nallgather 2 0 ring\n", version, bad);
    rc = parse(text, &table, &reports);
    CHECK(rc == 2, "bad line '%s': return value, expected 2, got %d", bad, rc);
    CHECK(reports.n == 1 && reports.line[0] == 2,
          "bad line '%s': expected one report for line 2, got %d reports (first line %d)", bad,
          reports.n, reports.line[0]);
    CHECK(reports.n >= 1 && strstr(reports.message[0], want) != NULL &&
              strstr(reports.message[0], "skipped") != NULL,
          "bad line '%s': expected a message with '%s' and 'skipped', got '%s'", bad, want,
          reports.message[0]);
    CHECK(table.nrules == 1 && table.rules[0].line == 3,
          "bad line '%s': expected only the good rule of line 3, got %d rules", bad, table.nrules);
    CHECK(table.has_machine == 0, "bad line '%s': has_machine expected 0, got %d", bad,
          table.has_machine);
    CHECK(table.native.ncurves == 0, "bad line '%s': expected no native curve, got %d", bad,
          table.native.ncurves);
    xchg_table_free(&table);
}

static void check_bad_line(const char *bad, const char *want)
{
    check_bad_line_in(1, bad, want);
}

static void test_bad_lines(void)
{
    /* collectives and garbage */
    check_bad_line("alltoal 2 0 pairwise", "unknown collective 'alltoal'");
    check_bad_line("ALLTOALL 2 0 pairwise", "unknown collective 'ALLTOALL'");
    check_bad_line("@@@ !! ???", "unknown collective '@@@'");
    check_bad_line("alltoall", "too few fields");
    check_bad_line("alltoall 2 0", "too few fields");
    check_bad_line("alltoall 2 0 pairwise extra", "too many fields");
    check_bad_line("alltoall 2 0 pairwise a b c d e f g h i j", "too many fields");
    /* communicator-size ranges */
    check_bad_line("alltoall 2-x 0 pairwise", "bad communicator-size range '2-x'");
    check_bad_line("alltoall two 0 pairwise", "bad communicator-size range 'two'");
    check_bad_line("alltoall 2- 0 pairwise", "bad communicator-size range '2-'");
    check_bad_line("alltoall -4 0 pairwise", "bad communicator-size range '-4'");
    check_bad_line("alltoall *-4 0 pairwise", "bad communicator-size range '*-4'");
    check_bad_line("alltoall 2-4-8 0 pairwise", "bad communicator-size range '2-4-8'");
    check_bad_line("alltoall 4K 0 pairwise", "bad communicator-size range '4K'");
    check_bad_line("alltoall +2 0 pairwise", "bad communicator-size range '+2'");
    check_bad_line("alltoall 0-4 0 pairwise", "sizes start at 1");
    check_bad_line("alltoall 0 0 pairwise", "sizes start at 1");
    check_bad_line("alltoall 2-99999999999 0 pairwise", "numbers go up to");
    check_bad_line("alltoall 8-4 0 pairwise", "communicator-size range '8-4' is reversed");
    /* byte ranges */
    check_bad_line("alltoall 2 1Q pairwise", "bad byte range '1Q'");
    check_bad_line("alltoall 2 1KB pairwise", "bad byte range '1KB'");
    check_bad_line("alltoall 2 K pairwise", "bad byte range 'K'");
    check_bad_line("alltoall 2 1.5K pairwise", "bad byte range '1.5K'");
    check_bad_line("alltoall 2 0x10 pairwise", "bad byte range '0x10'");
    check_bad_line("alltoall 2 99999999999999999999 pairwise", "bad byte range");
    check_bad_line("alltoall 2 99999999999999999G pairwise", "bad byte range");
    check_bad_line("alltoall 2 4K-1K pairwise", "byte range '4K-1K' is reversed (4096 > 1024)");
    check_bad_line("alltoall 2 1-0 pairwise", "byte range '1-0' is reversed");
    /* algorithms and parameters */
    check_bad_line("alltoall 2 0 bogus", "unknown algorithm 'bogus' for alltoall");
    check_bad_line("alltoall 2 0 bogus:r=2", "unknown algorithm 'bogus' for alltoall");
    check_bad_line("allgather 2 0 pairwise", "unknown algorithm 'pairwise' for allgather");
    check_bad_line("alltoall 2 0 3", "unknown algorithm '3'");
    check_bad_line("alltoall 2 0 auto", "unknown algorithm 'auto'");
    check_bad_line("allgather 2 0 ring:k=2", "unknown key 'k'");
    check_bad_line("alltoall 2 0 native:k=2", "unknown key 'k'");
    check_bad_line("alltoall 2 0 pairwise:k=0", "k=0");
    check_bad_line("alltoall 2 0 pairwise:k=two", "k=two");
    check_bad_line("alltoall 2 0 pairwise:k", "not KEY=VALUE");
    check_bad_line("alltoall 2 0 pairwise:k=1,k=2", "key 'k' given twice");
    /* the machine line */
    check_bad_line("machine beta=1e-6 tau=1e-10 rho=1e-10", "lacks port_share=");
    check_bad_line("machine", "lacks beta=");
    check_bad_line("machine beta=x tau=1e-10 rho=1e-10 port_share=1", "bad value beta=x");
    check_bad_line("machine beta=1e-6 tau=-1 rho=1e-10 port_share=1", "bad value tau=-1");
    check_bad_line("machine beta=1e-6 tau=1e-10 rho=nan port_share=1", "bad value rho=nan");
    check_bad_line("machine beta=1e-6 tau=1e-10 rho=1e-10 port_share=", "bad value port_share=");
    check_bad_line("machine beta=1e-6 tau=1e-10 rho=1e-10 gamma=1", "'gamma' is not one of");
    check_bad_line("machine beta=1e-6 beta=1e-6 rho=1e-10 port_share=1", "gives beta twice");
    check_bad_line("machine beta=1 tau=1 rho=1 port_share=1 host=x", "'host' is not one of");
    check_bad_line("machine beta=1 tau=1 rho=1 port_share=1 a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 j=10",
                   "too many fields");
    check_bad_line("xchg-tuning 1", "second version line");
    /* native curves */
    check_bad_line("native", "native line has too few fields");
    check_bad_line("native alltoall 8", "native line has too few fields");
    check_bad_line("native alltoal 8 0:1e-6", "native curve: unknown collective 'alltoal'");
    check_bad_line("native 8 alltoall 0:1e-6", "native curve: unknown collective '8'");
    check_bad_line("native alltoall 2-4 0:1e-6",
                   "bad communicator size '2-4' (expected one number");
    check_bad_line("native alltoall * 0:1e-6", "bad communicator size '*'");
    check_bad_line("native alltoall 0 0:1e-6", "bad communicator size '0'");
    check_bad_line("native alltoall 4K 0:1e-6", "bad communicator size '4K'");
    check_bad_line("native alltoall 99999999999 0:1e-6", "bad communicator size '99999999999'");
    check_bad_line("native alltoall 8 1e-6", "bad point '1e-6' (expected BYTES:SECONDS");
    check_bad_line("native alltoall 8 0:1e-6 1K", "bad point '1K'");
    check_bad_line("native alltoall 8 :1e-6", "bad block size in point ':1e-6'");
    check_bad_line("native alltoall 8 1Q:1e-6", "bad block size in point '1Q:1e-6'");
    check_bad_line("native alltoall 8 -1:1e-6", "bad block size in point '-1:1e-6'");
    check_bad_line("native alltoall 8 99999999999999999999:1", "bad block size in point");
    check_bad_line("native alltoall 8 0:", "bad time in point '0:'");
    check_bad_line("native alltoall 8 0:fast", "bad time in point '0:fast'");
    check_bad_line("native alltoall 8 0:1e-6s", "bad time in point '0:1e-6s'");
    check_bad_line("native alltoall 8 0:-1e-6", "bad time in point '0:-1e-6'");
    check_bad_line("native alltoall 8 0:nan", "bad time in point '0:nan'");
    check_bad_line("native alltoall 8 0:inf", "bad time in point '0:inf'");
    check_bad_line("native alltoall 8 0:1e999", "bad time in point '0:1e999'");
    check_bad_line("native alltoall 8 0:1:2", "bad time in point '0:1:2'");
    check_bad_line("native alltoall 8 1K:1e-6 1K:2e-6",
                   "point '1K:2e-6' does not come after a smaller block size (1024 after 1024");
    check_bad_line("native alltoall 8 0:1e-6 64K:1e-5 4K:3e-6",
                   "point '4K:3e-6' does not come after a smaller block size (4096 after 65536");
}

/* A native line of npoints points 0, 1, 2, ... bytes after the version line. */
static int parse_points(int npoints, xchg_table_t *table, reports_t *reports)
{
    char text[4096];
    size_t used = (size_t)snprintf(text, sizeof text, "xchg-tuning 1\nnative alltoallv 3");
    for (int i = 0; i < npoints; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, " %d:%de-6", i, i + 1);
    snprintf(text + used, sizeof text - used, "\n");
    return parse(text, table, reports);
}

static void test_native_lines(void)
{
    static const char text[] = "xchg-tuning 1\n"
                               "native alltoall 8 1:2.1e-06 1K:2.6e-06 64K:4.1e-05 1M:6.2e-04\n"
                               "alltoall 2-* 0-* pairwise   # a rule among the curves\n"
                               "native\tallgather\t8\t0:5e-6   # one point, tabs\n"
                               "native alltoall 4 0:1e-6 2k:3E-6 1g:1.5\r\n"
                               "native alltoall 8 0:1\n"; /* 6: a second curve: skipped */
    xchg_table_t table;
    reports_t reports;
    const xchg_native_curve_t *curve;
    int rc = parse(text, &table, &reports);

    CHECK(rc == 6 && reports.n == 1 && reports.line[0] == 6 &&
              strstr(reports.message[0], "second native curve for alltoall on 8 ranks (the one "
                                         "of line 2 is used); line skipped"),
          "native lines: expected rc 6 and one report of line 6 (second curve), got rc %d, %d "
          "reports (line %d '%s')",
          rc, reports.n, reports.line[0], reports.message[0]);
    CHECK(table.native.ncurves == 3 && table.nrules == 1 && table.rules[0].line == 3,
          "native lines: expected 3 curves and the rule of line 3, got %d curves, %d rules",
          table.native.ncurves, table.nrules);
    curve = xchg_native_curve_find(&table.native, XCHG_ALLTOALL, 8);
    CHECK(curve && curve->line == 2 && curve->npoints == 4 && curve->points[0].bytes == 1 &&
              curve->points[0].seconds == 2.1e-06 && curve->points[1].bytes == 1024 &&
              curve->points[1].seconds == 2.6e-06 && curve->points[2].bytes == 65536 &&
              curve->points[2].seconds == 4.1e-05 && curve->points[3].bytes == (1u << 20) &&
              curve->points[3].seconds == 6.2e-04,
          "alltoall 8: expected line 2, 4 points 1:2.1e-06 1K:2.6e-06 64K:4.1e-05 1M:6.2e-04");
    curve = xchg_native_curve_find(&table.native, XCHG_ALLGATHER, 8);
    CHECK(curve && curve->line == 4 && curve->npoints == 1 && curve->points[0].bytes == 0 &&
              curve->points[0].seconds == 5e-6,
          "allgather 8: expected line 4, one point 0:5e-6");
    curve = xchg_native_curve_find(&table.native, XCHG_ALLTOALL, 4);
    CHECK(curve && curve->line == 5 && curve->npoints == 3 && curve->points[1].bytes == 2048 &&
              curve->points[1].seconds == 3e-6 && curve->points[2].bytes == ((size_t)1 << 30) &&
              curve->points[2].seconds == 1.5,
          "alltoall 4: expected line 5, points 0:1e-6 2K:3e-6 1G:1.5 (lower-case suffixes)");
    CHECK(!xchg_native_curve_find(&table.native, XCHG_ALLTOALL, 5) &&
              !xchg_native_curve_find(&table.native, XCHG_ALLTOALLV, 8) &&
              !xchg_native_curve_find(NULL, XCHG_ALLTOALL, 8),
          "find: expected no curve for alltoall 5, alltoallv 8, or without curves");
    xchg_table_free(&table);
    CHECK(table.native.ncurves == 0 && table.native.curves == NULL,
          "free: expected no curves, got %d", table.native.ncurves);

    /* 64 points are allowed, 65 are not */
    rc = parse_points(XCHG_NATIVE_MAX_POINTS, &table, &reports);
    curve = xchg_native_curve_find(&table.native, XCHG_ALLTOALLV, 3);
    CHECK(rc == 0 && reports.n == 0 && curve && curve->npoints == XCHG_NATIVE_MAX_POINTS &&
              curve->points[XCHG_NATIVE_MAX_POINTS - 1].bytes == XCHG_NATIVE_MAX_POINTS - 1,
          "%d points: expected one curve and no report, got rc %d, %d reports ('%s')",
          XCHG_NATIVE_MAX_POINTS, rc, reports.n, reports.message[0]);
    xchg_table_free(&table);
    for (int extra = 1; extra <= 2; extra++) {
        rc = parse_points(XCHG_NATIVE_MAX_POINTS + extra, &table, &reports);
        CHECK(rc == 2 && reports.n == 1 && reports.line[0] == 2 &&
                  strstr(reports.message[0], "native line has too many points") &&
                  strstr(reports.message[0], "1 to 64 points); line skipped") &&
                  table.native.ncurves == 0,
              "%d points: expected one report of line 2 'too many points', no curve; got rc %d, "
              "%d reports ('%s'), %d curves",
              XCHG_NATIVE_MAX_POINTS + extra, rc, reports.n, reports.message[0],
              table.native.ncurves);
        xchg_table_free(&table);
    }
}

/* Each of n lines (format[i] with a 100 KB field of fill characters, after the header line)
 * gets one short report quoting a prefix, with the reason want[i]; the line is skipped. */
static void check_long_fields(const char *header, char fill, const char *const *formats,
                              const char *const *wants, int n, const char *what)
{
    size_t huge = 100 * 1024;
    char *field = malloc(huge + 1), *text = malloc(huge + 256);
    xchg_table_t table;
    reports_t reports;

    if (!field || !text) {
        CHECK(0, "malloc");
        free(field);
        free(text);
        return;
    }
    memset(field, fill, huge);
    field[huge] = '\0';
    for (int i = 0; i < n; i++) {
        int used = sprintf(text, "%s\n", header), rc;
        used += sprintf(text + used, formats[i], field);
        sprintf(text + used, "\n");
        rc = parse(text, &table, &reports);
        CHECK(rc == 2 && reports.n == 1 && strstr(reports.message[0], wants[i]) &&
                  strstr(reports.message[0], "line skipped") && strlen(reports.message[0]) < 300,
              "100 KB %s field %d: expected one short report with '%s', got rc %d, %d "
              "reports, %zu characters: '%.300s'",
              what, i, wants[i], rc, reports.n, strlen(reports.message[0]), reports.message[0]);
        xchg_table_free(&table);
    }
    free(field);
    free(text);
}

/* A native line with a 100 KB field: one short report quoting a prefix, with the reason. */
static void test_native_long_fields(void)
{
    static const char *const formats[] = {"native alltoall %s 0:1", "native alltoall 2 %s",
                                          "native alltoall 2 0:%s", "native %s 2 0:1"};
    static const char *const wants[] = {
        "bad communicator size '7777777777777777777777777777777777777777...'",
        "bad point '7777777777777777777777777777777777777777...'",
        "bad time in point '0:77777777777777777777777777777777777777...'",
        "unknown collective '7777777777777777777777777777777777777777...'"};
    check_long_fields("xchg-tuning 1", '7', formats, wants, 4, "native");
}

static void expect_at(const xchg_native_curve_t *curve, size_t key, double want)
{
    double got = xchg_native_curve_at(curve, key);
    double tolerance = 1e-12 * (want > 1 ? want : 1);
    CHECK(got - want <= tolerance && want - got <= tolerance,
          "curve at %zu: expected %.17g, got %.17g", key, want, got);
}

/* Linear between points, the first point's value below, the last segment's line above it
 * (never falling), one point: its value everywhere. */
static void test_native_curve_at(void)
{
    static const xchg_native_point_t rising[] = {{16, 1.0}, {32, 2.0}, {64, 6.0}, {128, 10.0}};
    static const xchg_native_point_t falling[] = {{0, 1.0}, {1024, 5.0}, {2048, 4.0}};
    static const xchg_native_point_t single[] = {{4096, 7.0}};
    xchg_native_curve_t curve = {XCHG_ALLTOALL, 4, 4, (xchg_native_point_t *)rising, 0};

    expect_at(&curve, 0, 1.0); /* below the first point: its value */
    expect_at(&curve, 15, 1.0);
    expect_at(&curve, 16, 1.0); /* at the points: their values */
    expect_at(&curve, 32, 2.0);
    expect_at(&curve, 64, 6.0);
    expect_at(&curve, 128, 10.0);
    expect_at(&curve, 24, 1.5); /* between: linear */
    expect_at(&curve, 33, 2.125);
    expect_at(&curve, 48, 4.0);
    expect_at(&curve, 96, 8.0);
    expect_at(&curve, 256, 18.0); /* beyond: the line through (64, 6) and (128, 10) */
    expect_at(&curve, 1024, 66.0);
    expect_at(&curve, SIZE_MAX, 10.0 + ((double)SIZE_MAX - 128.0) / 16.0);

    curve = (xchg_native_curve_t){XCHG_ALLTOALL, 4, 3, (xchg_native_point_t *)falling, 0};
    expect_at(&curve, 512, 3.0);
    expect_at(&curve, 1536, 4.5); /* falling between points is read as measured */
    expect_at(&curve, 2048, 4.0);
    expect_at(&curve, 4096, 4.0); /* falling beyond the last point: it stays at its value */
    expect_at(&curve, SIZE_MAX, 4.0);

    curve = (xchg_native_curve_t){XCHG_ALLTOALL, 4, 1, (xchg_native_point_t *)single, 0};
    expect_at(&curve, 0, 7.0);
    expect_at(&curve, 4096, 7.0);
    expect_at(&curve, SIZE_MAX, 7.0);
}

/* Adding: a copy of the points, a curve per (collective, size) replaced in place, invalid
 * curves refused with the curves unchanged, at most XCHG_NATIVE_MAX_CURVES. */
static void test_native_curve_add(void)
{
    xchg_native_point_t points[3] = {{0, 1e-6}, {1024, 2e-6}, {65536, 3e-5}};
    xchg_native_point_t bad_order[2] = {{1024, 1e-6}, {1024, 2e-6}};
    xchg_native_point_t bad_time[2] = {{0, 1e-6}, {1024, -2e-6}};
    xchg_native_curves_t curves = {0, 0, NULL};
    const xchg_native_curve_t *curve;
    int rc, refused = 0, added = 0;

    rc = xchg_native_curve_add(&curves, XCHG_ALLGATHER, 16, points, 3, 7);
    points[0].seconds = 99; /* the table keeps its own copy */
    curve = xchg_native_curve_find(&curves, XCHG_ALLGATHER, 16);
    CHECK(rc == 0 && curves.ncurves == 1 && curve && curve->npoints == 3 && curve->line == 7 &&
              curve->points[0].seconds == 1e-6 && curve->points[2].bytes == 65536,
          "add: expected one curve, a copy of the 3 points, line 7; got rc %d, %d curves", rc,
          curves.ncurves);
    rc = xchg_native_curve_add(&curves, XCHG_ALLGATHER, 16, points, 1, 9);
    curve = xchg_native_curve_find(&curves, XCHG_ALLGATHER, 16);
    CHECK(rc == 0 && curves.ncurves == 1 && curve && curve->npoints == 1 &&
              curve->points[0].seconds == 99 && curve->line == 9,
          "replace: expected still one curve, now 1 point of 99 s from line 9; got rc %d, %d "
          "curves",
          rc, curves.ncurves);
    CHECK(xchg_native_curve_add(&curves, XCHG_ALLGATHER, 8, bad_order, 2, 0) == -1 &&
              xchg_native_curve_add(&curves, XCHG_ALLGATHER, 8, bad_time, 2, 0) == -1 &&
              xchg_native_curve_add(&curves, XCHG_ALLGATHER, 8, points, 0, 0) == -1 &&
              xchg_native_curve_add(&curves, XCHG_ALLGATHER, 8, points, XCHG_NATIVE_MAX_POINTS + 1,
                                    0) == -1 &&
              xchg_native_curve_add(&curves, XCHG_ALLGATHER, 16, bad_time, 2, 0) == -1,
          "invalid curves: expected -1 for points out of order, a negative time, 0 and %d points",
          XCHG_NATIVE_MAX_POINTS + 1);
    curve = xchg_native_curve_find(&curves, XCHG_ALLGATHER, 16);
    CHECK(curves.ncurves == 1 && curve && curve->npoints == 1 && curve->points[0].seconds == 99,
          "invalid curves: expected the curves unchanged, got %d curves", curves.ncurves);

    /* the limit */
    for (int size = 1; size <= XCHG_NATIVE_MAX_CURVES + 1; size++) {
        if (xchg_native_curve_add(&curves, XCHG_ALLTOALL, size, points, 3, 0) == 0)
            added++;
        else
            refused++;
    }
    CHECK(curves.ncurves == XCHG_NATIVE_MAX_CURVES && added == XCHG_NATIVE_MAX_CURVES - 1 &&
              refused == 2,
          "limit: expected %d curves (%d added, 2 refused), got %d (%d added, %d refused)",
          XCHG_NATIVE_MAX_CURVES, XCHG_NATIVE_MAX_CURVES - 1, curves.ncurves, added, refused);
    CHECK(xchg_native_curve_add(&curves, XCHG_ALLGATHER, 16, points, 2, 0) == 0,
          "limit: replacing a curve is still allowed");
    for (int i = 0; i < curves.ncurves; i++)
        free(curves.curves[i].points);
    free(curves.curves);
}

/* A table full of curves refuses the next native line with a report. */
static void test_native_too_many_curves(void)
{
    size_t cap = (size_t)(XCHG_NATIVE_MAX_CURVES + 1) * 40 + 64, used = 0;
    char *text = malloc(cap);
    xchg_table_t table;
    reports_t reports;
    int rc;

    if (!text) {
        CHECK(0, "malloc");
        return;
    }
    used += (size_t)snprintf(text, cap, "xchg-tuning 1\n");
    for (int size = 1; size <= XCHG_NATIVE_MAX_CURVES + 1; size++)
        used += (size_t)snprintf(text + used, cap - used, "native alltoall %d 0:1e-6\n", size);
    rc = parse(text, &table, &reports);
    CHECK(rc == XCHG_NATIVE_MAX_CURVES + 2 && reports.n == 1 &&
              strstr(reports.message[0], "more than 4096 native curves; line skipped") &&
              table.native.ncurves == XCHG_NATIVE_MAX_CURVES,
          "%d curves: expected the last line reported and %d curves kept, got rc %d, %d reports "
          "('%s'), %d curves",
          XCHG_NATIVE_MAX_CURVES + 1, XCHG_NATIVE_MAX_CURVES, rc, reports.n, reports.message[0],
          table.native.ncurves);
    xchg_table_free(&table);
    free(text);
}

/* Native curves written and read back exactly, and written again the same. */
static void test_native_round_trip(void)
{
    static const xchg_native_point_t a2a[] = {
        {0, 2.1e-06}, {1, 2.2e-06}, {1024, 1.0 / 3.0 * 1e-5}, {65536, 4.1e-05}};
    static const xchg_native_point_t ag[] = {{4u << 20, 0.00625}};
    xchg_table_t table, back;
    reports_t reports;
    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    FILE *out;
    int rc;

    memset(&table, 0, sizeof table);
    CHECK(xchg_native_curve_add(&table.native, XCHG_ALLTOALL, 8, a2a, 4, 0) == 0 &&
              xchg_native_curve_add(&table.native, XCHG_ALLGATHER, 1000, ag, 1, 0) == 0,
          "round trip: adding the curves failed");
    out = open_memstream(&text, &len);
    rc = xchg_table_write(out, &table, NULL);
    fclose(out);
    CHECK(rc == 0 &&
              strstr(text, "\nnative alltoall   8     0:2.1e-06 1:2.2e-06 "
                           "1K:3.3333333333333333e-06 64K:4.1e-05\n") &&
              strstr(text, "\nnative allgather  1000  4M:0.00625\n") &&
              strstr(text, "# native collective procs bytes:seconds"),
          "write: native lines not as expected:\n%s", text);

    rc = parse(text, &back, &reports);
    CHECK(rc == 0 && reports.n == 0 && back.native.ncurves == 2,
          "round trip: expected rc 0, no report, 2 curves; got %d, %d ('%s'), %d", rc, reports.n,
          reports.message[0], back.native.ncurves);
    for (int i = 0; i < back.native.ncurves && i < 2; i++) {
        const xchg_native_curve_t *a = &table.native.curves[i], *b = &back.native.curves[i];
        int same = a->coll == b->coll && a->comm_size == b->comm_size && a->npoints == b->npoints;
        for (int j = 0; same && j < a->npoints; j++)
            same = a->points[j].bytes == b->points[j].bytes &&
                   a->points[j].seconds == b->points[j].seconds;
        CHECK(same, "round trip curve %d: not read back exactly", i);
    }
    out = open_memstream(&text2, &len2);
    xchg_table_write(out, &back, NULL);
    fclose(out);
    CHECK(strcmp(text, text2) == 0, "write(parse(write(t))) differs from write(t):\n%s---\n%s",
          text, text2);
    xchg_table_free(&table);
    xchg_table_free(&back);
    free(text);
    free(text2);
}

/* xchg_cost_native: the curve of the call's collective and exactly its communicator size,
 * else the model of the MPI library's default (the same as without any curve). */
static void test_native_cost(void)
{
    static const char text[] = "xchg-tuning 1\n"
                               "native alltoall 8 0:1e-5 1K:2e-5 64K:1e-3\n"
                               "native alltoallv 8 0:3e-5\n";
    xchg_table_t table;
    reports_t reports;
    xchg_machine_t with = xchg_machine_default, without = xchg_machine_default;
    xchg_params_t params = {0};
    xchg_call_t call;
    double got, model;

    parse(text, &table, &reports);
    with.native = &table.native;
    CHECK(xchg_machine_default.native == NULL, "the built-in constants carry no curves");

    memset(&call, 0, sizeof call);
    call.coll = XCHG_ALLTOALL;
    call.comm_size = 8;
    call.block_bytes = 512;
    got = xchg_cost_native(&call, &with, &params);
    model = xchg_cost_native(&call, &without, &params);
    CHECK(got > 1.4999e-5 && got < 1.5001e-5,
          "alltoall p=8 512 B: expected the curve's 1.5e-05, got %g", got);
    CHECK(model != got && model > 0, "alltoall p=8 512 B: the model (%g) differs from the curve",
          model);
    call.block_bytes = 128 << 10;
    got = xchg_cost_native(&call, &with, &params);
    CHECK(got > 1.99e-3 && got < 2.01e-3,
          "alltoall p=8 128K: expected the last segment's line, 2e-03, got %g", got);

    /* no curve for this size or collective: the model, as without a table */
    call.comm_size = 7;
    call.block_bytes = 512;
    CHECK(xchg_cost_native(&call, &with, &params) == xchg_cost_native(&call, &without, &params),
          "alltoall p=7: expected the model (no curve for 7 ranks)");
    call.comm_size = 16;
    CHECK(xchg_cost_native(&call, &with, &params) == xchg_cost_native(&call, &without, &params),
          "alltoall p=16: expected the model (no curve for 16 ranks)");
    call.coll = XCHG_ALLGATHER;
    call.comm_size = 8;
    CHECK(xchg_cost_native(&call, &with, &params) == xchg_cost_native(&call, &without, &params),
          "allgather p=8: expected the model (no allgather curve)");

    /* alltoallv: the size key, whatever the skew */
    memset(&call, 0, sizeof call);
    call.coll = XCHG_ALLTOALLV;
    call.comm_size = 8;
    call.block_bytes = 4096;
    call.max_send_bytes = call.max_recv_bytes = 8 * 4096;
    call.max_block_bytes = 8 * 4096;
    call.max_total_bytes = 16 * 4096;
    got = xchg_cost_native(&call, &with, &params);
    CHECK(got == 3e-5, "alltoallv p=8: expected the one point's 3e-05, got %g", got);
    xchg_table_free(&table);
}

static void test_version(void)
{
    xchg_table_t table;
    reports_t reports;
    int rc;

    rc = parse("alltoall 2 0 pairwise\nallgather 2 0 ring\n", &table, &reports);
    CHECK(rc == 1 && reports.n == 1 && reports.line[0] == 1 &&
              strstr(reports.message[0], "missing version line") &&
              strstr(reports.message[0], "file ignored") && table.nrules == 0,
          "missing version: expected rc 1, one report at line 1 'missing version line ... file "
          "ignored', 0 rules; got rc %d, %d reports, line %d '%s', %d rules",
          rc, reports.n, reports.line[0], reports.message[0], table.nrules);
    xchg_table_free(&table);

    rc = parse("# comment\n\nmachine beta=1 tau=1 rho=1 port_share=1\n", &table, &reports);
    CHECK(rc == 3 && reports.n == 1 && reports.line[0] == 3 && table.has_machine == 0,
          "machine before version: expected rc 3, one report at line 3, no machine; got rc %d, "
          "%d reports, line %d, has_machine %d",
          rc, reports.n, reports.line[0], table.has_machine);
    xchg_table_free(&table);

    rc = parse("xchg-tuning 3\nallgather 2 0 ring\n", &table, &reports);
    CHECK(rc == 1 && reports.n == 1 &&
              strstr(reports.message[0], "unsupported table version '3' (this xchg reads "
                                         "'xchg-tuning 1' and 'xchg-tuning 2'); file ignored") &&
              table.nrules == 0,
          "version 3: expected rc 1, one report 'unsupported table version '3'', 0 rules; got rc "
          "%d, %d reports '%s', %d rules",
          rc, reports.n, reports.message[0], table.nrules);
    xchg_table_free(&table);

    rc = parse("xchg-tuning 02\nallgather 2 0 ring\n", &table, &reports);
    CHECK(rc == 1 && reports.n == 1 && strstr(reports.message[0], "unsupported table version '02'"),
          "version 02: expected rc 1 and one report, got rc %d, %d reports '%s'", rc, reports.n,
          reports.message[0]);
    xchg_table_free(&table);

    rc = parse("xchg-tuning 2\nallgather 2 0 ring\n", &table, &reports);
    CHECK(rc == 0 && reports.n == 0 && table.nrules == 1,
          "version 2: expected rc 0, no report, 1 rule; got rc %d, %d reports '%s', %d rules", rc,
          reports.n, reports.message[0], table.nrules);
    xchg_table_free(&table);

    rc = parse("xchg-tuning\nallgather 2 0 ring\n", &table, &reports);
    CHECK(rc == 1 && reports.n == 1 && strstr(reports.message[0], "unsupported table version") &&
              table.nrules == 0,
          "version without number: expected rc 1, one report, 0 rules; got rc %d, %d reports "
          "'%s', %d rules",
          rc, reports.n, reports.message[0], table.nrules);
    xchg_table_free(&table);

    rc = parse("xchg-tuning 1 extra\nallgather 2 0 ring\n", &table, &reports);
    CHECK(rc == 1 && reports.n == 1 && table.nrules == 0,
          "version line with an extra field: expected rc 1, one report, 0 rules; got rc %d, %d "
          "reports, %d rules",
          rc, reports.n, table.nrules);
    xchg_table_free(&table);

    rc = parse("# first a comment\n   \n\txchg-tuning 1 # the version\nallgather 2 0 ring\n",
               &table, &reports);
    CHECK(rc == 0 && reports.n == 0 && table.nrules == 1 && table.rules[0].line == 4,
          "comments before the version line: expected rc 0, no report, 1 rule from line 4; got "
          "rc %d, %d reports, %d rules",
          rc, reports.n, table.nrules);
    xchg_table_free(&table);
}

/* Text without a version line at all (empty, blank, comments only): one report for the file
 * as a whole (line 0), return value -1, no rule. */
static void test_no_version(void)
{
    static const char *const texts[] = {"", "\n", "   \n\t\n", "# only a comment",
                                        "# a comment\n\n  # another one\n"};
    xchg_table_t table;
    reports_t reports;

    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int rc = parse(texts[i], &table, &reports);
        CHECK(rc == -1 && reports.n == 1 && reports.line[0] == 0 &&
                  strstr(reports.message[0], "no 'xchg-tuning 1' line (nor 'xchg-tuning 2'") &&
                  strstr(reports.message[0], "file ignored") && table.nrules == 0,
              "text %zu without a version line: expected rc -1, one report at line 0 'no "
              "'xchg-tuning 1' line (nor 'xchg-tuning 2' ... file ignored'; got rc %d, %d reports, "
              "line %d '%s', %d rules",
              i, rc, reports.n, reports.line[0], reports.message[0], table.nrules);
        xchg_table_free(&table);
    }
}

/* A 100 KB bad line, its huge field at position field (0..3) of "alltoall 2 0 pairwise": one
 * short report at line 2 with the reason want (quoting at most 40 characters and "..."), the
 * good rule of line 3 still read. */
static void check_long_line(int field, char fill, const char *want)
{
    static const char *const good[4] = {"alltoall", "2", "0", "pairwise:k="};
    size_t huge = 100 * 1024, used = 0;
    char *text = malloc(huge + 256);
    xchg_table_t table;
    reports_t reports;
    int rc;

    if (!text) {
        CHECK(0, "malloc");
        return;
    }
    used += (size_t)sprintf(text, "xchg-tuning 1\n");
    for (int f = 0; f < 4; f++) {
        used += (size_t)sprintf(text + used, "%s%s", f ? " " : "", good[f]);
        if (f == field) {
            memset(text + used, fill, huge);
            used += huge;
        }
    }
    sprintf(text + used, "\nallgather 2 0 ring\n");

    rc = parse(text, &table, &reports);
    CHECK(rc == 2 && reports.n == 1 && reports.line[0] == 2,
          "100 KB field %d: expected rc 2 and one report at line 2, got rc %d, %d reports", field,
          rc, reports.n);
    CHECK(strstr(reports.message[0], want) && strstr(reports.message[0], "skipped") &&
              strstr(reports.message[0], "...") && strlen(reports.message[0]) < 300,
          "100 KB field %d: expected a message under 300 characters with '%s', '...' and "
          "'skipped', got %zu characters: '%s'",
          field, want, strlen(reports.message[0]), reports.message[0]);
    CHECK(table.nrules == 1 && table.rules[0].line == 3,
          "100 KB field %d: expected only the good rule of line 3, got %d rules", field,
          table.nrules);
    xchg_table_free(&table);
    free(text);
}

static void test_long_lines(void)
{
    check_long_line(0, 'a',
                    "unknown collective 'alltoallaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' "
                    "(expected alltoall, allgather or alltoallv");
    check_long_line(1, '0',
                    "bad communicator-size range '200000000000000000000000000000000000000"
                    "0...' (expected N, N-M, N-* or *); line skipped");
    check_long_line(2, 'x',
                    "bad byte range '0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' "
                    "(expected N, N-M, N-* or *, where N may end in K, M or G); line "
                    "skipped");
    check_long_line(3, '7',
                    "bad parameters in 'pairwise:k=77777777777777777777777777777...': "
                    "value is too long (102411 characters");
}

static void test_first_bad_line(void)
{
    static const char text[] = "xchg-tuning 1\n"                                        /* 1 */
                               "alltoall 2 0 pairwise\n"                                /* 2 */
                               "# comment\n"                                            /* 3 */
                               "alltoall 3 0 nosuch\n"                                  /* 4 bad */
                               "alltoall 4 0 pairwise\n"                                /* 5 */
                               "machine beta=1e-6 tau=2e-10 rho=1e-10\n"                /* 6 bad */
                               "allgather 9-2 0 ring\n"                                 /* 7 bad */
                               "machine beta=1e-6 tau=2e-10 rho=1e-10 port_share=0.5\n" /* 8 */
                               "machine beta=2e-6 tau=2e-10 rho=1e-10 port_share=0.5\n" /* 9 bad */
                               "allgather 2 0 ring\n";                                  /* 10 */
    xchg_table_t table;
    reports_t reports;
    int rc = parse(text, &table, &reports);

    CHECK(rc == 4, "first bad line: expected 4, got %d", rc);
    CHECK(reports.n == 4 && reports.line[0] == 4 && reports.line[1] == 6 && reports.line[2] == 7 &&
              reports.line[3] == 9,
          "reports: expected lines 4, 6, 7, 9, got %d reports: %d %d %d %d", reports.n,
          reports.line[0], reports.line[1], reports.line[2], reports.line[3]);
    CHECK(reports.n == 4 && strstr(reports.message[3], "line 8 is used"),
          "second machine line: expected 'line 8 is used', got '%s'", reports.message[3]);
    CHECK(table.nrules == 3 && table.rules[0].line == 2 && table.rules[1].line == 5 &&
              table.rules[2].line == 10,
          "good rules: expected lines 2, 5, 10, got %d rules", table.nrules);
    CHECK(table.has_machine && table.machine.beta == 1e-6 && table.machine.port_share == 0.5,
          "machine from line 8: expected beta 1e-6 port_share 0.5, got has %d %g %g",
          table.has_machine, table.machine.beta, table.machine.port_share);
    xchg_table_free(&table);

    /* a NULL report function is allowed */
    memset(&table, 0, sizeof table);
    rc = xchg_table_parse(text, &table, NULL, NULL);
    CHECK(rc == 4 && table.nrules == 3, "NULL report: expected rc 4 and 3 rules, got %d %d", rc,
          table.nrules);
    xchg_table_free(&table);
}

static void expect_lookup_on(const xchg_table_t *table, int coll, int p, int nnodes, size_t key,
                             int want_line)
{
    const xchg_rule_t *rule = xchg_table_lookup(table, coll, p, nnodes, key);
    int got = rule ? rule->line : 0;
    CHECK(got == want_line,
          "lookup(%s, p=%d, nodes=%d, key=%zu): expected the rule of line %d, got %d",
          xchg_coll_name(coll), p, nnodes, key, want_line, got);
}

/* One node, and for a table without nodes= any node count gives the same rule. */
static void expect_lookup(const xchg_table_t *table, int coll, int p, size_t key, int want_line)
{
    expect_lookup_on(table, coll, p, 1, key, want_line);
    expect_lookup_on(table, coll, p, 7, key, want_line);
}

static void test_ranges_and_lookup(void)
{
    static const char text[] = "xchg-tuning 1\n"
                               "alltoall  2      0        pairwise\n"     /* 2: key 0 only */
                               "alltoall  2      512-1K   native\n"       /* 3: bucket edges */
                               "alltoall  2      4M-*     pairwise:k=1\n" /* 4 */
                               "alltoall  2-4    *        native\n"       /* 5: covers 2..4 */
                               "alltoall  *      1-1      pairwise\n"     /* 6: all sizes */
                               "allgather 3-*    0-*      ring\n"         /* 7 */
                               "alltoallv 1      *        pairwise\n";    /* 8 */
    xchg_table_t table;
    reports_t reports;
    int rc = parse(text, &table, &reports);
    CHECK(rc == 0 && table.nrules == 7, "ranges table: expected rc 0 and 7 rules, got %d %d", rc,
          table.nrules);

    expect_lookup(&table, XCHG_ALLTOALL, 2, 0, 2);
    expect_lookup(&table, XCHG_ALLTOALL, 2, 1, 5); /* rule 5 comes before rule 6 */
    expect_lookup(&table, XCHG_ALLTOALL, 2, 511, 5);
    expect_lookup(&table, XCHG_ALLTOALL, 2, 512, 3);
    expect_lookup(&table, XCHG_ALLTOALL, 2, 1024, 3);
    expect_lookup(&table, XCHG_ALLTOALL, 2, 1025, 5);
    expect_lookup(&table, XCHG_ALLTOALL, 2, (4u << 20) - 1, 5);
    expect_lookup(&table, XCHG_ALLTOALL, 2, 4u << 20, 4);
    expect_lookup(&table, XCHG_ALLTOALL, 2, SIZE_MAX, 4);
    expect_lookup(&table, XCHG_ALLTOALL, 3, 0, 5);
    expect_lookup(&table, XCHG_ALLTOALL, 4, SIZE_MAX, 5);
    expect_lookup(&table, XCHG_ALLTOALL, 5, 1, 6);
    expect_lookup(&table, XCHG_ALLTOALL, 1, 1, 6);
    expect_lookup(&table, XCHG_ALLTOALL, INT_MAX, 1, 6);
    expect_lookup(&table, XCHG_ALLTOALL, 5, 0, 0);
    expect_lookup(&table, XCHG_ALLTOALL, 5, 2, 0);
    expect_lookup(&table, XCHG_ALLTOALL, 1, 0, 0);
    expect_lookup(&table, XCHG_ALLGATHER, 2, 0, 0);
    expect_lookup(&table, XCHG_ALLGATHER, 3, 0, 7);
    expect_lookup(&table, XCHG_ALLGATHER, INT_MAX, SIZE_MAX, 7);
    expect_lookup(&table, XCHG_ALLTOALLV, 1, 12345, 8);
    expect_lookup(&table, XCHG_ALLTOALLV, 2, 12345, 0);
    xchg_table_free(&table);

    /* an empty table decides nothing */
    memset(&table, 0, sizeof table);
    expect_lookup(&table, XCHG_ALLTOALL, 2, 0, 0);

    /* suffixes: K, M, G, lower case too */
    rc =
        parse("xchg-tuning 1\nalltoall 2 1k-3G pairwise\nalltoall 2 2m native\n", &table, &reports);
    CHECK(rc == 0 && table.nrules == 2 && table.rules[0].bmin == 1024 &&
              table.rules[0].bmax == ((size_t)3 << 30) && table.rules[1].bmin == (2u << 20) &&
              table.rules[1].bmax == (2u << 20),
          "suffixes: expected 1024-3G and 2M-2M, got rc %d, %d rules", rc, table.nrules);
    xchg_table_free(&table);
}

/* Write a table, parse it back, compare; then write the parsed one and compare the text. */
static void test_round_trip(void)
{
    xchg_table_t table, back;
    reports_t reports;
    xchg_rule_t rules[5];
    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    FILE *out;
    int rc;

    memset(&table, 0, sizeof table);
    memset(rules, 0, sizeof rules);
    rules[0] = (xchg_rule_t){.coll = XCHG_ALLTOALL,
                             .pmin = 2,
                             .pmax = 3,
                             .bmin = 0,
                             .bmax = 0,
                             .algo = algo(XCHG_ALLTOALL, "pairwise")};
    rules[0].params.nports = 3;
    rules[1] = (xchg_rule_t){.coll = XCHG_ALLTOALL,
                             .pmin = 2,
                             .pmax = 3,
                             .bmin = 1,
                             .bmax = 1023,
                             .algo = algo(XCHG_ALLTOALL, "native")};
    rules[2] = (xchg_rule_t){.coll = XCHG_ALLTOALL,
                             .pmin = 4,
                             .pmax = INT_MAX,
                             .bmin = 1024,
                             .bmax = SIZE_MAX,
                             .algo = algo(XCHG_ALLTOALL, "pairwise")};
    rules[3] = (xchg_rule_t){.coll = XCHG_ALLGATHER,
                             .pmin = 1,
                             .pmax = INT_MAX,
                             .bmin = 0,
                             .bmax = SIZE_MAX,
                             .algo = algo(XCHG_ALLGATHER, "ring")};
    rules[4] = (xchg_rule_t){.coll = XCHG_ALLTOALLV,
                             .pmin = 16,
                             .pmax = 16,
                             .bmin = 3 << 20,
                             .bmax = (4 << 20) - 1,
                             .algo = algo(XCHG_ALLTOALLV, "pairwise")};
    rules[4].params.nports = 1;
    table.nrules = 5;
    table.rules = rules;
    table.has_machine = 1;
    table.machine = (xchg_machine_t){
        .beta = 2.1e-06, .tau = 1.0 / 3.0 * 1e-9, .rho = 1.1e-10, .port_share = 0.8};

    out = open_memstream(&text, &len);
    rc = xchg_table_write(out, &table, "written by test_table\nsecond comment line");
    fclose(out);
    CHECK(rc == 0, "write: expected 0, got %d", rc);
    CHECK(strncmp(text, "xchg-tuning 1\n# written by test_table\n# second comment line\n", 60) == 0,
          "write: expected the version line and two comment lines first, got '%.80s'", text);
    CHECK(strstr(text, "machine beta=2.1e-06 tau=") != NULL,
          "write: expected 'machine beta=2.1e-06 tau=' in the text, got '%s'", text);
    CHECK(strstr(text, "\nalltoall     2-3     1-1023        native\n") != NULL &&
              strstr(text, "\nalltoall     4-*     1K-*          pairwise\n") != NULL &&
              strstr(text, "\nallgather    *       *             ring\n") != NULL &&
              strstr(text, "\nalltoallv    16      3M-4194303    pairwise:k=1\n") != NULL &&
              strstr(text, "\nalltoall     2-3     0             pairwise:k=3\n") != NULL,
          "write: rule lines not as expected:\n%s", text);

    rc = parse(text, &back, &reports);
    CHECK(rc == 0 && reports.n == 0, "round trip: expected rc 0 and no reports, got %d, %d (%s)",
          rc, reports.n, reports.message[0]);
    CHECK(back.nrules == 5, "round trip: expected 5 rules, got %d", back.nrules);
    for (int i = 0; i < back.nrules && i < 5; i++) {
        const xchg_rule_t *a = &rules[i], *b = &back.rules[i];
        CHECK(a->coll == b->coll && a->pmin == b->pmin && a->pmax == b->pmax &&
                  a->bmin == b->bmin && a->bmax == b->bmax && a->algo == b->algo &&
                  a->params.nports == b->params.nports && a->params.radix == b->params.radix &&
                  a->params.inner == b->params.inner,
              "round trip rule %d: expected %d %d-%d %zu-%zu algo %d k=%d, got %d %d-%d %zu-%zu "
              "algo %d k=%d",
              i, a->coll, a->pmin, a->pmax, a->bmin, a->bmax, a->algo, a->params.nports, b->coll,
              b->pmin, b->pmax, b->bmin, b->bmax, b->algo, b->params.nports);
    }
    CHECK(back.has_machine && back.machine.beta == table.machine.beta &&
              back.machine.tau == table.machine.tau && back.machine.rho == table.machine.rho &&
              back.machine.port_share == table.machine.port_share,
          "round trip machine: expected exactly %.17g %.17g %.17g %.17g, got %.17g %.17g %.17g "
          "%.17g",
          table.machine.beta, table.machine.tau, table.machine.rho, table.machine.port_share,
          back.machine.beta, back.machine.tau, back.machine.rho, back.machine.port_share);

    out = open_memstream(&text2, &len2);
    xchg_table_write(out, &back, "written by test_table\nsecond comment line");
    fclose(out);
    CHECK(strcmp(text, text2) == 0, "write(parse(write(t))) differs from write(t):\n%s---\n%s",
          text, text2);
    xchg_table_free(&back);
    free(text);
    free(text2);
}

/* Version 2: both levels in the machine line, rules that match on the node count. */
static void test_v2_valid(void)
{
    static const char text[] =
        "xchg-tuning 2\n" /* 1 */
        "machine beta=1e-06 tau=1e-10 rho=5e-11 port_share=0.5 beta_inter=6e-06 "
        "tau_inter=4e-10 inject=3 sync=4e-07 gap_inter=2e-05 tau_large=4e-11 "
        "large_from=16384 rho_cached=2.5e-11 cached_bytes=524288\n"  /* 2 */
        "alltoall  16  nodes=4    0-*   pairwise:k=2\n"                /* 3 */
        "alltoall  16  nodes=2-3  0-*   native\n"                      /* 4 */
        "alltoall  16  nodes=5-*  1K-*  pairwise\n"                    /* 5 */
        "alltoall  16  nodes=*    0-*   pairwise:k=1   # any layout\n" /* 6 */
        "alltoall  16             0-*   native\n"                      /* 7 */
        "allgather 2-8\tnodes=1\t*     ring\n"                         /* 8 */
        "alltoallv *   *   pairwise\n";                                /* 9 */
    static const int want_nodes[][2] = {{4, 4}, {2, 3}, {5, INT_MAX}, {1, INT_MAX},
                                        {0, 0}, {1, 1}, {0, 0}};
    xchg_table_t table;
    reports_t reports;
    int rc = parse(text, &table, &reports);

    CHECK(rc == 0 && reports.n == 0 && table.nrules == 7,
          "version 2 file: expected rc 0, no report, 7 rules; got rc %d, %d reports (line %d "
          "'%s'), %d rules",
          rc, reports.n, reports.line[0], reports.message[0], table.nrules);
    CHECK(table.has_machine && table.machine.beta == 1e-06 && table.machine.tau == 1e-10 &&
              table.machine.rho == 5e-11 && table.machine.port_share == 0.5 &&
              table.machine.beta_inter == 6e-06 && table.machine.tau_inter == 4e-10 &&
              table.machine.inject == 3 && table.machine.node_share == 0 &&
              table.machine.sync == 4e-07 && table.machine.gap_inter == 2e-05 &&
              table.machine.node_gap == 0 && table.machine.tau_large == 4e-11 &&
              table.machine.large_from == 16384 && table.machine.rho_cached == 2.5e-11 &&
              table.machine.cached_bytes == 524288,
          "version 2 machine line: got beta %g tau %g rho %g port_share %g beta_inter %g "
          "tau_inter %g inject %d sync %g gap_inter %g node_gap %g tau_large %g large_from %g",
          table.machine.beta, table.machine.tau, table.machine.rho, table.machine.port_share,
          table.machine.beta_inter, table.machine.tau_inter, table.machine.inject,
          table.machine.sync, table.machine.gap_inter, table.machine.node_gap,
          table.machine.tau_large, table.machine.large_from);
    for (int i = 0; i < table.nrules && i < 7; i++)
        CHECK(table.rules[i].nmin == want_nodes[i][0] && table.rules[i].nmax == want_nodes[i][1] &&
                  table.rules[i].pmin >= 1 && table.rules[i].line == (i < 6 ? 3 + i : 9),
              "version 2 rule %d: expected nodes %d-%d, got %d-%d (line %d)", i, want_nodes[i][0],
              want_nodes[i][1], table.rules[i].nmin, table.rules[i].nmax, table.rules[i].line);
    check_rule(&table, 0, XCHG_ALLTOALL, 16, 16, 0, SIZE_MAX, algo(XCHG_ALLTOALL, "pairwise"), 2,
               3);
    check_rule(&table, 5, XCHG_ALLGATHER, 2, 8, 0, SIZE_MAX, algo(XCHG_ALLGATHER, "ring"), 0, 8);

    /* lookup by node count: the first rule whose nodes= holds it, a rule without any */
    expect_lookup_on(&table, XCHG_ALLTOALL, 16, 4, 0, 3);
    expect_lookup_on(&table, XCHG_ALLTOALL, 16, 2, 0, 4);
    expect_lookup_on(&table, XCHG_ALLTOALL, 16, 3, 100, 4);
    expect_lookup_on(&table, XCHG_ALLTOALL, 16, 5, 1023, 6);
    expect_lookup_on(&table, XCHG_ALLTOALL, 16, 5, 1024, 5);
    expect_lookup_on(&table, XCHG_ALLTOALL, 16, INT_MAX, SIZE_MAX, 5);
    expect_lookup_on(&table, XCHG_ALLTOALL, 16, 1, 0, 6);
    expect_lookup_on(&table, XCHG_ALLTOALL, 15, 4, 0, 0);
    expect_lookup_on(&table, XCHG_ALLGATHER, 4, 1, 12345, 8);
    expect_lookup_on(&table, XCHG_ALLGATHER, 4, 2, 12345, 0);
    expect_lookup_on(&table, XCHG_ALLTOALLV, 3, 1, 0, 9);
    expect_lookup_on(&table, XCHG_ALLTOALLV, 3, 9, 0, 9);
    xchg_table_free(&table);

    /* the version 2 keys are optional, and 0 is allowed */
    rc = parse("xchg-tuning 2\nmachine port_share=1 rho=1 tau=1 beta=1 inject=0 tau_inter=0\n",
               &table, &reports);
    CHECK(rc == 0 && reports.n == 0 && table.has_machine && table.machine.inject == 0 &&
              table.machine.tau_inter == 0 && table.machine.beta_inter == 0,
          "version 2 machine line with zeros: expected it read, got rc %d, %d reports '%s'", rc,
          reports.n, reports.message[0]);
    xchg_table_free(&table);
    rc = parse("xchg-tuning 2\nmachine beta=1 tau=2 rho=3 port_share=4\n", &table, &reports);
    CHECK(rc == 0 && reports.n == 0 && table.has_machine && table.machine.beta == 1 &&
              table.machine.beta_inter == 0 && table.machine.inject == 0,
          "version 2 file, version 1 machine line: expected it read, got rc %d, %d reports '%s'",
          rc, reports.n, reports.message[0]);
    xchg_table_free(&table);
}

static void test_v2_bad_lines(void)
{
    /* nodes= */
    check_bad_line_in(2, "alltoall 2 nodes= 0 pairwise", "bad nodes= range ''");
    check_bad_line_in(2, "alltoall 2 nodes=x 0 pairwise", "bad nodes= range 'x' (expected N");
    check_bad_line_in(2, "alltoall 2 nodes=-2 0 pairwise", "bad nodes= range '-2'");
    check_bad_line_in(2, "alltoall 2 nodes=2- 0 pairwise", "bad nodes= range '2-'");
    check_bad_line_in(2, "alltoall 2 nodes=*-4 0 pairwise", "bad nodes= range '*-4'");
    check_bad_line_in(2, "alltoall 2 nodes=1K 0 pairwise", "bad nodes= range '1K'");
    check_bad_line_in(2, "alltoall 2 nodes=0 0 pairwise",
                      "bad nodes= range '0' (node counts start at 1)");
    check_bad_line_in(2, "alltoall 2 nodes=0-3 0 pairwise", "node counts start at 1");
    check_bad_line_in(2, "alltoall 2 nodes=99999999999 0 pairwise", "numbers go up to");
    check_bad_line_in(2, "alltoall 2 nodes=4-2 0 pairwise",
                      "nodes= range '4-2' is reversed (4 > 2)");
    check_bad_line_in(2, "alltoall 2 nodes=2 pairwise", "too few fields");
    check_bad_line_in(2, "alltoall nodes=2", "'nodes=2' is out of place");
    check_bad_line_in(2, "alltoall 2 nodes=2 0 pairwise extra", "too many fields");
    check_bad_line_in(2, "alltoall 2 NODES=2 0 pairwise", "too many fields");
    check_bad_line_in(2, "alltoall 2 0 nodes=2 pairwise",
                      "'nodes=2' is out of place (nodes= comes right after PROCS");
    check_bad_line_in(2, "alltoall nodes=2 2 0 pairwise", "'nodes=2' is out of place");
    check_bad_line_in(2, "alltoall 2 nodes=2 nodes=3 pairwise", "'nodes=3' is out of place");
    check_bad_line_in(2, "alltoall 2 nodes=2 0 nodes=3", "'nodes=3' is out of place");
    check_bad_line_in(2, "alltoall 2 nodes=2 x pairwise", "bad byte range 'x'");
    check_bad_line_in(2, "alltoall 2-x nodes=2 0 pairwise", "bad communicator-size range '2-x'");
    check_bad_line_in(2, "alltoall 2 nodes=2 0 bogus", "unknown algorithm 'bogus' for alltoall");
    check_bad_line_in(2, "alltoall 2 nodes=2 0 pairwise:k=0", "k=0");
    check_bad_line_in(2, "alltoal 2 nodes=2 0 pairwise", "unknown collective 'alltoal'");
    /* the machine line's version 2 keys */
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 beta_inter=x",
                      "bad value beta_inter=x (expected a number >= 0)");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 tau_inter=-1",
                      "bad value tau_inter=-1");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 beta_inter=inf",
                      "bad value beta_inter=inf");
    check_bad_line_in(2,
                      "machine beta=1 tau=1 rho=1 port_share=1 tau_inter=", "bad value tau_inter=");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 inject=1.5",
                      "bad value inject=1.5 (expected a whole number of messages from 0 to");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 inject=-1",
                      "bad value inject=-1");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 inject=", "bad value inject=");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 inject=4K",
                      "bad value inject=4K");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 inject=2147483648",
                      "bad value inject=2147483648");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 inject=1 inject=2",
                      "gives inject twice");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 tau_inter=1 tau_inter=1",
                      "gives tau_inter twice");
    check_bad_line_in(2, "machine beta_inter=1 tau_inter=1 inject=1", "lacks beta=");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 beta_inter=1", "lacks port_share=");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 node_share=1",
                      "'node_share' is not one of beta=, tau=, rho=, port_share=, beta_inter=, "
                      "tau_inter=, inject=");
    check_bad_line_in(2,
                      "machine beta=1 tau=1 rho=1 port_share=1 beta_inter=1 tau_inter=1 "
                      "inject=1 sync=1 gap_inter=1 tau_large=1 large_from=1 rho_cached=1 "
                      "cached_bytes=1 x=1",
                      "too many fields");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 large_from=16K",
                      "bad value large_from=16K (expected a number >= 0)");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 sync=x",
                      "bad value sync=x (expected a number >= 0)");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 sync=-1e-7", "bad value sync=");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 sync=1 sync=2",
                      "gives sync twice");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 gap_inter=-2e-5",
                      "bad value gap_inter=-2e-5 (expected a number >= 0)");
    check_bad_line_in(2, "machine beta=1 tau=1 rho=1 port_share=1 gap_inter=1 gap_inter=1",
                      "gives gap_inter twice");
    check_bad_line_in(2, "xchg-tuning 2", "second version line");
    /* version 2 items in a version 1 file: reported and skipped */
    check_bad_line_in(1, "alltoall 16 nodes=4 0-* pairwise",
                      "nodes= needs 'xchg-tuning 2' (the file declares version 1); line skipped");
    check_bad_line_in(1, "alltoall 16 nodes=x 0-* pairwise", "nodes= needs 'xchg-tuning 2'");
    check_bad_line_in(1, "machine beta=1 tau=1 rho=1 port_share=1 beta_inter=2e-6",
                      "machine line: beta_inter= needs 'xchg-tuning 2' (the file declares "
                      "version 1); line skipped");
    check_bad_line_in(1, "machine beta=1 tau=1 rho=1 port_share=1 tau_inter=2e-9",
                      "machine line: tau_inter= needs 'xchg-tuning 2'");
    check_bad_line_in(1, "machine inject=4 beta=1 tau=1 rho=1 port_share=1",
                      "machine line: inject= needs 'xchg-tuning 2'");
    check_bad_line_in(1, "machine beta=1 tau=1 rho=1 port_share=1 sync=4e-7",
                      "machine line: sync= needs 'xchg-tuning 2'");
    check_bad_line_in(1, "machine beta=1 tau=1 rho=1 port_share=1 gap_inter=2e-5",
                      "machine line: gap_inter= needs 'xchg-tuning 2'");
    check_bad_line_in(1, "machine beta=1 tau=1 rho=1 port_share=1 tau_large=4e-11",
                      "machine line: tau_large= needs 'xchg-tuning 2'");
    check_bad_line_in(1, "machine beta=1 tau=1 rho=1 port_share=1 rho_cached=2e-11",
                      "machine line: rho_cached= needs 'xchg-tuning 2'");
}

/* A 100 KB value in a version 2 field: one short report quoting a prefix, with the reason. */
static void test_v2_long_fields(void)
{
    static const char *const formats[] = {"alltoall 2 nodes=%s 0 pairwise",
                                          "machine beta=1 tau=1 rho=1 port_share=1 inject=%s",
                                          "machine beta=1 tau=1 rho=1 port_share=1 beta_inter=%s"};
    static const char *const wants[] = {
        "bad nodes= range '9999999999999999999999999999999999999999...' (expected N",
        "bad value inject=9999999999999999999999999999999999999999... (expected a whole number",
        "bad value beta_inter=9999999999999999999999999999999999999999... (expected a number"};
    check_long_fields("xchg-tuning 2", '9', formats, wants, 3, "version 2");
}

/* The writer: version 2 exactly when needed, the machine line's new keys only when set, a
 * nodes column only when a rule has nodes=; read back the same, written again the same. */
static void test_v2_round_trip(void)
{
    xchg_table_t table, back;
    reports_t reports;
    xchg_rule_t rules[3];
    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    FILE *out;
    int rc;

    memset(&table, 0, sizeof table);
    memset(rules, 0, sizeof rules);
    rules[0] = (xchg_rule_t){.coll = XCHG_ALLTOALL,
                             .pmin = 16,
                             .pmax = 16,
                             .bmax = SIZE_MAX,
                             .algo = algo(XCHG_ALLTOALL, "pairwise"),
                             .params.nports = 2,
                             .nmin = 4,
                             .nmax = 4};
    rules[1] = (xchg_rule_t){.coll = XCHG_ALLTOALL,
                             .pmin = 2,
                             .pmax = 15,
                             .bmin = 1024,
                             .bmax = SIZE_MAX,
                             .algo = algo(XCHG_ALLTOALL, "native"),
                             .nmin = 2,
                             .nmax = INT_MAX};
    /* every layout: written without nodes= */
    rules[2] = (xchg_rule_t){.coll = XCHG_ALLGATHER,
                             .pmin = 1,
                             .pmax = INT_MAX,
                             .bmax = 63,
                             .algo = algo(XCHG_ALLGATHER, "ring"),
                             .nmin = 1,
                             .nmax = INT_MAX};
    table.rules = rules;
    table.has_machine = 1;
    table.machine = (xchg_machine_t){.beta = 1e-06, .tau = 1e-10, .rho = 5e-11, .port_share = 0.5};

    /* what needs version 2 */
    table.nrules = 3;
    CHECK(xchg_table_needs_v2(&table), "needs_v2: rules with nodes= need version 2");
    table.nrules = 0;
    CHECK(!xchg_table_needs_v2(&table), "needs_v2: a version 1 machine line does not");
    table.machine.inject = 2;
    CHECK(xchg_table_needs_v2(&table), "needs_v2: inject does");
    table.has_machine = 0;
    CHECK(!xchg_table_needs_v2(&table), "needs_v2: not without a machine line");
    table.has_machine = 1;
    table.machine.inject = 0;
    table.machine.tau_inter = 3e-10;
    CHECK(xchg_table_needs_v2(&table), "needs_v2: tau_inter does");
    table.machine.tau_inter = 0;
    table.machine.beta_inter = 3e-6;
    CHECK(xchg_table_needs_v2(&table), "needs_v2: beta_inter does");
    table.machine.beta_inter = 0;
    table.machine.sync = 4e-7;
    CHECK(xchg_table_needs_v2(&table), "needs_v2: sync does");
    table.machine.sync = 0;
    table.machine.gap_inter = 2e-5;
    CHECK(xchg_table_needs_v2(&table), "needs_v2: gap_inter does");
    table.machine.gap_inter = 0;
    table.nrules = 1;
    table.rules = &rules[2];
    CHECK(!xchg_table_needs_v2(&table), "needs_v2: nodes=* does not");
    out = open_memstream(&text, &len);
    xchg_table_write(out, &table, NULL);
    fclose(out);
    CHECK(strstr(text, "xchg-tuning 1\nmachine beta=1e-06 tau=1e-10 rho=5e-11 port_share=0.5\n") ==
                  text &&
              strstr(text, "\nallgather    *       0-63          ring\n") && !strstr(text, "nodes"),
          "write without version 2 items: expected version 1 and no nodes column, got:\n%s", text);
    free(text);
    text = NULL;

    /* a version 2 table */
    table.rules = rules;
    table.nrules = 3;
    table.machine.beta_inter = 6e-06;
    table.machine.tau_inter = 1.0 / 3.0 * 1e-9;
    table.machine.inject = 3;
    table.machine.sync = 4e-07;
    table.machine.gap_inter = 2.166e-05;
    table.machine.tau_large = 4.434e-11;
    table.machine.large_from = 16384;
    table.machine.rho_cached = 2.478e-11;
    table.machine.cached_bytes = 524288;
    out = open_memstream(&text, &len);
    rc = xchg_table_write(out, &table, "two levels");
    fclose(out);
    CHECK(rc == 0 && strncmp(text, "xchg-tuning 2\n# two levels\n", 27) == 0 &&
              strstr(text, "\nmachine beta=1e-06 tau=1e-10 rho=5e-11 port_share=0.5 "
                           "beta_inter=6e-06 tau_inter=3.333333333333333e-10 inject=3 "
                           "sync=4e-07 gap_inter=2.166e-05 tau_large=4.434e-11 "
                           "large_from=16384 rho_cached=2.478e-11 cached_bytes=524288\n") &&
              strstr(text, "\n# collective procs   nodes     bytes         algorithm") &&
              strstr(text, "\nalltoall     16      nodes=4   *             pairwise:k=2\n") &&
              strstr(text, "\nalltoall     2-15    nodes=2-* 1K-*          native\n") &&
              strstr(text, "\nallgather    *                 0-63          ring\n"),
          "write version 2: not as expected:\n%s", text);

    rc = parse(text, &back, &reports);
    CHECK(rc == 0 && reports.n == 0 && back.nrules == 3,
          "version 2 round trip: expected rc 0, no report, 3 rules; got %d, %d ('%s'), %d", rc,
          reports.n, reports.message[0], back.nrules);
    CHECK(back.has_machine && back.machine.beta_inter == table.machine.beta_inter &&
              back.machine.tau_inter == table.machine.tau_inter && back.machine.inject == 3 &&
              back.machine.gap_inter == table.machine.gap_inter &&
              back.machine.tau_large == table.machine.tau_large &&
              back.machine.large_from == table.machine.large_from &&
              back.machine.rho_cached == table.machine.rho_cached &&
              back.machine.cached_bytes == table.machine.cached_bytes,
          "version 2 round trip machine: expected %.17g %.17g 3 %.17g, got %.17g %.17g %d %.17g",
          table.machine.beta_inter, table.machine.tau_inter, table.machine.gap_inter,
          back.machine.beta_inter, back.machine.tau_inter, back.machine.inject,
          back.machine.gap_inter);
    for (int i = 0; i < back.nrules && i < 3; i++) {
        const xchg_rule_t *a = &rules[i], *b = &back.rules[i];
        int any = a->nmin <= 1 && a->nmax == INT_MAX;
        CHECK(a->coll == b->coll && a->pmin == b->pmin && a->pmax == b->pmax &&
                  a->bmin == b->bmin && a->bmax == b->bmax && a->algo == b->algo &&
                  a->params.nports == b->params.nports &&
                  (any ? b->nmax == 0 : (a->nmin == b->nmin && a->nmax == b->nmax)),
              "version 2 round trip rule %d: nodes %d-%d read back as %d-%d", i, a->nmin, a->nmax,
              b->nmin, b->nmax);
    }
    out = open_memstream(&text2, &len2);
    xchg_table_write(out, &back, "two levels");
    fclose(out);
    CHECK(strcmp(text, text2) == 0, "write(parse(write(t))) differs from write(t):\n%s---\n%s",
          text, text2);
    xchg_table_free(&back);
    free(text);
    free(text2);
}

static void test_load(void)
{
    char path[] = "/tmp/test_table_XXXXXX";
    xchg_table_t table;
    reports_t reports;
    int fd, rc;
    static const char text[] = "xchg-tuning 1\nallgather 2 0 ring\nallgather 3 x ring\n";

    memset(&table, 0, sizeof table);
    memset(&reports, 0, sizeof reports);
    rc = xchg_table_load("/nonexistent/xchg/table.txt", &table, collect, &reports);
    CHECK(rc == -1 && table.nrules == 0,
          "load of a missing file: expected -1 and 0 rules, got "
          "%d %d",
          rc, table.nrules);

    fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp failed");
    if (fd < 0)
        return;
    CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "write to %s", path);
    close(fd);
    memset(&reports, 0, sizeof reports);
    rc = xchg_table_load(path, &table, collect, &reports);
    CHECK(rc == 3 && reports.n == 1 && reports.line[0] == 3 && table.nrules == 1,
          "load: expected rc 3, one report at line 3, 1 rule; got %d, %d reports, %d rules", rc,
          reports.n, table.nrules);
    xchg_table_free(&table);
    unlink(path);
}

/* Loading path gives rc and exactly one report, at line want_line, containing want and
 * "file ignored"; no rule and no machine line are kept. */
static void check_load_fails(const char *path, int want_rc, int want_line, const char *want)
{
    xchg_table_t table;
    reports_t reports;
    int rc;

    memset(&table, 0, sizeof table);
    memset(&reports, 0, sizeof reports);
    alarm(20); /* a load that blocks (a FIFO) fails the test instead of hanging it */
    rc = xchg_table_load(path, &table, collect, &reports);
    alarm(0);
    CHECK(rc == want_rc && reports.n == 1 && reports.line[0] == want_line,
          "load %s: expected rc %d and one report at line %d, got rc %d, %d reports (line %d)",
          path, want_rc, want_line, rc, reports.n, reports.line[0]);
    CHECK(strstr(reports.message[0], want) && strstr(reports.message[0], "file ignored"),
          "load %s: expected a message with '%s' and 'file ignored', got '%s'", path, want,
          reports.message[0]);
    CHECK(table.nrules == 0 && !table.has_machine,
          "load %s: expected no rule and no machine line, got %d rules, has_machine %d", path,
          table.nrules, table.has_machine);
    xchg_table_free(&table);
}

/* Write len bytes to dir/name; the path goes to path. */
static void write_file(const char *dir, const char *name, const char *bytes, size_t len, char *path,
                       size_t pathlen)
{
    FILE *file;
    snprintf(path, pathlen, "%s/%s", dir, name);
    file = fopen(path, "wb");
    CHECK(file && fwrite(bytes, 1, len, file) == len && fclose(file) == 0, "write %s", path);
}

/* What is not a regular text file of at most 4 MiB is reported and ignored as a whole. */
static void test_load_bad_files(void)
{
    static const char nul_first[] = "\0xchg-tuning 1\nallgather 2 0 ring\n";
    static const char nul_line3[] = "xchg-tuning 1\nallgather 2 0 ring\nalltoall\0 2 0 native\n"
                                    "allgather 3 0 ring\n";
    static const char comments[] = "# only comments\n\n   # and blanks\n";
    char dir[] = "/tmp/test_table_XXXXXX", path[256];
    int fd;

    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    check_load_fails("/nonexistent/xchg/table.txt", -1, 0,
                     "cannot open the file (No such file or directory)");

    /* not regular: a FIFO nobody writes (an open that waited would never return), a device
     * that never ends, a directory */
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    check_load_fails(path, -1, 0, "not a regular file (a FIFO)");
    unlink(path);
    check_load_fails("/dev/zero", -1, 0, "not a regular file (a character device)");
    check_load_fails(dir, -1, 0, "not a regular file (a directory)");

    /* one byte over the limit (sparse, so nothing is written) */
    snprintf(path, sizeof path, "%s/large", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, XCHG_TABLE_MAX_BYTES + 1) == 0, "ftruncate %s", path);
    if (fd >= 0)
        close(fd);
    check_load_fails(path, -1, 0, "larger than 4 MiB (4194305 bytes)");
    unlink(path);

    /* not text: a NUL byte reported at its line, the whole file ignored */
    write_file(dir, "nul_first", nul_first, sizeof nul_first - 1, path, sizeof path);
    check_load_fails(path, 1, 1, "NUL byte: the file is not text");
    unlink(path);
    write_file(dir, "nul_line3", nul_line3, sizeof nul_line3 - 1, path, sizeof path);
    check_load_fails(path, 3, 3, "NUL byte: the file is not text");
    unlink(path);

    /* no version line: empty, comments only */
    write_file(dir, "empty", "", 0, path, sizeof path);
    check_load_fails(path, -1, 0, "no 'xchg-tuning 1' line (nor 'xchg-tuning 2'");
    unlink(path);
    write_file(dir, "comments", comments, sizeof comments - 1, path, sizeof path);
    check_load_fails(path, -1, 0, "no 'xchg-tuning 1' line (nor 'xchg-tuning 2'");
    unlink(path);
    rmdir(dir);
}

/* A table of exactly 4 MiB (one long comment) still loads. */
static void test_load_limit(void)
{
    static const char head[] = "xchg-tuning 1\nallgather 2 0 ring\n#";
    size_t size = XCHG_TABLE_MAX_BYTES;
    char *text = malloc(size);
    char dir[] = "/tmp/test_table_XXXXXX", path[256];
    xchg_table_t table;
    reports_t reports;
    int rc;

    if (!text || !mkdtemp(dir)) {
        CHECK(0, "malloc or mkdtemp");
        free(text);
        return;
    }
    memset(text, 'c', size);
    memcpy(text, head, sizeof head - 1);
    text[size - 1] = '\n';
    write_file(dir, "limit", text, size, path, sizeof path);
    memset(&table, 0, sizeof table);
    memset(&reports, 0, sizeof reports);
    rc = xchg_table_load(path, &table, collect, &reports);
    CHECK(rc == 0 && reports.n == 0 && table.nrules == 1,
          "a 4 MiB table: expected rc 0, no report, 1 rule; got rc %d, %d reports ('%s'), %d "
          "rules",
          rc, reports.n, reports.message[0], table.nrules);
    xchg_table_free(&table);
    unlink(path);
    rmdir(dir);
    free(text);
}

int main(void)
{
    test_valid();
    test_bad_lines();
    test_version();
    test_no_version();
    test_first_bad_line();
    test_long_lines();
    test_ranges_and_lookup();
    test_round_trip();
    test_native_lines();
    test_native_long_fields();
    test_native_curve_at();
    test_native_curve_add();
    test_native_too_many_curves();
    test_native_round_trip();
    test_native_cost();
    test_v2_valid();
    test_v2_bad_lines();
    test_v2_long_fields();
    test_v2_round_trip();
    test_load();
    test_load_bad_files();
    test_load_limit();
    return unit_finish("test_table");
}
