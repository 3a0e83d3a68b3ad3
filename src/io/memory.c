/* In-memory image: for fuzzers and tests that build images in buffers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "util/error.h"

struct memory_io {
	struct io base;
	const unsigned char *data;
};

static int memory_read(struct io *io, void *buf, size_t len, uint64_t off)
{
	struct memory_io *m = (struct memory_io *)io;

	if (off > io->size || len > io->size - off)
		return -EIO;
	memcpy(buf, m->data + off, len);
	return 0;
}

static void memory_close(struct io *io)
{
	free(io);
}

static const struct io_ops memory_ops = {
	.read = memory_read,
	.read_batch = io_read_batch_serial,
	.close = memory_close,
};

int io_open_memory(const void *data, size_t size, struct io **out,
		      ek_error *err)
{
	struct memory_io *m = calloc(1, sizeof(*m));

	if (!m)
		return err_fail(err, -ENOMEM, "out of memory");
	m->data = data;
	m->base.ops = &memory_ops;
	m->base.size = size;
	m->base.name = "memory";
	*out = &m->base;
	return 0;
}
