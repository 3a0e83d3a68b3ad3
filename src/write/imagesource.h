/*
 * An EROFS image as a build's source (imagesource.c): its tree is walked
 * as a directory's is (scan.c, through the same operations), and its
 * files' data read with the library's reader.  Recompressing an image,
 * or moving it to other block or cluster sizes, needs no mount.
 *
 * The walk names a file of the image by b->source followed by its path
 * in the image ("old.erofs/usr/bin/env"), so that messages and path rules
 * read as they do for a directory, but finds it by nid: its tnode has
 * src_dev IMAGE_SOURCE_DEV and src_ino its nid.
 */
#ifndef EK_WRITE_IMAGESOURCE_H
#define EK_WRITE_IMAGESOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct build;
struct tnode;

#define IMAGE_SOURCE_DEV ((dev_t)-1)

/* Open b->source as an image: 0; -ENOTDIR (err untouched) when it is
 * not one, so that the caller's "not a directory" stands; another
 * -errno with b->err filled when it is one that cannot be read. */
int image_source_open(struct build *b);
void image_source_close(struct build *b);

/* lstat(2) of the image's root, and of the entry name in the directory
 * dir_nid (at path, for messages): type, permissions, owner, mtime, size,
 * nlink, rdev; st_dev IMAGE_SOURCE_DEV and st_ino the nid.  Every call
 * below takes an inode by that nid (n->src_ino), never by its path. */
int image_source_root(struct build *b, struct stat *st);
int image_source_stat(struct build *b, uint64_t dir_nid, const char *name, const char *path,
		      struct stat *st);
/* Every name in the directory nid but "." and "..", to add(ctx, name, len). */
int image_source_list(struct build *b, uint64_t nid, const char *path,
		      int (*add)(void *ctx, const char *name, size_t len), void *ctx);
/* readlink(2) of n: the target's length, or -errno with b->err filled. */
ssize_t image_source_readlink(struct build *b, const struct tnode *n, const char *path,
			      char *buf, size_t size);
/* n's xattrs onto n. */
int image_source_xattrs(struct build *b, struct tnode *n, const char *path);

/* n's data: exactly len bytes at off. */
int image_source_pread(struct build *b, const struct tnode *n, void *buf, size_t len,
		       uint64_t off);
/* lseek(2)'s SEEK_DATA and SEEK_HOLE in n: the offset, or -errno
 * (-ENXIO past the last data). */
int64_t image_source_seek(struct build *b, const struct tnode *n, uint64_t pos, int whence);

#endif
