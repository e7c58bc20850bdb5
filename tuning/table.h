/*
 * table.h: the tuning table (format documented in README.md, "The tuning table").
 * Pure C: parse, look up, write. No MPI calls.
 */
#ifndef XCHG_TABLE_H
#define XCHG_TABLE_H

#include <stdio.h>
#include "../algos/xchg.h"

typedef struct xchg_rule {
    int coll;
    int pmin, pmax;     /* communicator sizes, inclusive */
    size_t bmin, bmax;  /* size key (xchg_size_key) in bytes, inclusive */
    int algo;           /* registry index */
    xchg_params_t params;
    int line;           /* line of the file it came from */
} xchg_rule_t;

typedef struct xchg_table {
    int nrules;
    xchg_rule_t *rules;
    int has_machine;        /* the header gave beta, tau, rho, port_share */
    xchg_machine_t machine;
} xchg_table_t;

/* Called once per bad line (file line number, message naming what is wrong). */
typedef void xchg_table_report_fn(void *arg, int line, const char *message);

/* Parse text into table (which the caller zeroes first). Malformed lines and rules naming
 * an unknown algorithm are reported and skipped. Returns the first bad line number, 0 if none. */
int xchg_table_parse(const char *text, xchg_table_t *table, xchg_table_report_fn *report,
                     void *arg);
/* Read and parse a file; -1 when it cannot be read (table left empty), else as parse. */
int xchg_table_load(const char *path, xchg_table_t *table, xchg_table_report_fn *report,
                    void *arg);
/* The first rule that covers (coll, comm_size, size_key), or NULL. */
const xchg_rule_t *xchg_table_lookup(const xchg_table_t *table, int coll, int comm_size,
                                     size_t size_key);
void xchg_table_free(xchg_table_t *table);

#endif
