/*
 * fuzz_env.c: the small XCHG_* parsers of tuning/env.c, one per input: the input's first byte
 * picks the parser (its value mod 6: the boolean knobs, XCHG_WAIT, XCHG_LEARN, XCHG_TUNING,
 * Open MPI's mpi_yield_when_idle, XCHG_CACHE) and a size (its value / 6: which knob, the
 * length of the path buffer, 1 to 64 bytes, on the heap so that AddressSanitizer sees a write
 * past it); the rest is the value.
 *
 * Checks, besides "no crash, no sanitizer finding", against the variables' grammars:
 *  - a knob is 1 for "1", 0 for unset, empty or "0", and anything else is 0 with the message
 *    "<VAR>=<quoted value>: expected 0 or 1; using 0";
 *  - XCHG_WAIT: auto (also unset and empty), spin, yield, else auto and a message naming it;
 *  - XCHG_LEARN: on for unset, empty and "1", off for "0"; any other value is a path, copied
 *    whole when it fits the buffer, else learning without a file and a message quoting it;
 *  - XCHG_TUNING: the path copied whole when it fits, else none and a message quoting it;
 *  - mpi_yield_when_idle yields for "1", "true" and "yes" only;
 *  - XCHG_CACHE: off for "0", the default directory for unset, empty and "1", an absolute path
 *    copied whole when it fits, else the default directory and a message quoting the value.
 */
#include <stdio.h>
#include <string.h>

#include "../../tuning/env.h"
#include "fuzz.h"

static const char *const knobs[] = {"XCHG_DISABLE",        "XCHG_STATS",      "XCHG_VERBOSE",
                                    "XCHG_STRICT",         "XCHG_TEST_DRIFT", "XCHG_TEST_CLOSE",
                                    "XCHG_TEST_SKEW_TIMES"};
#define NKNOBS (sizeof knobs / sizeof knobs[0])

static void check_flag(const char *name, const char *text)
{
    char err[512] = "";
    int on = 7, rc = xchg_env_flag(name, text, &on, err, sizeof err);
    int good = !*text || strcmp(text, "0") == 0 || strcmp(text, "1") == 0;
    FUZZ_CHECK(rc == (good ? 0 : -1) && on == (strcmp(text, "1") == 0), "%s='%s': rc %d, %d", name,
               text, rc, on);
    FUZZ_CHECK(good || (fuzz_names_value(err, name, text) &&
                        fuzz_ends_with(err, ": expected 0 or 1; using 0")),
               "%s='%s': message '%s'", name, text, err);
}

static void check_wait(const char *text)
{
    char err[512] = "";
    int wait = 7, rc = xchg_env_wait(text, &wait, err, sizeof err);
    int want = strcmp(text, "spin") == 0    ? XCHG_WAIT_SPIN
               : strcmp(text, "yield") == 0 ? XCHG_WAIT_YIELD
                                            : XCHG_WAIT_AUTO;
    int good = !*text || strcmp(text, "auto") == 0 || want != XCHG_WAIT_AUTO;
    FUZZ_CHECK(rc == (good ? 0 : -1) && wait == want, "XCHG_WAIT='%s': rc %d, %d", text, rc, wait);
    FUZZ_CHECK(good || (fuzz_names_value(err, "XCHG_WAIT", text) &&
                        fuzz_ends_with(err, ": expected auto, spin or yield; using auto")),
               "XCHG_WAIT='%s': message '%s'", text, err);
}

static void check_learn(const char *text, size_t pathlen)
{
    char err[512] = "", *path = malloc(pathlen);
    int learn = 7, rc;
    int on = strcmp(text, "0") != 0, named = *text && strcmp(text, "0") && strcmp(text, "1");
    int fits = strlen(text) < pathlen;

    if (!path)
        abort();
    memset(path, 'x', pathlen);
    rc = xchg_env_learn(text, &learn, path, pathlen, err, sizeof err);
    FUZZ_CHECK(rc == (named && !fits ? -1 : 0) && learn == on &&
                   strcmp(path, named && fits ? text : "") == 0,
               "XCHG_LEARN='%s' (buffer %zu): rc %d, learn %d, path '%s'", text, pathlen, rc, learn,
               path);
    FUZZ_CHECK(rc == 0 || (fuzz_names_value(err, "XCHG_LEARN", text) &&
                           fuzz_ends_with(err, "; learning without writing a file")),
               "XCHG_LEARN='%s': message '%s'", text, err);
    free(path);
}

static void check_tuning(const char *text, size_t pathlen)
{
    char err[512] = "", *path = malloc(pathlen);
    int fits = strlen(text) < pathlen, rc;
    if (!path)
        abort();
    memset(path, 'x', pathlen);
    rc = xchg_env_tuning(text, path, pathlen, err, sizeof err);
    FUZZ_CHECK(rc == (fits ? 0 : -1) && strcmp(path, fits ? text : "") == 0,
               "XCHG_TUNING='%s' (buffer %zu): rc %d, path '%s'", text, pathlen, rc, path);
    FUZZ_CHECK(rc == 0 || (fuzz_names_value(err, "XCHG_TUNING", text) &&
                           fuzz_ends_with(err, "; using the built-in cost models")),
               "XCHG_TUNING='%s': message '%s'", text, err);
    free(path);
}

static void check_cache(const char *text, size_t dirlen)
{
    char err[512] = "", *dir = malloc(dirlen);
    int where = 7, rc;
    int off = strcmp(text, "0") == 0, deflt = !*text || strcmp(text, "1") == 0;
    int good = off || deflt || (text[0] == '/' && strlen(text) < dirlen);
    if (!dir)
        abort();
    memset(dir, 'x', dirlen);
    rc = xchg_env_cache(text, &where, dir, dirlen, err, sizeof err);
    FUZZ_CHECK(rc == (good ? 0 : -1) &&
                   where == (off     ? XCHG_CACHE_OFF
                             : deflt ? XCHG_CACHE_DEFAULT
                             : good  ? XCHG_CACHE_DIR
                                     : XCHG_CACHE_DEFAULT) &&
                   strcmp(dir, where == XCHG_CACHE_DIR ? text : "") == 0,
               "XCHG_CACHE='%s' (buffer %zu): rc %d, where %d, dir '%s'", text, dirlen, rc, where,
               dir);
    FUZZ_CHECK(good || (fuzz_names_value(err, "XCHG_CACHE", text) &&
                        fuzz_ends_with(err, "; using the default cache directory")),
               "XCHG_CACHE='%s': message '%s'", text, err);
    free(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int parser = size ? data[0] % 6 : 0;
    size_t pick = size ? data[0] / 6 : 0;
    char *text = fuzz_text(size ? data + 1 : data, size ? size - 1 : 0);

    switch (parser) {
    case 0:
        check_flag(knobs[pick % NKNOBS], text);
        break;
    case 1:
        check_wait(text);
        break;
    case 2:
        check_learn(text, pick % 64 + 1);
        break;
    case 3:
        check_tuning(text, pick % 64 + 1);
        break;
    case 4:
        FUZZ_CHECK(
            xchg_env_mpi_yields(text) ==
                (strcmp(text, "1") == 0 || strcmp(text, "true") == 0 || strcmp(text, "yes") == 0),
            "mpi_yield_when_idle='%s'", text);
        break;
    default:
        check_cache(text, pick % 64 + 1);
    }
    /* unset: the defaults, no message */
    if (parser == 0) {
        int on = 7, wait = 7, learn = 7, where = 7;
        char path[8], err[8] = "";
        FUZZ_CHECK(xchg_env_flag(knobs[pick % NKNOBS], NULL, &on, err, sizeof err) == 0 &&
                       on == 0 && xchg_env_wait(NULL, &wait, err, sizeof err) == 0 &&
                       wait == XCHG_WAIT_AUTO &&
                       xchg_env_learn(NULL, &learn, path, sizeof path, err, sizeof err) == 0 &&
                       learn == 1 && !path[0] &&
                       xchg_env_tuning(NULL, path, sizeof path, err, sizeof err) == 0 && !path[0] &&
                       !err[0] && xchg_env_mpi_yields(NULL) == 0 &&
                       xchg_env_cache(NULL, &where, path, sizeof path, err, sizeof err) == 0 &&
                       where == XCHG_CACHE_DEFAULT && !path[0] && !err[0],
                   "unset values are not the defaults");
    }
    free(text);
    return 0;
}
