/* Whole reads and writes at an offset, through short counts and EINTR. */
#ifndef EK_UTIL_FDIO_H
#define EK_UTIL_FDIO_H

#include <stddef.h>
#include <stdint.h>

/* 0, or a negative errno: -EIO when the file ends first (read) or a
 * write makes no progress. */
int fd_pread_full(int fd, void *buf, size_t len, uint64_t off);
int fd_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

/* The bytes of a regular file from the descriptor's offset to its end
 * (standard input may be part-read), or -1 for anything else: a pipe, a
 * terminal, a device. */
int64_t fd_remaining(int fd);

#endif
