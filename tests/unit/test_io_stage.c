/* The direct path's stage (io/stage.c): what it takes of a lent budget,
 * that a pool grown by it holds a whole image for a random reader that
 * the floor alone could not, every byte where it belongs, that a random
 * reader gets the image swept into it, and that a sequential one reuses
 * the chunks it is done with instead of growing the pool. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/stage.h"

#define MIB ((uint64_t)1 << 20)
#define CHUNK (MIB / 2)

/* A file of size bytes whose every 8-byte word holds its own offset. */
static int pattern_file(uint64_t size)
{
	char path[] = "/tmp/erofskit-stage.XXXXXX";
	int fd = mkstemp(path);
	uint64_t *buf = malloc(MIB), off, i;

	assert_true(fd >= 0);
	assert_non_null(buf);
	unlink(path);
	for (off = 0; off < size; off += MIB) {
		for (i = 0; i < MIB / 8; i++)
			buf[i] = off + i * 8;
		assert_int_equal(pwrite(fd, buf, MIB, (off_t)off), (ssize_t)MIB);
	}
	free(buf);
	return fd;
}

static uint64_t lent(int fd, uint64_t size, uint64_t lend)
{
	uint64_t taken;
	struct stage *s = stage_create(fd, size, lend, &taken);

	assert_non_null(s);
	stage_destroy(s);
	return taken;
}

static void takes_what_the_image_needs(void **state)
{
	int fd = pattern_file(40 * MIB);

	(void)state;
	/* The floor is 16 MiB: an image of 8 MiB takes nothing lent. */
	assert_int_equal(lent(fd, 8 * MIB, 100 * MIB), 0);
	/* 40 MiB: 24 beyond the floor, whatever more is offered. */
	assert_int_equal(lent(fd, 40 * MIB, 100 * MIB), 24 * MIB);
	assert_int_equal(lent(fd, 40 * MIB, 10 * MIB), 10 * MIB);
	/* Whole chunks only. */
	assert_int_equal(lent(fd, 40 * MIB, 10 * MIB + CHUNK - 1), 10 * MIB);
	assert_int_equal(lent(fd, 40 * MIB, 0), 0);
	close(fd);
}

/* A reader's small misses in chunks far apart, each then copied (which
 * waits for its read). */
static void random_misses(struct stage *s, unsigned int n)
{
	uint64_t word;
	unsigned int k;

	for (k = 0; k < n; k++) {
		uint64_t off = (1 + 9 * (uint64_t)k) * CHUNK + 4096;

		stage_prepare(s, off, 4096);
		assert_int_equal(stage_copy(s, &word, 8, off), 0);
		assert_int_equal(word, off);
	}
}

/* A random reader's misses, then every chunk of [0, size) read into the
 * pool, then copies of ranges across it: 0 and the right bytes for each
 * when the pool holds it all, -ENOENT for some when it does not. */
static int copies_served(int fd, uint64_t size, uint64_t lend)
{
	uint64_t taken;
	struct stage *s = stage_create(fd, size, lend, &taken);
	uint8_t *got = malloc(3 * CHUNK);
	unsigned int k, served = 0;
	uint64_t off;

	assert_non_null(s);
	assert_non_null(got);
	random_misses(s, 8);
	/* One chunk at a time, each waited for (stage_copy waits for a chunk
	 * being read): the stage caps its reads in flight. */
	for (off = 0; off < size; off += CHUNK) {
		stage_fetch(s, off, CHUNK);
		assert_int_equal(stage_copy(s, got, 8, off), 0);
	}
	srand(7);
	for (k = 0; k < 400; k++) {
		uint64_t at = ((uint64_t)rand() * 4096) % (size - 3 * CHUNK) / 8 * 8;
		size_t len = (size_t)(8 + (uint64_t)rand() % (3 * CHUNK - 8)) / 8 * 8, i;

		if (stage_copy(s, got, len, at))
			continue;
		served++;
		for (i = 0; i < len; i += 8) {
			uint64_t word;

			memcpy(&word, got + i, 8);
			assert_int_equal(word, at + i);
		}
	}
	free(got);
	stage_destroy(s);
	return (int)served;
}

static void a_grown_pool_holds_the_image(void **state)
{
	int fd = pattern_file(40 * MIB);

	(void)state;
	assert_int_equal(copies_served(fd, 40 * MIB, 24 * MIB), 400);
	/* The floor alone keeps 16 of the 40 MiB. */
	assert_true(copies_served(fd, 40 * MIB, 0) < 400);
	close(fd);
}

/* Whether every chunk of [0, size) is staged, its first word right. */
static bool all_staged(struct stage *s, uint64_t size)
{
	uint64_t off, word;

	for (off = 0; off < size; off += CHUNK) {
		if (stage_copy(s, &word, 8, off))
			return false;
		assert_int_equal(word, off);
	}
	return true;
}

static void a_random_reader_gets_the_image_swept(void **state)
{
	int fd = pattern_file(40 * MIB);
	uint64_t taken;
	struct stage *s = stage_create(fd, 40 * MIB, 24 * MIB, &taken);
	unsigned int waited;

	(void)state;
	assert_non_null(s);
	/* Seven misses: no sweep (nothing but them is read, however long
	 * one waits). */
	random_misses(s, 7);
	usleep(200 * 1000);
	assert_false(all_staged(s, 40 * MIB));
	/* The eighth starts it: the whole image arrives unasked. */
	random_misses(s, 8);
	for (waited = 0; waited < 1000 && !all_staged(s, 40 * MIB); waited++)
		usleep(10 * 1000);
	assert_true(all_staged(s, 40 * MIB));
	stage_destroy(s);
	close(fd);
}

/* A sequential reader of 4 KiB, every 64 KiB, across an image as large
 * as the pool: it ends with the last chunks staged and the first ones
 * reused for them, where a random reader's pool would have kept them all
 * (a_grown_pool_holds_the_image). */
static void a_sequential_reader_reuses_chunks(void **state)
{
	int fd = pattern_file(40 * MIB);
	uint64_t taken, off, word;
	struct stage *s = stage_create(fd, 40 * MIB, 24 * MIB, &taken);

	(void)state;
	assert_non_null(s);
	assert_int_equal(taken, 24 * MIB);
	for (off = 0; off < 40 * MIB; off += 64 << 10) {
		stage_prepare(s, off, 4096);
		assert_int_equal(stage_copy(s, &word, 8, off), 0);
		assert_int_equal(word, off);
	}
	assert_int_equal(stage_copy(s, &word, 8, 40 * MIB - CHUNK), 0);
	assert_int_equal(word, 40 * MIB - CHUNK);
	assert_int_equal(stage_copy(s, &word, 8, 0), -ENOENT);
	stage_destroy(s);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(takes_what_the_image_needs),
		cmocka_unit_test(a_grown_pool_holds_the_image),
		cmocka_unit_test(a_random_reader_gets_the_image_swept),
		cmocka_unit_test(a_sequential_reader_reuses_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
