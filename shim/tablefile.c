/*
 * tablefile.c: a tuning table's text and file, whoever owns the table (the cache, XCHG_TUNING,
 * XCHG_LEARN): its text passed from world rank 0 to every rank, so that every rank parses the
 * same bytes, and a table written to a file atomically, ended by the line that tells a whole
 * file from a cut one (XCHG_TABLE_END, shim.h). Nothing here reports: the callers name what
 * failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"
#include "../tuning/table_write.h"

/* Pieces of xchg_share_text's broadcast: a rank without room for the text receives into a
 * buffer of this size that it discards. */
#define SHARE_PIECE 65536

char *xchg_share_text(char *text, int *failed)
{
    static char discard[SHARE_PIECE];
    long len = text ? (long)strlen(text) + 1 : 0;
    int rank = 0, have, all = 0;

    *failed = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (xchg_own_bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD) != MPI_SUCCESS || len <= 0) {
        free(text);
        return NULL;
    }
    if (rank != 0)
        text = malloc((size_t)len); /* rank 0 has it: len > 0 */
    have = text != NULL;
    for (long at = 0; at < len; at += SHARE_PIECE) {
        int n = len - at < SHARE_PIECE ? (int)(len - at) : SHARE_PIECE;
        have &= xchg_own_bcast(text ? text + at : discard, n, MPI_CHAR, 0, MPI_COMM_WORLD) ==
                MPI_SUCCESS;
    }
    if (xchg_own_allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
        !all) {
        *failed = 1;
        free(text);
        return NULL;
    }
    text[len - 1] = '\0';
    return text;
}

int xchg_table_file_write(const char *path, const xchg_table_t *table, const char *comment,
                          unsigned mode)
{
    char temp[4200];
    FILE *out;
    int fd, rc = 0;

    errno = 0;
    for (int attempt = 0;; attempt++) {
        snprintf(temp, sizeof temp, "%s.%d.%d.tmp", path, (int)getpid(), attempt);
        fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
        if (fd >= 0 || errno != EEXIST || attempt > 100)
            break;
    }
    if (fd < 0)
        return -1;
    out = fdopen(fd, "w");
    if (!out) {
        close(fd);
        unlink(temp);
        return -1;
    }
    rc = xchg_table_write(out, table, comment);
    if (rc == 0) {
        long above = ftell(out);
        rc = above < 0 || fprintf(out, XCHG_TABLE_END, above) < 0 ? -1 : 0;
    }
    if (fflush(out) != 0 || fsync(fileno(out)) != 0)
        rc = -1;
    if (fclose(out) != 0)
        rc = -1;
    if (rc == 0 && rename(temp, path) != 0)
        rc = -1;
    if (rc != 0) {
        int why = errno ? errno : EIO; /* what failed, not the clean-up */
        unlink(temp);
        errno = why;
    }
    return rc;
}
