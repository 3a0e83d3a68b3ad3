/* The routed back end (io/route.c): an image and its extra devices as one
 * address space.  Every byte comes from the file that holds it, a device's
 * range over the image's own bytes, a read over several files from each;
 * one that reaches where no file is (past a device's file, between the
 * ranges, past them all) fails; a batch of requests for several files
 * gets each from its own; ranges that overlap are refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "io/io.h"

/* Three "files" whose every byte names its file and offset. */
static uint8_t primary_bytes[8192], dev1_bytes[4096], dev2_bytes[6000];

static void fill(uint8_t *p, size_t n, uint8_t tag)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(tag ^ (i * 7));
}

static struct io *memory(const uint8_t *p, size_t n)
{
	struct io *io;
	ek_error err;

	assert_int_equal(io_open_memory(p, n, &io, &err), 0);
	return io;
}

/* primary [0, 8192); device 1 over [4096, 8192) (a unified range that
 * shadows the image's own bytes); device 2 past them at [12288, 18288). */
static struct io *routed(void)
{
	struct io_route routes[2] = {
		{ 12288, sizeof(dev2_bytes), memory(dev2_bytes, sizeof(dev2_bytes)) },
		{ 4096, sizeof(dev1_bytes), memory(dev1_bytes, sizeof(dev1_bytes)) },
	};
	struct io *io;
	ek_error err;

	fill(primary_bytes, sizeof(primary_bytes), 0x11);
	fill(dev1_bytes, sizeof(dev1_bytes), 0x22);
	fill(dev2_bytes, sizeof(dev2_bytes), 0x33);
	assert_int_equal(io_open_routed(memory(primary_bytes, sizeof(primary_bytes)),
					routes, 2, &io, &err), 0);
	return io;
}

static void each_byte_from_its_file(void **state)
{
	struct io *io = routed();
	uint8_t buf[6000];

	(void)state;
	assert_int_equal(io->size, 12288 + 6000);
	assert_int_equal(io->ops->read(io, buf, 4096, 0), 0);
	assert_memory_equal(buf, primary_bytes, 4096);
	assert_int_equal(io->ops->read(io, buf, 100, 4096 + 50), 0);
	assert_memory_equal(buf, dev1_bytes + 50, 100);
	assert_int_equal(io->ops->read(io, buf, 6000, 12288), 0);
	assert_memory_equal(buf, dev2_bytes, 6000);
	io_close(io);
}

static void reads_cross_files(void **state)
{
	struct io *io = routed();
	uint8_t buf[8192];

	(void)state;
	/* from the image into device 1: the image's last byte below it */
	assert_int_equal(io->ops->read(io, buf, 3, 4095), 0);
	assert_int_equal(buf[0], primary_bytes[4095]);
	assert_memory_equal(buf + 1, dev1_bytes, 2);
	/* out of device 1 into the gap; past device 2's file; the gap;
	 * past everything */
	assert_int_equal(io->ops->read(io, buf, 2, 8191), -EIO);
	assert_int_equal(io->ops->read(io, buf, 2, 12288 + 5999), -EIO);
	assert_int_equal(io->ops->read(io, buf, 1, 9000), -EIO);
	assert_int_equal(io->ops->read(io, buf, 1, 1 << 20), -EIO);
	assert_non_null(io->ops->why(io));
	io_close(io);
}

static void a_batch_reads_each_file(void **state)
{
	struct io *io = routed();
	uint8_t a[10], b[10], c[10], d[10], e[2], f[4];
	struct io_req reqs[] = {
		{ a, 10, 0, 1 }, { b, 10, 4096, 1 }, { c, 10, 4106, 1 },
		{ d, 10, 12288 + 10, 1 }, { e, 2, 8191, 1 }, { f, 4, 4094, 1 },
	};

	(void)state;
	io->ops->read_batch(io, reqs, 6);
	for (int i = 0; i < 4; i++)
		assert_int_equal(reqs[i].result, 0);
	assert_int_equal(reqs[4].result, -EIO);
	assert_int_equal(reqs[5].result, 0);
	assert_memory_equal(f, primary_bytes + 4094, 2);
	assert_memory_equal(f + 2, dev1_bytes, 2);
	assert_memory_equal(a, primary_bytes, 10);
	assert_memory_equal(b, dev1_bytes, 10);
	assert_memory_equal(c, dev1_bytes + 10, 10);
	assert_memory_equal(d, dev2_bytes + 10, 10);
	/* The requests keep the caller's offsets. */
	assert_int_equal(reqs[1].offset, 4096);
	assert_int_equal(reqs[3].offset, 12288 + 10);
	io_close(io);
}

static void overlapping_ranges_are_refused(void **state)
{
	struct io *primary = memory(primary_bytes, sizeof(primary_bytes));
	struct io_route routes[2] = {
		{ 4096, 4096, memory(dev1_bytes, sizeof(dev1_bytes)) },
		{ 8191, 100, memory(dev2_bytes, sizeof(dev2_bytes)) },
	};
	struct io *io;
	ek_error err;

	(void)state;
	assert_int_equal(io_open_routed(primary, routes, 2, &io, &err), -EUCLEAN);
	routes[1].start = 8192;
	routes[1].len = 0;
	assert_int_equal(io_open_routed(primary, routes, 2, &io, &err), -EUCLEAN);
	/* Refused, they stay ours. */
	io_close(routes[0].io);
	io_close(routes[1].io);
	io_close(primary);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_byte_from_its_file),
		cmocka_unit_test(reads_cross_files),
		cmocka_unit_test(a_batch_reads_each_file),
		cmocka_unit_test(overlapping_ranges_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
