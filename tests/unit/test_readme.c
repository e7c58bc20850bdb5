/*
 * test_readme.c: README.md's tables of algorithms and keys are the registry's
 * (xchg_registry_markdown, tuning/registry.c; `build/xchg-sched markdown` prints them), so a
 * new algorithm or key cannot be documented differently from what it is. Reads README.md from
 * the current directory (the suite runs from the repository root), or XCHG_README.
 * On a difference: the first README line that differs, and what the registry says there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tuning/registry.h"

#include "unit.h"

/* The whole of a file, NUL-terminated, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long size;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)size + 1)) != NULL) {
        if (fread(text, 1, (size_t)size, f) != (size_t)size) {
            free(text);
            text = NULL;
        } else {
            text[size] = '\0';
        }
    }
    fclose(f);
    return text;
}

/* Line n (from 1) of text into out. */
static void line_of(const char *text, int n, char *out, size_t outlen)
{
    for (; n > 1 && text; n--) {
        text = strchr(text, '\n');
        text = text ? text + 1 : NULL;
    }
    snprintf(out, outlen, "%.*s", text ? (int)strcspn(text, "\n") : 0, text ? text : "");
}

int main(void)
{
    const char *path = getenv("XCHG_README") ? getenv("XCHG_README") : "README.md";
    char *readme = slurp(path), *tables = NULL, *at, *first;
    size_t len = 0;
    FILE *out = open_memstream(&tables, &len);

    if (!readme || !out) {
        printf("test_readme: cannot read %s (run from the repository root, or set XCHG_README)\n",
               path);
        return 2;
    }
    xchg_registry_markdown(out);
    fclose(out);

    /* the tables start at the algorithms' header line, which appears once */
    first = strstr(readme, "| collective | name |");
    CHECK(first != NULL && strstr(first + 1, "| collective | name |") == NULL,
          "%s: expected one table of algorithms ('| collective | name |')", path);
    if (first && strncmp(first, tables, len) != 0) {
        int line = 1;
        char want[512], have[512];
        for (at = tables; *at && *at == first[at - tables]; at++)
            line += *at == '\n';
        line_of(tables, line, want, sizeof want);
        line_of(first, line, have, sizeof have);
        CHECK(0,
              "%s: the tables differ from the registry's at their line %d (update the README with "
              "build/xchg-sched markdown):\n  README:   %.200s\n  registry: %.200s",
              path, line, have, want);
    }
    free(tables);
    free(readme);
    return unit_finish("test_readme");
}
