/* Compressed-file builder state (filled in by the compression work). */
#ifndef EK_BUILD_COMPRESS_H
#define EK_BUILD_COMPRESS_H

struct bcompressed;

void bcompressed_free(struct bcompressed *z);

#include <stdbool.h>
#include <stdint.h>

struct build;
struct binode;

/* Whether this regular file goes through the compressor. */
bool zbuild_wants(struct build *b, const struct binode *n);
/* Compress one file (open at fd) into the image. */
int zbuild_file(struct build *b, struct binode *n, int fd);
/* Write a compressed inode's map header and index after its xattrs. */
void zbuild_encode_index(struct build *b, const struct binode *n, uint8_t *rec);
/* Superblock offset 84: algorithm bitmap or lz4 max distance. */
uint16_t zbuild_sb_u1(const struct build *b);
/* Prepare compression (from b->o); nothing to do when uncompressed. */
int zbuild_setup(struct build *b);
/* Wait for the compression pipeline to drain. */
int zbuild_finish_data(struct build *b);
void zbuild_teardown(struct build *b);

#endif
