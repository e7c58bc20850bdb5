/*
 * table_write.h: writing a tuning table in the format that xchg_table_parse reads
 * (docs/tuning-table.md describes the format). Pure C, no MPI calls.
 */
#ifndef XCHG_TABLE_WRITE_H
#define XCHG_TABLE_WRITE_H

#include <stdio.h>
#include "table.h"

/* Write table to out: the version line (`xchg-tuning 2` only when the table needs it,
 * xchg_table_needs_v2, else `xchg-tuning 1`, so that an older xchg still reads it), comment
 * (each of its lines as a '#' line; NULL for none), the machine line when table->has_machine,
 * native's curves, then one line per rule in order. Returns 0, or -1 when writing failed. */
int xchg_table_write(FILE *out, const xchg_table_t *table, const char *comment);

/* Format a size range as the table writes it ("0", "1K-2047", "4M-*", "*"); out should hold
 * at least 48 characters. */
void xchg_table_format_bytes(size_t bmin, size_t bmax, char *out, size_t outlen);

#endif
