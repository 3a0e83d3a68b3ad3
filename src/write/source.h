/* Reading source files, and noticing when they change under us. */
#ifndef EK_WRITE_SOURCE_H
#define EK_WRITE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

struct build;
struct tnode;

/* Open a regular file's source; fails if it is no longer the file that
 * was scanned (other inode, other type, other size). */
int source_open(struct build *b, const struct tnode *n, int *fd);
/* Done reading: close what source_open opened (a spooled file's is the
 * spool's own, shared and left open). */
void source_close(struct build *b, int fd);
/* Read exactly len bytes at off; a short read means the file shrank. */
int source_pread(struct build *b, const struct tnode *n, int fd, void *buf,
		 size_t len, uint64_t off);
/* lseek(2)'s SEEK_DATA or SEEK_HOLE (whence) from pos in a sparse file:
 * the offset, -ENXIO past the last data, or another -errno with b->err
 * filled. */
int64_t source_seek(struct build *b, const struct tnode *n, int fd, uint64_t pos, int whence);
/* After reading: same size and mtime, nothing past the end. */
int source_check_unchanged(struct build *b, const struct tnode *n, int fd);

/* A stream's files wait in the spool (b->spool_fd), each in a span of its
 * own from n->spool_off: this long ... */
uint64_t source_spool_span(const struct tnode *n);
/* ... and given back (a hole punched) once n's data is in the image. */
void source_release(struct build *b, const struct tnode *n);

#endif
