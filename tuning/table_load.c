/*
 * table_load.c: a tuning table read from a file and handed to the parser (table_parse.c).
 * Pure C, no MPI calls; docs/tuning-table.md describes the format and what is reported.
 *
 * xchg_table_load reads only a regular file of at most XCHG_TABLE_MAX_BYTES: a FIFO would
 * block and a device such as /dev/zero never ends. A NUL byte anywhere makes the whole file
 * ignored, not only the rest after it: a table cut short would decide differently from what
 * its author wrote. Problems are reported as the parser reports them (table_internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table.h"
#include "table_internal.h"

/* Report the failed system call of what, with errno's text, as a problem of the whole file;
 * errno is kept for the caller. */
static void report_errno(parse_state_t *st, const char *what)
{
    int saved_errno = errno;
    xchg_table_report_line(st, 0, "%s (%s); file ignored", what, strerror(saved_errno));
    errno = saved_errno;
}

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a file";
}

/* path opened for reading when it is a regular file of at most XCHG_TABLE_MAX_BYTES, else -1
 * (reported). The open does not block: a FIFO without a writer would hang it forever, and
 * a device such as /dev/zero never ends. */
static int open_regular(parse_state_t *st, const char *path)
{
    struct stat info;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0) {
        report_errno(st, "cannot open the file");
        return -1;
    }
    if (fstat(fd, &info) != 0) {
        report_errno(st, "cannot examine the file");
    } else if (!S_ISREG(info.st_mode)) {
        xchg_table_report_line(st, 0, "not a regular file (%s); file ignored",
                               file_kind(info.st_mode));
        errno = EINVAL;
    } else if ((uintmax_t)info.st_size > XCHG_TABLE_MAX_BYTES) {
        xchg_table_report_line(st, 0, "larger than %zu MiB (%jd bytes); file ignored",
                               XCHG_TABLE_MAX_BYTES >> 20, (intmax_t)info.st_size);
        errno = EFBIG;
    } else if (fcntl(fd, F_SETFL, 0) != 0) {
        report_errno(st, "cannot set the file to blocking reads");
    } else {
        return fd;
    }
    close(fd);
    return -1;
}

/* All of fd as a NUL-terminated string of *len bytes (which may hold NUL bytes of its own),
 * or NULL (reported). Reads at most one byte past XCHG_TABLE_MAX_BYTES, so that a file that
 * grew after the check, or one whose size says nothing (/proc), is still bounded. */
static char *read_text(parse_state_t *st, int fd, size_t *len)
{
    size_t cap = 0, used = 0;
    char *text = NULL;

    for (;;) {
        ssize_t got;
        if (used == cap) {
            size_t new_cap = cap ? 2 * cap : 65536;
            char *grown;
            if (cap == XCHG_TABLE_MAX_BYTES + 1)
                break;
            if (new_cap > XCHG_TABLE_MAX_BYTES + 1)
                new_cap = XCHG_TABLE_MAX_BYTES + 1;
            grown = realloc(text, new_cap + 1);
            if (!grown) {
                errno = ENOMEM;
                report_errno(st, "cannot read the file");
                goto fail;
            }
            text = grown;
            cap = new_cap;
        }
        got = read(fd, text + used, cap - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            report_errno(st, "cannot read the file");
            goto fail;
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
    if (used > XCHG_TABLE_MAX_BYTES) {
        xchg_table_report_line(st, 0, "larger than %zu MiB; file ignored",
                               XCHG_TABLE_MAX_BYTES >> 20);
        errno = EFBIG;
        goto fail;
    }
    text[used] = '\0';
    *len = used;
    return text;
fail:
    free(text);
    return NULL;
}

/* The line number of the first NUL byte of text[0, len), 0 when there is none. */
static int nul_line(const char *text, size_t len)
{
    const char *nul = memchr(text, '\0', len);
    int line = 1;
    if (!nul)
        return 0;
    for (const char *p = text; p < nul; p++)
        line += *p == '\n';
    return line;
}

char *xchg_table_read(const char *path, int *status, xchg_table_report_fn *report, void *arg)
{
    parse_state_t st = {NULL, report, arg, 0, 0, 0, 0};
    char *text = NULL;
    size_t len = 0;
    int fd, line;

    *status = -1;
    /* a regular file of bounded size, read whole */
    fd = open_regular(&st, path);
    if (fd < 0)
        return NULL;
    text = read_text(&st, fd, &len);
    close(fd);
    if (!text)
        return NULL;

    /* text: a NUL byte means it is not a table at all (its lines would be cut there) */
    line = nul_line(text, len);
    if (line > 0) {
        xchg_table_report_line(&st, line, "NUL byte: the file is not text; file ignored");
        *status = line;
        free(text);
        return NULL;
    }
    *status = 0;
    return text;
}

int xchg_table_load(const char *path, xchg_table_t *table, xchg_table_report_fn *report, void *arg)
{
    int rc;
    char *text = xchg_table_read(path, &rc, report, arg);

    if (!text)
        return rc;
    rc = xchg_table_parse(text, table, report, arg);
    free(text);
    return rc;
}
