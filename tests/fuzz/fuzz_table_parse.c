/*
 * fuzz_table_parse.c: the tuning-table parser (tuning/table_parse.c: xchg_table_parse) on the input
 * as text, then everything table_check.h checks on what it parsed: reports against the
 * return value, well-formed rules, machine line and native curves, first-match lookup,
 * xchg_table_needs_v2, and the round trip through xchg_table_write (a table that parsed
 * writes, with the input's first 256 bytes as its comment, into text that parses to the same
 * rules and writes again to the same text). Any table the parser accepts, tuned, learned or
 * cached, is such a text.
 */
#include "table_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    char *comment = strndup(text, 256);
    xchg_table_t table;
    reports_t reports = {0};
    int rc;

    if (!comment)
        abort();
    memset(&table, 0, sizeof table);
    rc = xchg_table_parse(text, &table, collect_report, &reports);
    check_table(text, &table, rc, &reports, comment);
    xchg_table_free(&table);
    free_reports(&reports);
    free(comment);
    free(text);
    return 0;
}
