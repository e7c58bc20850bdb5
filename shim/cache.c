/*
 * cache.c: the per-user cache of tuning tables, so that a program run with LD_PRELOAD alone
 * starts from what xchg-tune or an earlier run learned on this machine and layout.
 *
 * Where: $XCHG_CACHE when it names a directory, else $XDG_CACHE_HOME/xchg, else
 * $HOME/.cache/xchg (XCHG_CACHE=0: no cache; a table named by XCHG_TUNING replaces it). One file
 * per key, NAME.table in the tuning-table format (docs/tuning-table.md), where the key is what
 * the table depends on:
 *   - the MPI library: its family and a hash of MPI_Get_library_version's first line;
 *   - the node's hardware: a hash of hwloc's processing units, cores and CPU model;
 *   - the layout: the job's size and the number of ranks on each node, in node order.
 * It holds the machine line (xchg-tune's constants), rules (xchg-tune's, and the shapes learning
 * settled, by communicator size, node count and size bucket) and native curves.
 *
 * Reading (xchg_cache_load, from MPI_Init): world rank 0 computes the key, checks the directory
 * and reads the file, and broadcasts its text, so every rank parses the same bytes and decides
 * alike whatever each rank's file system shows. A file that is not a regular file owned by the
 * user, larger than the table limit, without its end line (below), or that the parser reports
 * any problem in (corrupt, foreign version, hostile) is reported once by name and ignored as a
 * whole.
 *
 * The end line: the writer ends the file with "# end: N bytes above" (a comment to the table's
 * parser), N the bytes before that line. A file cut anywhere loses it or no longer matches it:
 * a cut at a line's end leaves lines that parse, so the parser alone cannot tell.
 *
 * Writing (xchg_cache_store, from MPI_Finalize, and xchg-tune): world rank 0 only. The directory
 * is made owner-only (0700) when missing and must be a directory owned by the user and writable
 * by nobody else (a planted symlink or a shared directory is refused, reported once). The table
 * goes to a new file made with O_CREAT | O_EXCL | O_NOFOLLOW and mode 0600 in that directory,
 * then is renamed over the old one: two jobs finishing at once leave one valid file.
 */
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"
#include "../tuning/env.h"
#include "../tuning/table_write.h"

#define CACHE_MAX_RULES 4096 /* rules a cache file keeps (the newest) */

/* The MPI library's part of the key: "mpich-HASH", "openmpi-HASH" or "mpi-HASH". */
static void mpi_key(char *out, size_t len)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int n = 0;
    const char *family = "mpi";
    PMPI_Get_library_version(version, &n);
    version[strcspn(version, "\n")] = '\0';
    if (strstr(version, "MPICH"))
        family = "mpich";
    else if (strstr(version, "Open MPI"))
        family = "openmpi";
    snprintf(out, len, "%s-%08x", family,
             (unsigned)xchg_fnv(1469598103934665603ull, version, strlen(version)));
}

/* The node's hardware: processing units, cores and the first package's CPU model. */
static unsigned hardware_key(void)
{
    hwloc_topology_t topo;
    uint64_t h = 1469598103934665603ull;
    if (hwloc_topology_init(&topo) != 0)
        return 0;
    if (hwloc_topology_load(topo) == 0) {
        int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        hwloc_obj_t package = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
        const char *model = package ? hwloc_obj_get_info_by_name(package, "CPUModel") : NULL;
        h = xchg_fnv(h, &pus, sizeof pus);
        h = xchg_fnv(h, &cores, sizeof cores);
        if (model)
            h = xchg_fnv(h, model, strlen(model));
    }
    hwloc_topology_destroy(topo);
    return (unsigned)(h ^ h >> 32);
}

/* The layout's part: "P-N-S1.S2..." (job size, nodes, ranks per node in node order), or a hash
 * of the sizes when they are many. */
static void layout_key(const int *node_sizes, int nnodes, int size, char *out, size_t len)
{
    size_t used = (size_t)snprintf(out, len, "%dr-%dn-", size, nnodes);
    for (int i = 0; i < nnodes && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%d", i ? "." : "", node_sizes[i]);
    if (used >= 64 || used >= len)
        snprintf(out, len, "%dr-%dn-%08x", size, nnodes,
                 (unsigned)xchg_fnv(1469598103934665603ull, node_sizes, (size_t)nnodes * sizeof(int)));
}

/* The cache directory from the environment into dir; 0, or -1 when the cache is off. */
static int cache_dir(char *dir, size_t len)
{
    char err[512];
    const char *base;
    int where;
    if (xchg_env_cache(getenv("XCHG_CACHE"), &where, dir, len, err, sizeof err) != 0)
        xchg_warn("%s", err); /* parsed in tuning/env.c */
    if (where != XCHG_CACHE_DEFAULT)
        return where == XCHG_CACHE_DIR ? 0 : -1;
    base = getenv("XDG_CACHE_HOME");
    if (base && base[0] == '/' && strlen(base) + 6 < len) {
        snprintf(dir, len, "%s/xchg", base);
        return 0;
    }
    base = getenv("HOME");
    if (!base || base[0] != '/' || strlen(base) + 13 >= len)
        return -1;
    snprintf(dir, len, "%s/.cache/xchg", base);
    return 0;
}

/* The directory is ours alone: a real directory, owned by this user, writable by nobody else.
 * With create, a missing one (and a missing parent) is made owner-only first. */
static int dir_is_private(const char *dir, int create)
{
    struct stat st;
    if (lstat(dir, &st) != 0 && errno == ENOENT && create) {
        char parent[4096];
        char *slash;
        snprintf(parent, sizeof parent, "%s", dir);
        slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = '\0';
            mkdir(parent, 0700); /* ~/.cache, when missing; checked below through dir */
        }
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return 0;
    }
    if (lstat(dir, &st) != 0)
        return 0;
    return S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0;
}

/* World rank 0: the cache file's path into xchg_config.cache_path ("" when off). */
static void cache_path(const int *node_sizes, int nnodes, int size)
{
    char dir[3000], mpi[64], layout[96];
    xchg_config.cache_path[0] = '\0';
    if (cache_dir(dir, sizeof dir) != 0)
        return;
    mpi_key(mpi, sizeof mpi);
    layout_key(node_sizes, nnodes, size, layout, sizeof layout);
    snprintf(xchg_config.cache_path, sizeof xchg_config.cache_path, "%s/%s-%08x-%s.table", dir,
             mpi, hardware_key(), layout);
}

/* Whether TEXT (LEN bytes) ends with the end line that counts exactly the bytes before it. */
static int whole(const char *text, long len)
{
    char expect[64];
    long start = len - 1;
    if (len < 2 || text[len - 1] != '\n')
        return 0;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(expect, sizeof expect, XCHG_TABLE_END, start);
    return strcmp(text + start, expect) == 0;
}

/* Read the cache file (world rank 0): its text (malloc'd, NUL-terminated) or NULL. */
static char *read_file(const char *path)
{
    struct stat st;
    char *text = NULL, dir[4096], *slash;
    ssize_t got = 0;
    int fd;

    snprintf(dir, sizeof dir, "%s", path);
    slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    if (!dir_is_private(dir, 0))
        return NULL; /* missing (nothing cached yet), or refused when storing */
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            xchg_warn("cache %s: cannot be opened (%s); ignored", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (size_t)st.st_size > XCHG_TABLE_MAX_BYTES) {
        xchg_warn("cache %s: not a regular file of this user of at most %zu bytes; ignored",
                  path, (size_t)XCHG_TABLE_MAX_BYTES);
        close(fd);
        return NULL;
    }
    text = malloc((size_t)st.st_size + 1);
    while (text && got < st.st_size) {
        ssize_t n = read(fd, text + got, (size_t)(st.st_size - got));
        if (n <= 0)
            break;
        got += n;
    }
    close(fd);
    if (!text || got != st.st_size || memchr(text, '\0', (size_t)got)) {
        xchg_warn("cache %s: could not be read whole, or is not text; ignored", path);
        free(text);
        return NULL;
    }
    text[got] = '\0';
    if (!whole(text, (long)got)) {
        xchg_warn("cache %s: its end line is missing or does not match its length (cut short or "
                  "edited); ignored (delete it, or XCHG_CACHE=0)",
                  path);
        free(text);
        return NULL;
    }
    return text;
}

/* Problems of a cache file: counted, the first reported (the whole file is then ignored). */
typedef struct parse_problems {
    int count;
    const char *path;
} parse_problems_t;

static void report_problem(void *arg, int line, const char *message)
{
    parse_problems_t *p = arg;
    if (p->count++ == 0)
        xchg_warn("cache %s:%d: %s; the whole file is ignored (delete it, or XCHG_CACHE=0)",
                  p->path, line, message);
}

int xchg_cache_load(const int *node_sizes, int nnodes)
{
    char *text = NULL;
    int size, rank, failed;
    parse_problems_t problems = {0, xchg_config.cache_path};

    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    xchg_config.cache_on = getenv("XCHG_TUNING") == NULL || getenv("XCHG_TUNING")[0] == '\0';
    if (rank == 0 && xchg_config.cache_on) {
        cache_path(node_sizes, nnodes, size);
        text = xchg_config.cache_path[0] ? read_file(xchg_config.cache_path) : NULL;
    }
    /* every rank parses the same bytes (file header) */
    text = xchg_share_text(text, &failed);
    if (failed)
        xchg_warn("cache %s: the table could not be passed to every rank; not used",
                  xchg_config.cache_path);
    if (!text)
        return 0;
    /* the same text on every rank: the same verdict (xchg_warn prints on world rank 0 only) */
    if (xchg_table_parse(text, &xchg_config.cache, report_problem, &problems) != 0 ||
        problems.count > 0) {
        if (problems.count == 0)
            xchg_warn("cache %s: no tuning table; ignored", xchg_config.cache_path);
        xchg_table_free(&xchg_config.cache);
    }
    free(text);
    return xchg_config.cache.has_machine;
}

/* Rules of a new cache table: this run's verdicts first (newest), then the old ones that no
 * verdict replaces (same collective, communicator size, node count and first byte), at most
 * CACHE_MAX_RULES. */
static int merge_rules(const xchg_table_t *old, xchg_rule_t *rules)
{
    int n = xchg_learned_rules(rules, CACHE_MAX_RULES);
    int fresh = n;
    for (int i = 0; i < old->nrules && n < CACHE_MAX_RULES; i++) {
        const xchg_rule_t *r = &old->rules[i];
        int replaced = 0;
        for (int j = 0; j < fresh && !replaced; j++)
            replaced = rules[j].coll == r->coll && rules[j].pmin == r->pmin &&
                       rules[j].pmax == r->pmax && rules[j].nmin == r->nmin &&
                       rules[j].nmax == r->nmax && rules[j].bmin == r->bmin;
        if (!replaced)
            rules[n++] = *r;
    }
    return n;
}

int xchg_cache_write(const xchg_table_t *table, const char *comment)
{
    char dir[4096], *slash;
    const char *path = xchg_config.cache_path;

    if (!path[0])
        return -1;
    snprintf(dir, sizeof dir, "%s", path);
    slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if (!dir_is_private(dir, 1)) {
        xchg_warn("cache directory %s: not a directory of this user's alone (a symlink, another "
                  "owner, or writable by others); nothing is cached (XCHG_CACHE=DIR names "
                  "another, XCHG_CACHE=0 turns the cache off)",
                  dir);
        return -1;
    }
    if (xchg_table_file_write(path, table, comment, 0600) != 0) {
        xchg_warn("cache %s: writing failed (%s); the old file stays", path, strerror(errno));
        return -1;
    }
    return 0;
}

void xchg_cache_store(void)
{
    xchg_table_t table = {0};
    xchg_rule_t *rules;

    if (xchg_world_rank != 0 || !xchg_config.cache_on || !xchg_config.cache_path[0] ||
        !xchg_config.learn)
        return;
    rules = malloc(CACHE_MAX_RULES * sizeof *rules);
    if (!rules)
        return;
    table.nrules = merge_rules(&xchg_config.cache, rules);
    table.rules = rules;
    table.has_machine = xchg_config.machine_cached;
    table.machine = xchg_config.machine;
    table.machine.native = NULL;
    table.native = xchg_config.cache.native;
    if (table.nrules > 0 || table.has_machine)
        xchg_cache_write(&table, "xchg's cache for this machine and layout: made by xchg-tune and "
                                 "by learning; delete it to start afresh");
    free(rules);
}

/* The tools' write into the cache (shim/api.h). */
int xchg_api_cache_write(const xchg_table_t *table, const char *comment, const char **path)
{
    int rc;
    *path = xchg_config.cache_path[0] ? xchg_config.cache_path : NULL;
    if (!xchg_config.cache_on || !*path)
        return -1;
    rc = xchg_cache_write(table, comment);
    xchg_config.cache_on = 0; /* MPI_Finalize must not store this run's state over it */
    return rc;
}
