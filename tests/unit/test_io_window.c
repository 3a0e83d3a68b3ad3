/* The window back end (io/window.c): an image that starts partway into
 * its file.  Its byte 0 is the file's byte `start`, its size what follows
 * it; a batch reads each request shifted and gives the offsets back as
 * they were asked; a start at or past the file's end is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "io/io.h"

static uint8_t file_bytes[16384];

static struct io *window(uint64_t start)
{
	struct io *inner, *io;
	ek_error err;

	for (size_t i = 0; i < sizeof(file_bytes); i++)
		file_bytes[i] = (uint8_t)(i * 13 ^ (i >> 8));
	assert_int_equal(io_open_memory(file_bytes, sizeof(file_bytes), &inner, &err), 0);
	assert_int_equal(io_open_window(inner, start, &io, &err), 0);
	return io;
}

static void bytes_come_from_past_the_start(void **state)
{
	struct io *io = window(4096);
	uint8_t buf[3000];

	(void)state;
	assert_int_equal(io->size, sizeof(file_bytes) - 4096);
	assert_int_equal(io->ops->read(io, buf, sizeof(buf), 0), 0);
	assert_memory_equal(buf, file_bytes + 4096, sizeof(buf));
	assert_int_equal(io->ops->read(io, buf, 1000, io->size - 1000), 0);
	assert_memory_equal(buf, file_bytes + sizeof(file_bytes) - 1000, 1000);
	io_close(io);
}

static void a_batch_keeps_its_offsets(void **state)
{
	struct io *io = window(8192);
	uint8_t a[100], b[200];
	struct io_req reqs[2] = {
		{ a, sizeof(a), 5, -1 },
		{ b, sizeof(b), 7000, -1 },
	};

	(void)state;
	io->ops->read_batch(io, reqs, 2);
	assert_int_equal(reqs[0].result, 0);
	assert_int_equal(reqs[1].result, 0);
	assert_int_equal(reqs[0].offset, 5);
	assert_int_equal(reqs[1].offset, 7000);
	assert_memory_equal(a, file_bytes + 8192 + 5, sizeof(a));
	assert_memory_equal(b, file_bytes + 8192 + 7000, sizeof(b));
	io_close(io);
}

static void a_start_past_the_end_is_refused(void **state)
{
	struct io *inner, *io = NULL;
	ek_error err;

	(void)state;
	assert_int_equal(io_open_memory(file_bytes, sizeof(file_bytes), &inner, &err), 0);
	assert_int_equal(io_open_window(inner, sizeof(file_bytes), &io, &err), -EINVAL);
	assert_null(io);
	assert_non_null(strstr(err.message, "the file holds 16384 bytes"));
	/* Refused, the inner back end is still the caller's. */
	io_close(inner);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bytes_come_from_past_the_start),
		cmocka_unit_test(a_batch_keeps_its_offsets),
		cmocka_unit_test(a_start_past_the_end_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
