/*
 * stats.c: XCHG_STATS=1. Each rank counts, per (collective, algorithm, parameters): calls, the
 * smallest and largest block (the size key of shim/select.c; for alltoallv forced to an
 * algorithm that skips the agreement, this rank's largest message), and the time spent. At
 * MPI_Finalize the records of all ranks are gathered on rank 0 of MPI_COMM_WORLD, merged, and
 * printed one line each:
 *   xchg: alltoall radix [r=2,k=1] calls=120 min_block=0 max_block=40000 time=0.012345s
 * calls and time are sums over all ranks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define XCHG_STATS_MAX 256

typedef struct stat_record {
    char name[96]; /* "alltoall radix [r=2,k=1]" */
    unsigned long long calls;
    unsigned long long min_block, max_block;
    double seconds;
} stat_record_t;

static stat_record_t records[XCHG_STATS_MAX];
static int nrecords;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

static void merge(stat_record_t *table, int *n, const stat_record_t *rec)
{
    for (int i = 0; i < *n; i++) {
        if (strcmp(table[i].name, rec->name) == 0) {
            table[i].calls += rec->calls;
            table[i].seconds += rec->seconds;
            if (rec->min_block < table[i].min_block)
                table[i].min_block = rec->min_block;
            if (rec->max_block > table[i].max_block)
                table[i].max_block = rec->max_block;
            return;
        }
    }
    if (*n < XCHG_STATS_MAX)
        table[(*n)++] = *rec;
}

void xchg_stats_add(int coll, int algo, const xchg_params_t *params, size_t block_bytes,
                    double seconds)
{
    stat_record_t rec;
    char text[64];

    if (!xchg_config.stats)
        return;
    xchg_params_format(&xchg_algos[algo], params, text, sizeof text);
    snprintf(rec.name, sizeof rec.name, "%s %s [%s]", xchg_coll_name(coll), xchg_algos[algo].name,
             text);
    rec.calls = 1;
    rec.min_block = rec.max_block = block_bytes;
    rec.seconds = seconds;
    pthread_mutex_lock(&stats_lock);
    merge(records, &nrecords, &rec);
    pthread_mutex_unlock(&stats_lock);
}

void xchg_stats_report(void)
{
    int size, rank, *counts = NULL, *displs = NULL, total = 0;
    stat_record_t *all = NULL;

    if (!xchg_config.stats)
        return;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
    }
    {
        int mine = nrecords * (int)sizeof(stat_record_t);
        PMPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < size; i++) {
                displs[i] = total;
                total += counts[i];
            }
            all = malloc(total > 0 ? (size_t)total : 1);
        }
        PMPI_Gatherv(records, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    if (rank == 0 && all) {
        static stat_record_t merged[XCHG_STATS_MAX];
        int nmerged = 0;
        for (int i = 0; i < total / (int)sizeof(stat_record_t); i++)
            merge(merged, &nmerged, &all[i]);
        for (int i = 0; i < nmerged; i++)
            fprintf(stderr, "xchg: %s calls=%llu min_block=%llu max_block=%llu time=%.6fs\n",
                    merged[i].name, merged[i].calls, merged[i].min_block, merged[i].max_block,
                    merged[i].seconds);
        fflush(stderr);
    }
    free(all);
    free(counts);
    free(displs);
}
