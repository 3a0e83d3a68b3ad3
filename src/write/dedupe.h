/*
 * Identical uncompressed files stored once: a file whose size no other
 * file has cannot be a copy, so only files of a shared size are read
 * twice (once to hash them); a copy refers to the first one's blocks.
 * The chunks of chunk-based files are keyed on as they are read.
 */
#ifndef EK_WRITE_DEDUPE_H
#define EK_WRITE_DEDUPE_H

#include <stdbool.h>
#include <stdint.h>

struct build;
struct tnode;

/* Note the sizes of the tree's regular files (after the scan). */
int dedupe_plan(struct build *b);
/* The same when files arrive as a stream: every size is a candidate. */
int dedupe_plan_stream(struct build *b);
void dedupe_free(struct build *b);
/* Whether a file of this size may be a copy of another: false only when
 * the tree's sizes are known and no other file has it. */
bool dedupe_size_shared(const struct build *b, uint64_t size);

/*
 * Before writing n uncompressed from fd: when an identical file's blocks
 * hold its data already, lay n out over them (*done true; the inline
 * tail, if any, still read from fd).  Otherwise *done is false and, once
 * n is written, dedupe_flat_written() remembers it.
 */
int dedupe_flat(struct build *b, struct tnode *n, int fd, uint8_t *buf,
		bool *done);
int dedupe_flat_written(struct build *b, const struct tnode *n);

/*
 * Chunks of chunk-based files (--chunksize), by content and length:
 * where an equal chunk was stored, or false (also without dedupe); and
 * one just stored at blk.
 */
bool dedupe_chunk_find(const struct build *b, const uint8_t *digest, uint64_t len,
		       uint64_t *blk);
int dedupe_chunk_stored(struct build *b, const uint8_t *digest, uint64_t len, uint64_t blk);
/*
 * A file of new chunks ends up flat, its last chunk's last block inline:
 * that chunk is not one a copy could point at.  It is noted instead, and
 * a later file ending in it stores it as a chunk, for the copies after.
 */
bool dedupe_tail_given_up(const struct build *b, const uint8_t *digest, uint64_t len);
int dedupe_tail_giving_up(struct build *b, const uint8_t *digest, uint64_t len);

#endif
