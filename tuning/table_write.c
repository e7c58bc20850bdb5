/*
 * table_write.c: a tuning table written as text that xchg_table_parse reads back to the same
 * rules, machine line and curves (table_write.h). Pure C, no MPI calls; docs/tuning-table.md
 * describes the format.
 *
 * The writer declares version 2 only when the table uses a version 2 item
 * (xchg_table_needs_v2), so that an xchg that reads only version 1 reads every other table it
 * writes.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "table.h"
#include "table_internal.h"
#include "table_write.h"

/* 1 when the rule's nodes= field leaves out some layout. */
static int rule_has_nodes(const xchg_rule_t *rule)
{
    return rule->nmax != 0 && !(rule->nmin <= 1 && rule->nmax == INT_MAX);
}

static int machine_has_v2(const xchg_table_t *table)
{
    const xchg_machine_t *m = &table->machine;
    return table->has_machine &&
           (m->beta_inter != 0 || m->tau_inter != 0 || m->inject != 0 || m->sync != 0 ||
            m->gap_inter != 0 || m->tau_large != 0 || m->rho_cached != 0);
}

int xchg_table_needs_v2(const xchg_table_t *table)
{
    for (int i = 0; i < table->nrules; i++)
        if (rule_has_nodes(&table->rules[i]))
            return 1;
    return machine_has_v2(table);
}

/* A byte count with the largest exact K/M/G suffix. */
static void format_count(size_t value, char *out, size_t outlen)
{
    static const char suffixes[] = "GMK";
    for (int i = 0; i < 3; i++) {
        size_t unit = (size_t)1 << (10 * (3 - i));
        if (value >= unit && value % unit == 0) {
            snprintf(out, outlen, "%zu%c", value / unit, suffixes[i]);
            return;
        }
    }
    snprintf(out, outlen, "%zu", value);
}

void xchg_table_format_bytes(size_t bmin, size_t bmax, char *out, size_t outlen)
{
    char lo[24], hi[24];
    if (bmin == 0 && bmax == SIZE_MAX) {
        snprintf(out, outlen, "*");
        return;
    }
    format_count(bmin, lo, sizeof lo);
    format_count(bmax, hi, sizeof hi);
    if (bmax == SIZE_MAX)
        snprintf(out, outlen, "%s-*", lo);
    else if (bmin == bmax)
        snprintf(out, outlen, "%s", lo);
    else
        snprintf(out, outlen, "%s-%s", lo, hi);
}

static void format_procs(int pmin, int pmax, char *out, size_t outlen)
{
    if (pmin <= 1 && pmax == INT_MAX)
        snprintf(out, outlen, "*");
    else if (pmax == INT_MAX)
        snprintf(out, outlen, "%d-*", pmin);
    else if (pmin == pmax)
        snprintf(out, outlen, "%d", pmin);
    else
        snprintf(out, outlen, "%d-%d", pmin, pmax);
}

/* The shortest %g form that reads back as exactly the same double. */
static void format_double(double value, char *out, size_t outlen)
{
    for (int precision = 6; precision <= 17; precision++) {
        snprintf(out, outlen, "%.*g", precision, value);
        if (strtod(out, NULL) == value)
            return;
    }
}

/* " key=value" for a version 2 key in seconds that is set. */
static void write_seconds(FILE *out, int key, double value)
{
    char text[32];
    if (value == 0)
        return;
    format_double(value, text, sizeof text);
    fprintf(out, " %s=%s", xchg_table_machine_keys[key], text);
}

/* The machine line: the version 1 keys, then the version 2 keys that are set. */
static void write_machine(FILE *out, const xchg_machine_t *machine)
{
    const double values[] = {machine->beta,       machine->tau,        machine->rho,
                             machine->port_share, machine->beta_inter, machine->tau_inter};
    fprintf(out, "machine");
    for (int k = 0; k < M_INJECT; k++) {
        char text[32];
        if (k > M_PORT_SHARE && values[k] == 0)
            continue;
        format_double(values[k], text, sizeof text);
        fprintf(out, " %s=%s", xchg_table_machine_keys[k], text);
    }
    if (machine->inject != 0)
        fprintf(out, " inject=%d", machine->inject);
    write_seconds(out, M_SYNC, machine->sync);
    write_seconds(out, M_GAP_INTER, machine->gap_inter);
    if (machine->tau_large != 0) { /* large_from only with it, and then even when 0 */
        char text[32];
        write_seconds(out, M_TAU_LARGE, machine->tau_large);
        format_double(machine->large_from, text, sizeof text);
        fprintf(out, " %s=%s", xchg_table_machine_keys[M_LARGE_FROM], text);
    }
    if (machine->rho_cached != 0) { /* cached_bytes only with it, and then even when 0 */
        char text[32];
        write_seconds(out, M_RHO_CACHED, machine->rho_cached);
        format_double(machine->cached_bytes, text, sizeof text);
        fprintf(out, " %s=%s", xchg_table_machine_keys[M_CACHED_BYTES], text);
    }
    fputc('\n', out);
}

int xchg_table_write(FILE *out, const xchg_table_t *table, const char *comment)
{
    int nodes_column = 0;

    fprintf(out, "xchg-tuning %d\n", xchg_table_needs_v2(table) ? 2 : 1);

    /* the comment, one '#' line per line of it */
    while (comment && *comment) {
        size_t len = strcspn(comment, "\n");
        fprintf(out, "# %.*s\n", (int)len, comment);
        comment += len + (comment[len] == '\n');
    }

    if (table->has_machine)
        write_machine(out, &table->machine);

    /* native's measured curves, one line each */
    if (table->native.ncurves > 0)
        fprintf(out, "# native %-10s %-5s %s\n", "collective", "procs",
                "bytes:seconds per call of the MPI library's own collective");
    for (int i = 0; i < table->native.ncurves; i++) {
        const xchg_native_curve_t *curve = &table->native.curves[i];
        fprintf(out, "native %-10s %-5d", xchg_coll_name(curve->coll), curve->comm_size);
        for (int j = 0; j < curve->npoints; j++) {
            char bytes[24], seconds[32];
            format_count(curve->points[j].bytes, bytes, sizeof bytes);
            format_double(curve->points[j].seconds, seconds, sizeof seconds);
            fprintf(out, " %s:%s", bytes, seconds);
        }
        fputc('\n', out);
    }

    /* the rules; a column for nodes= when a rule has one */
    for (int i = 0; i < table->nrules; i++)
        nodes_column |= rule_has_nodes(&table->rules[i]);
    if (table->nrules > 0 && nodes_column)
        fprintf(out, "# %-10s %-7s %-9s %-13s %s\n", "collective", "procs", "nodes", "bytes",
                "algorithm[:key=value,...]");
    else if (table->nrules > 0)
        fprintf(out, "# %-10s %-7s %-13s %s\n", "collective", "procs", "bytes",
                "algorithm[:key=value,...]");
    for (int i = 0; i < table->nrules; i++) {
        const xchg_rule_t *rule = &table->rules[i];
        const xchg_algo_t *algo = &xchg_algos[rule->algo];
        char procs[32], nodes[48] = "", bytes[64], params[128];
        format_procs(rule->pmin, rule->pmax, procs, sizeof procs);
        if (rule_has_nodes(rule)) {
            memcpy(nodes, "nodes=", 6);
            format_procs(rule->nmin, rule->nmax, nodes + 6, sizeof nodes - 6);
        }
        xchg_table_format_bytes(rule->bmin, rule->bmax, bytes, sizeof bytes);
        xchg_params_format(algo, &rule->params, params, sizeof params);
        if (nodes_column)
            fprintf(out, "%-12s %-7s %-9s %-13s %s%s%s\n", xchg_coll_name(rule->coll), procs, nodes,
                    bytes, algo->name, params[0] ? ":" : "", params);
        else
            fprintf(out, "%-12s %-7s %-13s %s%s%s\n", xchg_coll_name(rule->coll), procs, bytes,
                    algo->name, params[0] ? ":" : "", params);
    }
    return ferror(out) || fflush(out) != 0 ? -1 : 0;
}
