/*
 * check.h: what the MPI correctness programs of tests/mpi share (header only, plain MPI, no
 * xchg symbols: the programs are run with the library preloaded and natively).
 *
 *   - check_value():  the formula every test element comes from, f(source, destination, index,
 *                     salt), mixed so that a block from the wrong rank, the wrong place or an
 *                     earlier call (another salt) cannot pass by accident;
 *   - check_count() / check_fail() / check_skip(): the counters of checks, failures and skipped
 *                     checks; a failure prints one line, in one write (capped per rank at
 *                     CHECK_MAX_PRINTED, so a broken algorithm does not flood the log);
 *   - check_finish(): totals over all ranks, the final line "PROG: N checks, M failed" from
 *                     rank 0 (", K skipped" when something was skipped), and the exit status.
 */
#ifndef XCHG_TESTS_CHECK_H
#define XCHG_TESTS_CHECK_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every receive-buffer byte outside the receive type map is preset to this and must survive.
 * Character data is kept in 1..120, so it never equals the sentinel. */
#define CHECK_SENTINEL 0xA5
/* Failure lines printed per rank before the rest are only counted. */
#ifndef CHECK_MAX_PRINTED
#define CHECK_MAX_PRINTED 10
#endif

static long long check_nchecks, check_nfailed, check_nskipped, check_nprinted;

/* The element formula: a 32-bit mix of (source, destination, index, salt). */
static inline uint32_t check_value(int source, int destination, uint64_t index, uint32_t salt)
{
    uint64_t h = (uint64_t)salt * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)(source + 1) * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)(uint32_t)(destination + 2) * 0x165667B19E3779F9ull;
    h ^= (index + 3) * 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 29;
    return (uint32_t)h;
}

static inline void check_count(long long n)
{
    check_nchecks += n;
}

static inline void check_skip(long long n)
{
    check_nskipped += n;
}

/* One failed check: counted, and printed while under the cap, as one write so that the lines
 * of different ranks do not interleave. */
static inline void check_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void check_fail(const char *fmt, ...)
{
    char line[1024];
    int world_rank, used;
    va_list ap;
    check_nfailed++;
    if (check_nprinted >= CHECK_MAX_PRINTED)
        return;
    check_nprinted++;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    used = snprintf(line, sizeof line, "FAIL [world rank %d] ", world_rank);
    va_start(ap, fmt);
    vsnprintf(line + used, sizeof line - (size_t)used, fmt, ap);
    va_end(ap);
    used = (int)strlen(line);
    snprintf(line + used, sizeof line - (size_t)used, "\n%s",
             check_nprinted == CHECK_MAX_PRINTED
                 ? "(further failures on this rank are counted, not printed)\n"
                 : "");
    if (write(STDERR_FILENO, line, strlen(line)) < 0)
        fputs(line, stderr);
}

/* An MPI error class as text, for failure lines. */
static inline const char *check_error_string(int code, char *out, int outlen)
{
    int len = 0;
    if (MPI_Error_string(code, out, &len) != MPI_SUCCESS || len <= 0)
        snprintf(out, (size_t)outlen, "error %d", code);
    return out;
}

/* Totals over MPI_COMM_WORLD, the final line from rank 0, and the exit status for main (the
 * same on every rank): 0 when nothing failed and at least one check ran. */
static inline int check_finish(const char *program)
{
    long long local[3] = {check_nchecks, check_nfailed, check_nskipped}, total[3];
    int world_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Allreduce(local, total, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0) {
        if (total[2] > 0)
            printf("%s: %lld checks, %lld failed, %lld skipped\n", program, total[0], total[1],
                   total[2]);
        else
            printf("%s: %lld checks, %lld failed\n", program, total[0], total[1]);
        fflush(stdout);
    }
    return total[1] > 0 || (total[0] == 0 && total[2] == 0) ? 1 : 0;
}

/* A field of /proc/self/status ("VmRSS:", "RssShmem:"), KiB; -1 when unknown. */
static inline long check_status_kib(const char *field)
{
    char line[256];
    long kib = -1;
    size_t len = strlen(field);
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0)
            kib = atol(line + len);
    fclose(f);
    return kib;
}

/* This process's resident set (VmRSS in /proc/self/status), KiB; -1 when unknown. */
static inline long check_rss_kib(void)
{
    return check_status_kib("VmRSS:");
}

#endif
