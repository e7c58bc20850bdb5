/*
 * fuzz.h: what the libFuzzer harnesses of tests/fuzz/ share. A harness is one
 * LLVMFuzzerTestOneInput that hands the input to one parser (or a few small ones, picked by the
 * input's first byte) and checks what the parser promises, not only that it does not crash:
 * FUZZ_CHECK prints the broken promise and aborts, which libFuzzer reports as a crash and saves
 * the input (mk/fuzz.mk, docs/fuzzing.md).
 */
#ifndef XCHG_FUZZ_H
#define XCHG_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tuning/size.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "\nfuzz check failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as a C string in a buffer of exactly size + 1 bytes (so that AddressSanitizer
 * catches a read past its end); a NUL byte inside ends the string early, as it ends an
 * environment value. The caller frees it. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

/* 1 when message begins "VAR=" and the value as XCHG_QUOTE quotes it (its first
 * XCHG_QUOTE_MAX characters, then "..." when it is longer), then ": ". */
static inline int fuzz_names_value(const char *message, const char *var, const char *value)
{
    size_t var_len = strlen(var), len = strnlen(value, XCHG_QUOTE_MAX + 1);
    const char *at = message;
    if (strncmp(at, var, var_len) != 0 || at[var_len] != '=')
        return 0;
    at += var_len + 1;
    if (len > XCHG_QUOTE_MAX) {
        if (strncmp(at, value, XCHG_QUOTE_MAX) != 0 || strncmp(at + XCHG_QUOTE_MAX, "...", 3) != 0)
            return 0;
        at += XCHG_QUOTE_MAX + 3;
    } else {
        if (strncmp(at, value, len) != 0)
            return 0;
        at += len;
    }
    return at[0] == ':' && at[1] == ' ';
}

/* 1 when text ends with suffix */
static inline int fuzz_ends_with(const char *text, const char *suffix)
{
    size_t len = strlen(text), suffix_len = strlen(suffix);
    return len >= suffix_len && strcmp(text + len - suffix_len, suffix) == 0;
}

#endif
