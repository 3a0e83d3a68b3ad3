/*
 * Fragments (file tails and whole small files kept in the packed inode)
 * are decoded once per image and shared by every file, not once per file.
 * A check of upstream fixtures that keep their files in fragments is run
 * through a decoder that counts what it produces: the total must stay
 * within one decode of every file's own data plus one of the packed inode,
 * with one worker and with several.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <erofskit/check.h>
#include <erofskit/erofskit.h>

#include "codec/engine.h"
#include "read/internal.h"

static _Atomic uint64_t decoded_bytes;
static const struct engine_ops *real_ops;
static struct engine_ops counting_ops;

/* Every decode, synchronous or in a batch, passes through ops->decompress. */
static int counting_decompress(struct engine *e, struct dreq *r)
{
	atomic_fetch_add(&decoded_bytes, r->out_len);
	return real_ops->decompress(e, r);
}

static void check_decodes_packed_once(const char *name, unsigned int workers)
{
	const char *fixtures = getenv("EROFSKIT_FIXTURES");
	char path[4096];
	ek_open_options oo;
	ek_check_options co;
	ek_check_stats st;
	ek_image *img = NULL;
	ek_error err = { 0, "" };
	uint64_t packed_size, bound;

	/* EROFSKIT_FIXTURES overrides what the build unpacked. */
	if (!fixtures || !*fixtures)
		fixtures = EK_TEST_FIXTURES;
	snprintf(path, sizeof(path), "%s/images/%s", fixtures, name);
	if (access(path, R_OK))
		fail_msg("fixture %s: %s (configure the build, which unpacks "
			 "tests/fixtures/images.tar.xz, or set EROFSKIT_FIXTURES)",
			 path, strerror(errno));
	ek_open_options_init(&oo);   /* no background workers: the engine is the decoder */
	if (ek_open(path, &oo, &img, &err))
		fail_msg("%s: %s", path, err.message);
	assert_non_null(img->packed);
	packed_size = img->packed->st.size;
	assert_true(packed_size > 0);

	real_ops = img->engine->ops;
	counting_ops = *real_ops;
	counting_ops.decompress = counting_decompress;
	img->engine->ops = &counting_ops;
	atomic_store(&decoded_bytes, 0);

	ek_check_options_init(&co);
	co.workers = workers;
	assert_int_equal(ek_check(img, &co, &st, &err), 0);
	assert_int_equal(st.problems, 0);
	/* Each file's own extents once (st.bytes counts every file byte,
	 * fragments included, so it is generous) and the packed inode once. */
	bound = st.bytes + packed_size;
	if (atomic_load(&decoded_bytes) > bound)
		fail_msg("%s, %u workers: %llu bytes decoded for %llu bytes of files and a "
			 "%llu-byte packed inode",
			 name, workers, (unsigned long long)atomic_load(&decoded_bytes),
			 (unsigned long long)st.bytes, (unsigned long long)packed_size);
	/* The packed inode was decoded at all (so the count means something). */
	assert_true(atomic_load(&decoded_bytes) >= packed_size);
	ek_close(img);
}

static void test_all_fragments(void **state)
{
	(void)state;
	check_decodes_packed_once("lzma-allfragments-1m.img", 1);
	check_decodes_packed_once("lzma-allfragments-1m.img", 4);
}

static void test_fragments_and_dedupe(void **state)
{
	(void)state;
	check_decodes_packed_once("zstd-fragments-dedupe.img", 1);
	check_decodes_packed_once("zstd-fragments-dedupe.img", 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_fragments),
		cmocka_unit_test(test_fragments_and_dedupe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
