/*
 * Concurrent readers: eight threads reading random ranges of random files
 * of one image, through inodes shared with the main thread and their own.
 */
#include <pthread.h>

#include "lib_fixture.h"

/* ------------------------------------------------------------ threads */

struct worker {
	pthread_t tid;
	uint32_t seed;
	ek_inode **shared;      /* handles opened by the main thread */
	unsigned int reads, errors, mismatches;
};

static void *reader(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(70000);
	unsigned int r;

	if (!buf) {
		w->errors++;
		return NULL;
	}
	for (r = 0; r < 3000; r++) {
		unsigned int i = rng(&w->seed) % g.nfiles;
		const struct srcfile *f = &g.files[i];
		uint64_t off = rng(&w->seed) % (f->size + 64);
		size_t len = rng(&w->seed) % 70000;
		size_t expect = off >= f->size ? 0 :
				(len < f->size - off ? len : (size_t)(f->size - off));
		ek_inode *inode = w->shared[i], *own = NULL;
		ek_error err;
		ssize_t n;

		if (r % 2) {
			ek_nid nid;

			if (ek_lookup(g.img, f->path, &nid, &err) ||
			    ek_inode_get(g.img, nid, &own, &err)) {
				w->errors++;
				continue;
			}
			inode = own;
		}
		n = ek_read(inode, buf, len, off, &err);
		if (n < 0)
			w->errors++;
		else if ((size_t)n != expect || memcmp(buf, f->data + off, expect))
			w->mismatches++;
		w->reads++;
		if (own)
			ek_inode_put(own);
	}
	free(buf);
	return NULL;
}

static void test_threads(void **state)
{
	struct worker w[8];
	ek_inode **shared = calloc(g.nfiles, sizeof(*shared));
	unsigned int i;

	(void)state;
	assert_non_null(shared);
	for (i = 0; i < g.nfiles; i++)
		shared[i] = get_path(g.files[i].path);
	for (i = 0; i < 8; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = 0x9E3779B9u * (i + 1);
		w[i].shared = shared;
		assert_int_equal(pthread_create(&w[i].tid, NULL, reader, &w[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		assert_int_equal(pthread_join(w[i].tid, NULL), 0);
		assert_int_equal(w[i].errors, 0);
		assert_int_equal(w[i].mismatches, 0);
		assert_int_equal(w[i].reads, 3000);
	}
	for (i = 0; i < g.nfiles; i++)
		ek_inode_put(shared[i]);
	free(shared);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
