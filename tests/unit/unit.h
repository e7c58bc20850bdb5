/*
 * unit.h: the check counter every unit test uses. CHECK(cond, fmt, ...) counts a check and,
 * when cond is false, a failure, printing where and why (the first 40 failures). A test ends
 * with `return unit_finish("test_NAME");`, which prints "test_NAME: N checks, M failed" and
 * gives the exit status.
 */
#ifndef XCHG_UNIT_H
#define XCHG_UNIT_H

#include <stdio.h>

static long checks, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            if (failures <= 40) {                                                                  \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                        \
                printf(__VA_ARGS__);                                                               \
                printf("\n");                                                                      \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static inline int unit_finish(const char *name)
{
    printf("%s: %ld checks, %ld failed\n", name, checks, failures);
    return failures ? 1 : 0;
}

#endif
