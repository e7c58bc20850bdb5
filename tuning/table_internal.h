/*
 * table_internal.h: what the tuning table's parser (table_parse.c), file reader
 * (table_load.c) and writer (table_write.c) share, and nothing else includes: the state
 * that problems are reported through, and the machine line's keys (docs/tuning-table.md
 * describes the format). Pure C, no MPI calls.
 */
#ifndef XCHG_TABLE_INTERNAL_H
#define XCHG_TABLE_INTERNAL_H

#include "table.h"

/* Parsing state shared by the line handlers; the file reader reports through it too. */
typedef struct parse_state {
    xchg_table_t *table;
    xchg_table_report_fn *report;
    void *arg;
    int first_bad;    /* first bad line number, 0 so far none */
    int machine_line; /* line of the accepted machine line, 0 so far none */
    int rules_cap;
    int version; /* of the version line: 1 or 2 */
} parse_state_t;

/* Report a problem at line (0: the file as a whole) through st's report function, the
 * message formatted as printf does; the first such line becomes st->first_bad. */
void xchg_table_report_line(parse_state_t *st, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The machine line's keys: the first four required (version 1), the others optional
 * (version 2; 0 or left out: the inter-node constants are the intra-node ones, no limit). */
enum {
    M_BETA,
    M_TAU,
    M_RHO,
    M_PORT_SHARE,
    M_BETA_INTER,
    M_TAU_INTER,
    M_INJECT,
    M_SYNC,
    M_GAP_INTER,
    M_TAU_LARGE,
    M_LARGE_FROM,
    M_RHO_CACHED,
    M_CACHED_BYTES,
    M_NKEYS
};
extern const char *const xchg_table_machine_keys[M_NKEYS];

#endif
