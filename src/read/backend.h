/* Which I/O back end reads a name: a URL over HTTP, a file by pread or
 * by io_uring with O_DIRECT, as the open options ask. */
#ifndef EK_READ_BACKEND_H
#define EK_READ_BACKEND_H

#include <stdint.h>

#include "erofskit/erofskit.h"
#include "io/io.h"

/* *borrow: bytes of the caller's memory budget an O_DIRECT reader may
 * take for its stage; set to what it took (0 for the other back ends). */
int backend_open(const char *name, const ek_open_options *o, uint64_t *borrow,
		struct io **out, ek_error *err);

#endif
