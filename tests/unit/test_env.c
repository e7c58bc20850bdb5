/*
 * test_env.c: the parsers of the XCHG_* variables (tuning/env.c), without MPI. For each
 * variable: unset, empty and every accepted form with its exact value; bad values with the
 * safe default in place and the exact message shim/config.c prints after "xchg: " (the
 * variable, the quoted value, the reason, what is used instead); long values quoted as a
 * 40-character prefix and "...".
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tuning/env.h"
#include "../../tuning/registry.h"

#include "unit.h"

/* err holds exactly want (rc -1), or is untouched (rc 0, want NULL). */
static void check_message(const char *what, int rc, const char *err, const char *want)
{
    if (!want) {
        CHECK(rc == 0 && strcmp(err, "untouched") == 0, "%s: rc %d, message '%s' (expected none)",
              what, rc, err);
        return;
    }
    CHECK(rc == -1 && strcmp(err, want) == 0, "%s: rc %d, message\n  '%s', expected\n  '%s'", what,
          rc, err, want);
}

static void flag(const char *text, int want, const char *message)
{
    char err[512] = "untouched";
    int on = 7;
    int rc = xchg_env_flag("XCHG_STATS", text, &on, err, sizeof err);
    CHECK(on == want, "XCHG_STATS='%s': %d (expected %d)", text ? text : "(unset)", on, want);
    check_message(text ? text : "(unset)", rc, err, message);
}

static void test_flags(void)
{
    flag(NULL, 0, NULL);
    flag("", 0, NULL);
    flag("0", 0, NULL);
    flag("1", 1, NULL);
    flag("yes", 0, "XCHG_STATS=yes: expected 0 or 1; using 0");
    flag("01", 0, "XCHG_STATS=01: expected 0 or 1; using 0");
    flag("1 ", 0, "XCHG_STATS=1 : expected 0 or 1; using 0");
    flag("true", 0, "XCHG_STATS=true: expected 0 or 1; using 0");
    flag("11111111112222222222333333333344444444445", 0,
         "XCHG_STATS=1111111111222222222233333333334444444444...: expected 0 or 1; using 0");
}

static void wait_value(const char *text, int want, const char *message)
{
    char err[512] = "untouched";
    int wait = 7;
    int rc = xchg_env_wait(text, &wait, err, sizeof err);
    CHECK(wait == want, "XCHG_WAIT='%s': %d (expected %d)", text ? text : "(unset)", wait, want);
    check_message(text ? text : "(unset)", rc, err, message);
}

static void test_wait(void)
{
    wait_value(NULL, XCHG_WAIT_AUTO, NULL);
    wait_value("", XCHG_WAIT_AUTO, NULL);
    wait_value("auto", XCHG_WAIT_AUTO, NULL);
    wait_value("spin", XCHG_WAIT_SPIN, NULL);
    wait_value("yield", XCHG_WAIT_YIELD, NULL);
    wait_value("Yield", XCHG_WAIT_AUTO,
               "XCHG_WAIT=Yield: expected auto, spin or yield; using auto");
    wait_value("spin ", XCHG_WAIT_AUTO,
               "XCHG_WAIT=spin : expected auto, spin or yield; using auto");
    wait_value("1", XCHG_WAIT_AUTO, "XCHG_WAIT=1: expected auto, spin or yield; using auto");
}

static void shm(const char *text, size_t want, const char *message)
{
    char err[512] = "untouched";
    size_t bytes = 7;
    int rc = xchg_env_shm_bytes(text, &bytes, err, sizeof err);
    CHECK(bytes == want, "XCHG_SHM_BYTES='%s': %zu (expected %zu)", text ? text : "(unset)", bytes,
          want);
    check_message(text ? text : "(unset)", rc, err, message);
}

static void test_shm_bytes(void)
{
    const char *bad = "; using 1M";
    char want[256];
    shm(NULL, (size_t)1 << 20, NULL);
    shm("", (size_t)1 << 20, NULL);
    shm("0", 0, NULL);
    shm("64K", 65536, NULL);
    shm("2MB", (size_t)2 << 20, NULL);
    shm("1024G", (size_t)1 << 40, NULL); /* the largest: 1T */
    snprintf(want, sizeof want,
             "XCHG_SHM_BYTES=1025G: expected a byte size up to 1T (such as 1M, or 0 for no "
             "shared memory)%s",
             bad);
    shm("1025G", (size_t)1 << 20, want);
    snprintf(want, sizeof want,
             "XCHG_SHM_BYTES=1T: expected a byte size up to 1T (such as 1M, or 0 for no "
             "shared memory)%s",
             bad);
    shm("1T", (size_t)1 << 20, want);
    snprintf(want, sizeof want,
             "XCHG_SHM_BYTES=-1: expected a byte size up to 1T (such as 1M, or 0 for no "
             "shared memory)%s",
             bad);
    shm("-1", (size_t)1 << 20, want);
}

/* text at world ranks parses into the sizes of want (a "3,1,2" list; NULL: none) */
static void nodes(const char *text, int world, const char *want, const char *message)
{
    char err[512] = "untouched", got[256] = "";
    int *sizes = (int *)1, nnodes = -1;
    int rc = xchg_env_nodes(text, world, &sizes, &nnodes, err, sizeof err);
    size_t used = 0;

    for (int i = 0; rc == 0 && i < nnodes && used < sizeof got; i++)
        used += (size_t)snprintf(got + used, sizeof got - used, "%s%d", i ? "," : "", sizes[i]);
    CHECK(want ? strcmp(got, want) == 0 && sizes != NULL
               : sizes == NULL && nnodes == 0 && got[0] == '\0',
          "XCHG_NODES='%s' at %d ranks: '%s' (%d nodes), expected '%s'", text ? text : "(unset)",
          world, got, nnodes, want ? want : "(none)");
    check_message(text ? text : "(unset)", rc, err, message);
    free(rc == 0 ? sizes : NULL);
}

static void test_nodes(void)
{
    const char *form = "expected positive rank counts separated by commas (e.g. 3,1,2); ignored";
    /* digits only: no sign and no blank (strtol took " 3", "+3" and "\n3") */
    const char *bad[] = {
        "3,,3", "3,3,", ",3,3", "3;3",  "3,0,3", "7",  "0",   "x",
        "3,3a", "-3",   "6 ",   "3, 3", "+6",    " 6", "\n6", "99999999999999999999"};
    char want[256];

    nodes(NULL, 6, NULL, NULL);
    nodes("", 6, NULL, NULL);
    nodes("3,1,2", 6, "3,1,2", NULL);
    nodes("6", 6, "6", NULL);
    nodes("1,1,1,1,1,1", 6, "1,1,1,1,1,1", NULL);
    nodes("003,3", 6, "3,3", NULL);
    nodes("1", 1, "1", NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(want, sizeof want, "XCHG_NODES=%s: %s", bad[i], form);
        nodes(bad[i], 6, NULL, want);
    }
    nodes("3,3", 5, NULL,
          "XCHG_NODES=3,3: the node sizes add up to 6, not to the job's 5 ranks; ignored");
    nodes("1,2", 6, NULL,
          "XCHG_NODES=1,2: the node sizes add up to 3, not to the job's 6 ranks; ignored");
    nodes("1", 0, NULL,
          "XCHG_NODES=1: expected positive rank counts separated by commas (e.g. "
          "3,1,2); ignored");
    /* large sizes add up without overflowing an int (the fuzzer's 2147483641,7) */
    nodes("1073741823,1073741823,1073741823", INT_MAX, NULL,
          "XCHG_NODES=1073741823,1073741823,1073741823: the node sizes add up to 3221225469, not "
          "to the job's 2147483647 ranks; ignored");
    nodes("2147483641,7", INT_MAX, NULL,
          "XCHG_NODES=2147483641,7: the node sizes add up to 2147483648, not to the job's "
          "2147483647 ranks; ignored");
    nodes("1073741823,1073741824", INT_MAX, "1073741823,1073741824", NULL);
}

static void torus(const char *text, int rows, int cols, const char *message)
{
    char err[512] = "untouched";
    int dims[2] = {7, 7};
    int rc = xchg_env_torus(text, dims, err, sizeof err);
    CHECK(dims[0] == rows && dims[1] == cols, "XCHG_TORUS='%s': %dx%d (expected %dx%d)",
          text ? text : "(unset)", dims[0], dims[1], rows, cols);
    check_message(text ? text : "(unset)", rc, err, message);
}

static void test_torus(void)
{
    const char *bad[] = {"4x", "x4", "0", "4x0", "4X4", "4x4x4", "-4", "+4", "4 ", "1000000001"};
    char want[256];
    torus(NULL, 0, 0, NULL);
    torus("", 0, 0, NULL);
    torus("4x6", 4, 6, NULL);
    torus("8", 1, 8, NULL);
    torus("8x1", 1, 8, NULL);
    torus("1x1", 1, 1, NULL);
    torus("1000000000", 1, 1000000000, NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(want, sizeof want,
                 "XCHG_TORUS=%s: expected RxC (a torus, e.g. 4x4) or P (a ring) with dimensions "
                 "from 1 to 1000000000; ignored",
                 bad[i]);
        torus(bad[i], 0, 0, want);
    }
}

static void learn(const char *text, int want, const char *path, const char *message)
{
    char err[512] = "untouched", got[16] = "untouched";
    int on = 7;
    int rc = xchg_env_learn(text, &on, got, sizeof got, err, sizeof err);
    CHECK(on == want && strcmp(got, path) == 0, "XCHG_LEARN='%s': %d '%s' (expected %d '%s')",
          text ? text : "(unset)", on, got, want, path);
    check_message(text ? text : "(unset)", rc, err, message);
}

static void test_learn(void)
{
    learn(NULL, 1, "", NULL);
    learn("", 1, "", NULL);
    learn("1", 1, "", NULL);
    learn("0", 0, "", NULL);
    learn("out.table", 1, "out.table", NULL);
    learn("/tmp/15chars.tb", 1, "/tmp/15chars.tb", NULL); /* the longest that fits 16 */
    learn("/tmp/16chars.tbl", 1, "",
          "XCHG_LEARN=/tmp/16chars.tbl: the path is longer than 15 characters; learning without "
          "writing a file");
    learn("00", 1, "00", NULL); /* a file named 00 */
}

static void tuning(const char *text, const char *path, const char *message)
{
    char err[512] = "untouched", got[16] = "untouched";
    int rc = xchg_env_tuning(text, got, sizeof got, err, sizeof err);
    CHECK(strcmp(got, path) == 0, "XCHG_TUNING='%s': '%s' (expected '%s')", text ? text : "(unset)",
          got, path);
    check_message(text ? text : "(unset)", rc, err, message);
}

static void test_tuning(void)
{
    tuning(NULL, "", NULL);
    tuning("", "", NULL);
    tuning("t.table", "t.table", NULL);
    tuning("/tmp/15chars.tb", "/tmp/15chars.tb", NULL);
    tuning("/tmp/16chars.tbl", "",
           "XCHG_TUNING=/tmp/16chars.tbl: the path is longer than 15 characters; using the "
           "built-in cost models");
}

static void cache(const char *text, int want, const char *dir, const char *message)
{
    char err[512] = "untouched", got[16] = "untouched";
    int where = 7;
    int rc = xchg_env_cache(text, &where, got, sizeof got, err, sizeof err);
    CHECK(where == want && strcmp(got, dir) == 0, "XCHG_CACHE='%s': %d '%s' (expected %d '%s')",
          text ? text : "(unset)", where, got, want, dir);
    check_message(text ? text : "(unset)", rc, err, message);
}

static void test_cache(void)
{
    cache(NULL, XCHG_CACHE_DEFAULT, "", NULL);
    cache("", XCHG_CACHE_DEFAULT, "", NULL);
    cache("1", XCHG_CACHE_DEFAULT, "", NULL);
    cache("0", XCHG_CACHE_OFF, "", NULL);
    cache("/tmp/xchg", XCHG_CACHE_DIR, "/tmp/xchg", NULL);
    cache("/tmp/15chars.tb", XCHG_CACHE_DIR, "/tmp/15chars.tb", NULL); /* the longest: 16 */
    cache("/tmp/16chars.tbl", XCHG_CACHE_DEFAULT, "",
          "XCHG_CACHE=/tmp/16chars.tbl: the path is longer than 15 characters; using the default "
          "cache directory");
    cache("tmp/xchg", XCHG_CACHE_DEFAULT, "",
          "XCHG_CACHE=tmp/xchg: not an absolute directory (or 0 or 1); using the default cache "
          "directory");
    cache("00", XCHG_CACHE_DEFAULT, "",
          "XCHG_CACHE=00: not an absolute directory (or 0 or 1); using the default cache "
          "directory");
}

/* text forces coll's algorithm name with params formatted as want_params ("" none); name NULL:
 * auto */
static void collective(int coll, const char *text, const char *name, const char *want_params,
                       const char *message)
{
    char err[512] = "untouched", got[128];
    xchg_params_t params, zero;
    int algo = 7;
    int rc = xchg_env_collective(coll, text, &algo, &params, err, sizeof err);
    int want = name ? xchg_algo_find(coll, name) : XCHG_ENV_AUTO;

    CHECK(!name || want >= 0, "the registry has no %s %s", xchg_coll_name(coll), name);
    got[0] = '\0';
    if (algo >= 0)
        xchg_params_format(&xchg_algos[algo], &params, got, sizeof got);
    CHECK(algo == want && strcmp(got, want_params) == 0,
          "%s='%s': algorithm %d [%s] (expected %d [%s])", xchg_env_coll_var(coll),
          text ? text : "(unset)", algo, got, want, want_params);
    if (algo == XCHG_ENV_AUTO) {
        memset(&zero, 0, sizeof zero);
        CHECK(memcmp(&params, &zero, sizeof zero) == 0, "%s='%s': auto with parameters set",
              xchg_env_coll_var(coll), text ? text : "");
    }
    check_message(text ? text : "(unset)", rc, err, message);
}

/* The message about an unknown algorithm: "... (valid: auto, NAME, ...); using auto" with
 * the registry's names of coll, so that adding an algorithm does not change the test. */
static void unknown_message(int coll, const char *name, char *out, size_t len)
{
    size_t used = (size_t)snprintf(out, len, "%s=%s: unknown algorithm '%s' (valid: auto",
                                   xchg_env_coll_var(coll), name, name);
    for (int i = 0; i < xchg_nalgos && used < len; i++)
        if (xchg_algos[i].coll == coll)
            used += (size_t)snprintf(out + used, len - used, ", %s", xchg_algos[i].name);
    snprintf(out + used, used < len ? len - used : 0, "); using auto");
}

static void test_collectives(void)
{
    char huge[300], unknown[512];
    xchg_params_t params;
    int algo = 7;
    char why[512] = "";

    CHECK(strcmp(xchg_env_coll_var(XCHG_ALLTOALL), "XCHG_ALLTOALL") == 0 &&
              strcmp(xchg_env_coll_var(XCHG_ALLGATHER), "XCHG_ALLGATHER") == 0 &&
              strcmp(xchg_env_coll_var(XCHG_ALLTOALLV), "XCHG_ALLTOALLV") == 0 &&
              strcmp(xchg_env_coll_var(XCHG_NCOLLS), "?") == 0,
          "the variables' names");
    collective(XCHG_ALLTOALL, NULL, NULL, "", NULL);
    collective(XCHG_ALLTOALL, "", NULL, "", NULL);
    collective(XCHG_ALLTOALL, "auto", NULL, "", NULL);
    collective(XCHG_ALLTOALL, "native", "native", "", NULL);
    collective(XCHG_ALLTOALL, "radix:r=4,k=2", "radix", "r=4,k=2", NULL);
    collective(XCHG_ALLTOALL, "radix:k=2:r=4", "radix", "r=4,k=2", NULL);
    collective(XCHG_ALLTOALL, "torus:dims=4x1", "torus", "dims=4", NULL);
    collective(XCHG_ALLGATHER, "circulant:k=3", "circulant", "k=3", NULL);
    collective(XCHG_ALLTOALLV, "twophase:inner=radix,r=2", "twophase", "inner=radix,r=2", NULL);
    unknown_message(XCHG_ALLTOALL, "bogus", unknown, sizeof unknown);
    collective(XCHG_ALLTOALL, "bogus", NULL, "", unknown);
    collective(XCHG_ALLTOALL, "radix:r=2,r=3", NULL, "",
               "XCHG_ALLTOALL=radix:r=2,r=3: key 'r' given twice; using auto");
    collective(XCHG_ALLGATHER, "circulant:zz=1", NULL, "",
               "XCHG_ALLGATHER=circulant:zz=1: unknown key 'zz' for circulant (keys: k); using "
               "auto");
    collective(XCHG_ALLTOALLV, "pairwise:k=abc", NULL, "",
               "XCHG_ALLTOALLV=pairwise:k=abc: k=abc: the number of ports must be an integer >= "
               "1; using auto");
    unknown_message(XCHG_ALLTOALL, "Auto", unknown, sizeof unknown);
    collective(XCHG_ALLTOALL, "Auto", NULL, "", unknown);
    memset(huge, '7', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    collective(XCHG_ALLTOALL, huge, NULL, "",
               "XCHG_ALLTOALL=7777777777777777777777777777777777777777...: value is too long "
               "(299 characters; at most 255); using auto");

    /* xchg_force's parser: the bare reason, auto for "auto" and "" */
    CHECK(xchg_env_spec(XCHG_ALLGATHER, "ring:k=2", &algo, &params, why, sizeof why) == -1 &&
              algo == XCHG_ENV_AUTO && strcmp(why, "unknown key 'k' for ring (keys: none)") == 0,
          "ring:k=2: %d '%s'", algo, why);
    CHECK(xchg_env_spec(XCHG_ALLGATHER, "auto", &algo, &params, why, sizeof why) == 0 &&
              algo == XCHG_ENV_AUTO,
          "auto: %d", algo);
    CHECK(xchg_env_spec(XCHG_ALLGATHER, "ring", &algo, &params, why, sizeof why) == 0 &&
              algo == xchg_algo_find(XCHG_ALLGATHER, "ring"),
          "ring: %d", algo);
}

static void test_mpi_yields(void)
{
    const char *yes[] = {"1", "true", "yes"};
    const char *no[] = {"0", "", "TRUE", "Yes", "2", "yes ", "false"};
    CHECK(xchg_env_mpi_yields(NULL) == 0, "unset yields");
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        CHECK(xchg_env_mpi_yields(yes[i]) == 1, "'%s' does not yield", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECK(xchg_env_mpi_yields(no[i]) == 0, "'%s' yields", no[i]);
}

int main(void)
{
    test_flags();
    test_wait();
    test_shm_bytes();
    test_nodes();
    test_torus();
    test_learn();
    test_tuning();
    test_cache();
    test_collectives();
    test_mpi_yields();
    return unit_finish("test_env");
}
