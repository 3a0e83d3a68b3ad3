/* The image file under construction (write/writer): the image only
 * appears, at its committed size, on commit; the content hash covers
 * what was written, in order, whatever runs of zeros were left unwritten. */
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

/* Two writers given the same writes agree on the digest, one given
 * other bytes does not; zero blocks (left unwritten) read back as zeros. */
static void test_digest(void **state)
{
	uint8_t a[2 * BLK], got[3 * BLK];
	uint8_t d1[16], d2[16], d3[16];
	char t1[256], t2[256], t3[256];
	struct writer *w1, *w2, *w3;
	ek_error err = { 0 };
	FILE *f;

	(void)state;
	memset(a, 0, BLK);
	fill(a + BLK, BLK, 5);
	temp_target(t1, sizeof(t1), "1.img");
	temp_target(t2, sizeof(t2), "2.img");
	temp_target(t3, sizeof(t3), "3.img");
	assert_int_equal(writer_open(t1, &w1, &err), 0);
	assert_int_equal(writer_open(t2, &w2, &err), 0);
	assert_int_equal(writer_open(t3, &w3, &err), 0);
	assert_int_equal(writer_pwrite(w1, BLK, a, sizeof(a), &err), 0);
	assert_int_equal(writer_pwrite(w2, BLK, a, sizeof(a), &err), 0);
	a[BLK + 7] ^= 1;
	assert_int_equal(writer_pwrite(w3, BLK, a, sizeof(a), &err), 0);
	writer_digest(w1, d1);
	writer_digest(w2, d2);
	writer_digest(w3, d3);
	assert_memory_equal(d1, d2, sizeof(d1));
	assert_memory_not_equal(d1, d3, sizeof(d1));
	assert_int_equal(writer_commit(w1, 3 * BLK, &err), 0);
	writer_abort(w2);
	writer_abort(w3);

	f = fopen(t1, "rb");
	assert_non_null(f);
	assert_int_equal(fread(got, 1, sizeof(got), f), sizeof(got));
	fclose(f);
	a[BLK + 7] ^= 1;
	assert_true(got[0] == 0 && !memcmp(got, got + 1, 2 * BLK - 1));
	assert_memory_equal(got + 2 * BLK, a + BLK, BLK);
	remove_target(t1);
	remove_target(t2);
	remove_target(t3);
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
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_commit_or_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
