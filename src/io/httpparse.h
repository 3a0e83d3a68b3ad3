/*
 * Header values as servers send them (httpparse.c): every one is checked
 * here before the back ends use it.
 */
#ifndef EK_IO_HTTPPARSE_H
#define EK_IO_HTTPPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A header line's value after its name (v, len: what follows the colon),
 * blanks and CR LF trimmed, cut to fit out (size > 0). */
void http_header_value(const char *v, size_t len, char *out, size_t size);
/* "bytes FIRST-LAST/TOTAL" with FIRST <= LAST < TOTAL; false for anything
 * else (an unknown total "*" too). */
bool http_content_range(const char *v, uint64_t *first, uint64_t *last, uint64_t *total);
/* The value of name="value" or name=value in a WWW-Authenticate
 * challenge (name matched whole, case-insensitively); false when absent. */
bool http_challenge_param(const char *challenge, const char *name, char *out, size_t size);

#endif
