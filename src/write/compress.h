/*
 * Compressed files in the builder.
 *
 * Files are cut into fixed segments (the same cut whatever the number of
 * workers); each segment is compressed on a worker into extents by
 * fixed-output compression; one writer commits segments strictly in file
 * order, assigning block addresses.  The image is therefore byte-identical
 * for any --workers value, and memory stays bounded by the in-flight window.
 */
#ifndef EK_WRITE_COMPRESS_H
#define EK_WRITE_COMPRESS_H

#include <stdbool.h>
#include <stdint.h>

struct build;
struct tnode;

/* From b->o: validate options, configure features and config records. */
int zbuild_setup(struct build *b);
/* Queue every file's data in inode order (compressed or not; files that
 * go whole into the packed inode after the rest) and wait. */
int zbuild_write_all(struct build *b);
/* The same a file at a time, for a source that arrives as a stream: queue
 * one file's (or long symlink's) data, from b->data_blk on, or hold it
 * back for the packed inode ... */
int zbuild_add(struct build *b, struct tnode *n);
/* ... and, after the last (ret: 0, or the error that stopped the adds),
 * commit everything queued and the packed inode. */
int zbuild_finish(struct build *b, int ret);
void zbuild_teardown(struct build *b);
/* After zbuild_finish: the metabox inode n, its data (size bytes) read
 * from fd, compressed at b->data_blk on in metabox clusters. */
int zbuild_metabox(struct build *b, struct tnode *n, int fd);

/* Write a compressed inode's header and index after its xattrs. */
void zbuild_encode_index(struct build *b, const struct tnode *n, uint8_t *rec);
/* Superblock offset 84: algorithm bitmap or lz4 max distance. */
uint16_t zbuild_sb_u1(const struct build *b);

#endif
