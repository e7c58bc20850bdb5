/*
 * table.h: the tuning table (format: docs/tuning-table.md).
 * Pure C: parse, look up, write. No MPI calls.
 */
#ifndef XCHG_TABLE_H
#define XCHG_TABLE_H

#include <stdio.h>
#include <string.h>
#include "../algos/sched/types.h"
#include "size.h" /* XCHG_QUOTE for the messages of every parser */

/* The largest tuning table xchg_table_load reads (a real one is a few KB). */
#define XCHG_TABLE_MAX_BYTES ((size_t)4 << 20)

/* The table versions this xchg reads: 1, and 2, which adds the machine line's inter-node
 * constants and injection limit and the rules' nodes= field (docs/tuning-table.md). */
#define XCHG_TABLE_VERSION 2

typedef struct xchg_rule {
    int coll;
    int pmin, pmax;    /* communicator sizes, inclusive */
    size_t bmin, bmax; /* size key (xchg_size_key) in bytes, inclusive */
    int algo;          /* registry index */
    xchg_params_t params;
    int line;       /* line of the file it came from */
    int nmin, nmax; /* nodes the communicator spans (nodes=, version 2), inclusive; both 0 (no
                       nodes= field): any layout */
} xchg_rule_t;

/* native's measured cost curve: the MPI library's own collective timed by xchg-tune for one
 * collective and one communicator size, at a few size keys. */
#define XCHG_NATIVE_MAX_POINTS 64
/* The most curves a table holds (xchg-tune writes at most 3 per communicator size). */
#define XCHG_NATIVE_MAX_CURVES 4096

typedef struct xchg_native_point {
    size_t bytes;   /* size key (as for rules) */
    double seconds; /* one call, >= 0 */
} xchg_native_point_t;

typedef struct xchg_native_curve {
    int coll;
    int comm_size;
    int npoints;                 /* 1 .. XCHG_NATIVE_MAX_POINTS */
    xchg_native_point_t *points; /* [npoints], bytes strictly increasing */
    int line;                    /* line of the file it came from */
} xchg_native_curve_t;

/* Every curve of a table, at most one per (collective, communicator size). The machine
 * constants point here (xchg_machine_t.native) so that xchg_cost_native can use them. */
typedef struct xchg_native_curves {
    int ncurves, cap;
    xchg_native_curve_t *curves;
} xchg_native_curves_t;

typedef struct xchg_table {
    int nrules;
    xchg_rule_t *rules;
    int has_machine;        /* the header gave beta, tau, rho, port_share (and maybe more) */
    xchg_machine_t machine; /* its native field is NULL: the curves are in native */
    xchg_native_curves_t native;
} xchg_table_t;

/* Called once per problem: the file line number and a message naming what is wrong; line 0
 * when the problem is the file as a whole (unreadable, not a regular file, too large, no
 * version line). Every message ends in "line skipped", "rule skipped" or "file ignored". */
typedef void xchg_table_report_fn(void *arg, int line, const char *message);

/* Parse text into table (which the caller zeroes first). Malformed lines and rules naming
 * an unknown algorithm are reported and skipped. Returns the first bad line number, 0 if
 * none, -1 when the text has no version line at all (empty, blank or comments only). */
int xchg_table_parse(const char *text, xchg_table_t *table, xchg_table_report_fn *report,
                     void *arg);
/* Read and parse a file: only a regular file of at most XCHG_TABLE_MAX_BYTES, text without
 * NUL bytes (a NUL byte is reported at its line and the file ignored: table left empty).
 * -1 when the file cannot be used at all (reported at line 0; errno set when it could not
 * be opened or read), else as parse. */
int xchg_table_load(const char *path, xchg_table_t *table, xchg_table_report_fn *report, void *arg);
/* The reading half of xchg_table_load: the file's text (NUL-terminated, malloc'd) for
 * xchg_table_parse, or NULL when the file cannot be used, reported as xchg_table_load reports
 * it; *status gets what xchg_table_load would return then (-1, or the line of a NUL byte). */
char *xchg_table_read(const char *path, int *status, xchg_table_report_fn *report, void *arg);
/* The first rule that covers (coll, comm_size, nnodes, size_key), or NULL; nnodes is the
 * number of nodes the call's communicator spans (topo->nnodes; 1 when unknown). */
const xchg_rule_t *xchg_table_lookup(const xchg_table_t *table, int coll, int comm_size, int nnodes,
                                     size_t size_key);
/* 1 when the table needs version 2 to be written: a machine line with beta_inter, tau_inter
 * or inject, or a rule with a nodes= field that is not every layout. */
int xchg_table_needs_v2(const xchg_table_t *table);
/* The curve of (coll, comm_size), or NULL (also when curves is NULL). */
const xchg_native_curve_t *xchg_native_curve_find(const xchg_native_curves_t *curves, int coll,
                                                  int comm_size);
/* The curve's seconds at size_key: linear between neighbouring points; below the first point
 * the first point's value; above the last the line through the last two points, never falling
 * (a curve that falls there stays at its last value; one point: its value everywhere). */
double xchg_native_curve_at(const xchg_native_curve_t *curve, size_t size_key);
/* Add a copy of npoints points (bytes strictly increasing, seconds finite and >= 0, 1 ..
 * XCHG_NATIVE_MAX_POINTS of them) as the curve of (coll, comm_size), replacing the one it
 * already has. 0, or -1 when the points are not a valid curve, the curves are at
 * XCHG_NATIVE_MAX_CURVES or memory is exhausted (curves are then unchanged). */
int xchg_native_curve_add(xchg_native_curves_t *curves, int coll, int comm_size,
                          const xchg_native_point_t *points, int npoints, int line);
/* Free the rules and the curves; the table is empty afterwards. */
void xchg_table_free(xchg_table_t *table);

#endif
