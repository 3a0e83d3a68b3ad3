/* The image file under construction (write/writer): writes taken back
 * leave neither bytes nor a trace in the content hash, and the image
 * only appears, at its committed size, on commit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "write/writer.h"

#define BLK 4096u

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16) | 1;   /* never a zero byte */
	}
}

static void temp_target(char *path, size_t size, const char *name)
{
	char dir[] = "/tmp/ek-writer.XXXXXX";

	assert_non_null(mkdtemp(dir));
	snprintf(path, size, "%s/%s", dir, name);
}

static void remove_target(const char *path)
{
	char dir[256];
	char *slash;

	unlink(path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	rmdir(dir);
}

/*
 * Block 0: a; then a tentative block pair of b, taken back; then at block
 * 1 a block of zeros (which the writer leaves unwritten) and a block of c.
 * Against a writer that only ever wrote a, zeros and c: the same digest,
 * and the zeros read as zeros where b was.
 */
static void test_take_back(void **state)
{
	uint8_t a[BLK], b[2 * BLK], c[2 * BLK], got[3 * BLK], want[3 * BLK];
	uint8_t with[16], without[16];
	char target[256], plain[256];
	struct writer *w, *p;
	ek_error err = { 0 };
	FILE *f;

	(void)state;
	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	memset(c, 0, BLK);
	fill(c + BLK, BLK, 3);
	temp_target(target, sizeof(target), "with.img");
	temp_target(plain, sizeof(plain), "without.img");

	assert_int_equal(writer_open(target, &w, &err), 0);
	assert_int_equal(writer_pwrite(w, 0, a, sizeof(a), &err), 0);
	assert_int_equal(writer_tentative(w, &err), 0);
	assert_int_equal(writer_pwrite(w, BLK, b, sizeof(b), &err), 0);
	assert_int_equal(writer_take_back(w, BLK, sizeof(b), &err), 0);
	assert_int_equal(writer_pwrite(w, BLK, c, sizeof(c), &err), 0);
	writer_digest(w, with);

	assert_int_equal(writer_open(plain, &p, &err), 0);
	assert_int_equal(writer_pwrite(p, 0, a, sizeof(a), &err), 0);
	assert_int_equal(writer_pwrite(p, BLK, c, sizeof(c), &err), 0);
	writer_digest(p, without);
	assert_memory_equal(with, without, sizeof(with));

	/* Taken back past the committed size, too: the size is the one given. */
	assert_int_equal(writer_tentative(w, &err), 0);
	assert_int_equal(writer_pwrite(w, 3 * BLK, b, sizeof(b), &err), 0);
	assert_int_equal(writer_take_back(w, 3 * BLK, sizeof(b), &err), 0);
	assert_int_equal(writer_commit(w, 3 * BLK, &err), 0);
	writer_abort(p);

	f = fopen(target, "rb");
	assert_non_null(f);
	assert_int_equal(fread(got, 1, sizeof(got), f), sizeof(got));
	assert_int_equal(fgetc(f), EOF);
	fclose(f);
	memcpy(want, a, BLK);
	memcpy(want + BLK, c, sizeof(c));
	assert_memory_equal(got, want, sizeof(want));
	remove_target(target);
	remove_target(plain);
}

/* Nothing at the target until commit; an abort leaves nothing behind. */
static void test_commit_or_nothing(void **state)
{
	uint8_t a[BLK];
	char target[256];
	struct writer *w;
	ek_error err = { 0 };
	struct stat st;

	(void)state;
	fill(a, sizeof(a), 4);
	temp_target(target, sizeof(target), "x.img");
	assert_int_equal(writer_open(target, &w, &err), 0);
	assert_int_equal(writer_pwrite(w, 0, a, sizeof(a), &err), 0);
	assert_int_not_equal(stat(target, &st), 0);
	writer_abort(w);
	assert_int_not_equal(stat(target, &st), 0);

	assert_int_equal(writer_open(target, &w, &err), 0);
	assert_int_equal(writer_pwrite(w, 0, a, sizeof(a), &err), 0);
	assert_int_equal(writer_commit(w, 2 * BLK, &err), 0);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 2 * BLK);
	remove_target(target);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_back),
		cmocka_unit_test(test_commit_or_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
