/*
 * The packed inode's data: fragments (file tails, whole small files)
 * gathered in commit order, stored once when identical (fragdedupe), then
 * compressed like any other file, taken in segments as it grows.
 */
#ifndef EK_WRITE_FRAGMENTS_H
#define EK_WRITE_FRAGMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct build;
struct tnode;

/* Ready the packed data (and a temporary file beside the image for its
 * compressed form, gone however the build ends). */
int packed_open(struct build *b, const char *image_path);
void packed_close(struct build *b);

/* Append a fragment (or find an identical one, as fragdedupe allows: whole
 * files only, or tails too); *off: where it lies in the packed data.
 * digest: the data's, when the caller has it (NULL: computed here if
 * needed). */
int packed_append(struct build *b, const uint8_t *data, size_t len, bool whole,
		  const uint8_t *digest, uint64_t *off);
/* Whether packed_append() would look for an identical fragment of len
 * bytes. */
bool packed_dedupes(const struct build *b, bool whole, uint64_t len);

/* packed_append() in parts, for a fragment too large to hold whole (the
 * caller reads it straight into the packed data, a piece at a time):
 * an identical fragment stored already (counted as a hit) ... */
bool packed_find(struct build *b, const uint8_t *digest, uint64_t len, uint64_t *off);
/* ... room for len more bytes at the data's end: the same place until
 * the data changes (NULL: no memory, b->err says so) ... */
uint8_t *packed_room(struct build *b, size_t len);
/* ... the len bytes put there are data now ... */
void packed_grow(struct build *b, size_t len);
/* ... and the fragment at off, len bytes long, found by its digest from
 * now on. */
int packed_remember(struct build *b, const uint8_t *digest, uint64_t len, uint64_t off);

/* The packed inode, added to the tree the first time (its size grows with
 * the data: the caller sets it at the end); packed_size() bytes so far. */
int packed_node(struct build *b, struct tnode **packed);
/* Copy len bytes of the data at off into out and let them go: each part is
 * taken once, in order. */
int packed_take(struct build *b, uint64_t off, size_t len, uint8_t *out);
/* A second temporary file, where the pipeline keeps the packed inode's
 * compressed segments until it places them in the image. */
int packed_compressed_fd(const struct build *b);
uint64_t packed_size(const struct build *b);

#endif
