/*
 * Content digests (SHA-256): what deduplication keys identical data on.
 * A cryptographic hash, because an image may be built from untrusted
 * input (a downloaded layer): two different files crafted to collide
 * under a fast hash would otherwise share one file's bytes.
 */
#ifndef EK_UTIL_DIGEST_H
#define EK_UTIL_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define DIGEST_SIZE 32

void digest_of(const void *data, size_t len, uint8_t out[DIGEST_SIZE]);

/* Incremental form, for data read in pieces. */
struct digest_state;
struct digest_state *digest_begin(void);          /* NULL: no memory */
void digest_add(struct digest_state *d, const void *data, size_t len);
void digest_end(struct digest_state *d, uint8_t out[DIGEST_SIZE]);   /* frees d */

/* The lower-case hex form, as OCI digests spell it ("sha256:" + this). */
void digest_to_hex(const uint8_t d[DIGEST_SIZE], char out[2 * DIGEST_SIZE + 1]);
/* Parse exactly 2 * DIGEST_SIZE lower-case hex digits ending the string:
 * 0, or -1 for anything else. */
int digest_from_hex(const char *s, uint8_t out[DIGEST_SIZE]);

#endif
