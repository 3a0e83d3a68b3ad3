/* Option strings as users write them: sizes with suffixes wherever a size
 * is taken (-E...=SIZE, dictsize=, -C), the -E switches and their ^ forms,
 * and the messages for what is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "erofskit/build.h"

static void test_sizes(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} good[] = {
		{ "0", 0 },               { "65536", 65536 },
		{ "64K", 65536 },         { "64k", 65536 },
		{ "64KiB", 65536 },       { "64KB", 65536 },
		{ "1M", 1048576 },        { "1MiB", 1048576 },
		{ "2G", 2147483648ull },  { "0x10000", 65536 },
		{ "4096B", 4096 },        { "17179869183G", 17179869183ull << 30 },
	};
	static const char *const bad[] = {
		"", "-1", " 1", "+1", "K", "1T", "1KK", "1Mx", "1 M", "1.5M",
		"64Kb",                  /* kilobits, to some */
		"18446744073709551616",  /* 2^64 */
		"17179869184G",          /* 2^64 after the shift */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(ek_parse_size(good[i].text, &v), 0);
		assert_true(v == good[i].bytes);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(ek_parse_size(bad[i], &v), -EINVAL);
		assert_true(v == 12345);   /* left alone */
	}
	assert_int_equal(ek_parse_size(NULL, NULL), -EINVAL);
}

static int parse_e(const char *list, ek_build_options *o, ek_error *err)
{
	ek_build_options_init(o);
	memset(err, 0, sizeof(*err));
	return ek_parse_extended_options(list, o, err);
}

static void test_fragment_sizes(void **state)
{
	ek_build_options o;
	ek_error err;

	(void)state;
	assert_int_equal(parse_e("fragments=1M", &o, &err), 0);
	assert_int_equal(o.fragments, EK_FRAGMENTS_TAILS);
	assert_int_equal(o.fragment_cluster, 1048576);
	assert_int_equal(parse_e("all-fragments=64K,48bit", &o, &err), 0);
	assert_int_equal(o.fragments, EK_FRAGMENTS_ALL);
	assert_int_equal(o.fragment_cluster, 65536);
	assert_true(o.format_48bit);
	assert_int_equal(parse_e("fragments", &o, &err), 0);
	assert_int_equal(o.fragment_cluster, 0);

	assert_int_equal(parse_e("fragments=2M", &o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "-Efragments=2M: not a cluster size"));
	assert_int_equal(parse_e("all-fragments=lots", &o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "-Eall-fragments=lots"));
}

static void test_switches(void **state)
{
	ek_build_options o;
	ek_error err;

	(void)state;
	assert_int_equal(parse_e("noinline_data", &o, &err), 0);
	assert_true(o.no_inline_data);
	assert_int_equal(parse_e("noinline_data,inline_data", &o, &err), 0);
	assert_false(o.no_inline_data);
	assert_int_equal(parse_e("^inline_data", &o, &err), 0);
	assert_true(o.no_inline_data);
	assert_int_equal(parse_e("^xattr-name-filter", &o, &err), 0);
	assert_true(o.no_xattr_filter);
	assert_int_equal(parse_e("dedupe,^dedupe", &o, &err), 0);
	assert_int_equal(o.dedupe, 0);

	assert_int_equal(parse_e("dedupe=1", &o, &err), -EINVAL);
	assert_string_equal(err.message, "-Ededupe takes no value");
	assert_int_equal(parse_e("^fragments=4096", &o, &err), -EINVAL);
	assert_string_equal(err.message, "-E^fragments takes no value");
	assert_int_equal(parse_e("ztailpacking,bogus", &o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "-Ebogus: not an extended option"));
}

static void test_dictsize(void **state)
{
	ek_build_options o;
	ek_error err = { 0 };

	(void)state;
	ek_build_options_init(&o);
	assert_int_equal(ek_parse_compressor("lzma,dictsize=1M", &o, &err), 0);
	assert_int_equal(o.dict_size, 1048576);
	assert_int_equal(ek_parse_compressor("lzma,level=6,dictsize=65536", &o, &err), 0);
	assert_int_equal(o.dict_size, 65536);
	assert_int_equal(o.level, 6);
	assert_int_equal(ek_parse_compressor("lzma,dictsize=1Q", &o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "dictsize '1Q'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_fragment_sizes),
		cmocka_unit_test(test_switches),
		cmocka_unit_test(test_dictsize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
