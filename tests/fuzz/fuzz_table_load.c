/*
 * fuzz_table_load.c: reading a tuning table from a file (tuning/table_load.c: xchg_table_load), on
 * a temporary file holding exactly the input's bytes, NUL bytes included.
 *
 * Checks, besides "no crash, no sanitizer finding":
 *  - a file with a NUL byte is ignored as a whole: the return value is the line of its first
 *    NUL byte, reported once there ("NUL byte: the file is not text; file ignored"), and the
 *    table stays empty;
 *  - any other file loads exactly as xchg_table_parse parses its text: the same return value,
 *    the same reports (lines and messages), the same table; then everything table_check.h
 *    checks on that table (the round trip through the writer included).
 * Once, at start: a path that does not exist and a directory are reported at line 0 and
 * ignored (-1).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "table_check.h"

static char path[4096];

static void remove_file(void)
{
    unlink(path);
}

/* A file path cannot be: reported at line 0 with the reason, table empty, -1. */
static void check_unusable(const char *unusable, const char *reason)
{
    xchg_table_t table;
    reports_t reports = {0};
    int rc;
    memset(&table, 0, sizeof table);
    rc = xchg_table_load(unusable, &table, collect_report, &reports);
    FUZZ_CHECK(rc == -1 && reports.n == 1 && reports.line[0] == 0 &&
                   strstr(reports.message[0], reason) && table.nrules == 0,
               "%s: rc %d, %d reports (%s)", unusable, rc, reports.n,
               reports.n ? reports.message[0] : "");
    xchg_table_free(&table);
    free_reports(&reports);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("TMPDIR");
    int fd;
    (void)argc;
    (void)argv;
    snprintf(path, sizeof path, "%s/xchg-fuzz-table-XXXXXX", dir && *dir ? dir : "/tmp");
    fd = mkstemp(path);
    if (fd < 0) {
        perror("fuzz_table_load: mkstemp");
        exit(1);
    }
    close(fd);
    atexit(remove_file);
    check_unusable("/nonexistent/xchg-fuzz/table", "cannot open the file");
    check_unusable("/", "not a regular file (a directory)");
    return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    size_t done = 0;
    if (fd < 0)
        abort();
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            abort();
        done += (size_t)n;
    }
    close(fd);
}

/* The same reports, in the same order. */
static int same_reports(const reports_t *a, const reports_t *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->line[i] != b->line[i] || strcmp(a->message[i], b->message[i]) != 0)
            return 0;
    return 1;
}

/* A file with a NUL byte: ignored, reported at the line of its first NUL byte. */
static void check_nul(const uint8_t *data, const uint8_t *nul, int rc, const xchg_table_t *table,
                      const reports_t *reports)
{
    int line = 1;
    for (const uint8_t *p = data; p < nul; p++)
        line += *p == '\n';
    FUZZ_CHECK(rc == line && reports->n == 1 && reports->line[0] == line &&
                   strcmp(reports->message[0], "NUL byte: the file is not text; file ignored") == 0,
               "a NUL byte at line %d: rc %d, %d reports (%s)", line, rc, reports->n,
               reports->n ? reports->message[0] : "");
    FUZZ_CHECK(table->nrules == 0 && !table->has_machine && table->native.ncurves == 0,
               "a file with a NUL byte gave %d rules", table->nrules);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    xchg_table_t loaded, parsed;
    reports_t load_reports = {0}, parse_reports = {0};
    char *text = fuzz_text(data, size), *comment = strndup(text, 256);
    int rc, parse_rc;

    if (!comment)
        abort();
    write_input(data, size);
    memset(&loaded, 0, sizeof loaded);
    memset(&parsed, 0, sizeof parsed);
    rc = xchg_table_load(path, &loaded, collect_report, &load_reports);
    if (nul) {
        check_nul(data, nul, rc, &loaded, &load_reports);
    } else {
        parse_rc = xchg_table_parse(text, &parsed, collect_report, &parse_reports);
        FUZZ_CHECK(rc == parse_rc && same_reports(&load_reports, &parse_reports),
                   "load: rc %d, %d reports; parse: rc %d, %d reports", rc, load_reports.n,
                   parse_rc, parse_reports.n);
        FUZZ_CHECK(loaded.nrules == parsed.nrules && same_machine(&loaded, &parsed) &&
                       same_curves(&loaded.native, &parsed.native),
                   "load and parse give different tables");
        for (int i = 0; i < loaded.nrules; i++)
            FUZZ_CHECK(same_rule(&loaded.rules[i], &parsed.rules[i]) &&
                           loaded.rules[i].line == parsed.rules[i].line,
                       "rule %d: load and parse differ", i);
        check_table(text, &loaded, rc, &load_reports, comment);
    }
    xchg_table_free(&loaded);
    xchg_table_free(&parsed);
    free_reports(&load_reports);
    free_reports(&parse_reports);
    free(comment);
    free(text);
    return 0;
}
