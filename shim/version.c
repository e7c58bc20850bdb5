/*
 * version.c: the version of this build (VERSION plus the git commit, stamped by mk/version.mk
 * into $(BUILD)/version.h), for the tools (xchg_version, shim/api.h) and for XCHG_VERBOSE=1:
 * one line at MPI_Init on world rank 0 saying which xchg runs, over which MPI library, and
 * from which file, so that a log tells an installed library from a build tree's.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <sys/auxv.h>

#include "shim.h"
#include "version.h"

static const char version[] = XCHG_VERSION;

const char *xchg_version(void)
{
    return version;
}

/* The MPI library's version string up to its first line break or comma ("MPICH Version: 4.0.2",
 * "Open MPI v4.1.4"), runs of blanks made one space. */
static void mpi_library(char *out, size_t len)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int text_len = 0;
    size_t n = 0;

    if (PMPI_Get_library_version(text, &text_len) != MPI_SUCCESS)
        text_len = 0;
    text[text_len < (int)sizeof text ? text_len : (int)sizeof text - 1] = '\0';
    for (const char *c = text; *c && *c != '\n' && *c != ',' && n + 1 < len; c++) {
        int blank = *c == ' ' || *c == '\t' || *c == '\r';
        if (!blank)
            out[n++] = *c;
        else if (n > 0 && out[n - 1] != ' ')
            out[n++] = ' ';
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

/* The file the library was loaded from; "" when it is linked into the program (the tools). */
static const char *library_file(void)
{
    Dl_info library, program;

    if (!dladdr(version, &library) || !library.dli_fname)
        return "";
    if (dladdr((const void *)getauxval(AT_PHDR), &program) &&
        program.dli_fbase == library.dli_fbase)
        return "";
    return library.dli_fname;
}

void xchg_version_say(void)
{
    char mpi[256];
    int size = 0;
    const char *file;

    if (xchg_world_rank != 0)
        return;
    mpi_library(mpi, sizeof mpi);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    file = library_file();
    fprintf(stderr, "xchg %s: %s, %d ranks, %s%s\n", version, mpi[0] ? mpi : "unknown MPI", size,
            file[0] ? "library " : "linked into the program", file);
    fflush(stderr);
}
