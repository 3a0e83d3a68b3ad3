/* Xattr names, entries, body header and bloom filter (spec 5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/xattr.h"

/* ------------------------------------------------------------ prefixes */

static void expect_split(const char *name, uint8_t index, size_t prefix_len)
{
	uint8_t got_index = 0xEE;
	size_t got_len = 999;

	assert_true(fmt_xattr_split(name, strlen(name), &got_index, &got_len));
	assert_int_equal(got_index, index);
	assert_int_equal(got_len, prefix_len);
}

static void expect_no_split(const char *name, size_t len)
{
	uint8_t index = 0;
	size_t prefix_len = 0;

	assert_false(fmt_xattr_split(name, len, &index, &prefix_len));
}

static void test_prefix_table(void **state)
{
	(void)state;
	assert_null(fmt_xattr_prefix(0));
	assert_string_equal(fmt_xattr_prefix(1), "user.");
	assert_string_equal(fmt_xattr_prefix(2), "system.posix_acl_access");
	assert_string_equal(fmt_xattr_prefix(3), "system.posix_acl_default");
	assert_string_equal(fmt_xattr_prefix(4), "trusted.");
	assert_string_equal(fmt_xattr_prefix(5), "lustre.");
	assert_string_equal(fmt_xattr_prefix(6), "security.");
	assert_null(fmt_xattr_prefix(7));
	assert_null(fmt_xattr_prefix(0x80));
	assert_null(fmt_xattr_prefix(255));
}

static void test_split_accepts(void **state)
{
	(void)state;
	expect_split("user.foo", EROFS_XATTR_INDEX_USER, 5);
	expect_split("user.x", EROFS_XATTR_INDEX_USER, 5);
	expect_split("user.user.", EROFS_XATTR_INDEX_USER, 5);
	expect_split("trusted.overlay.opaque", EROFS_XATTR_INDEX_TRUSTED, 8);
	expect_split("security.selinux", EROFS_XATTR_INDEX_SECURITY, 9);
	expect_split("security.capability", EROFS_XATTR_INDEX_SECURITY, 9);
	expect_split("system.posix_acl_access",
		     EROFS_XATTR_INDEX_POSIX_ACL_ACCESS, 23);
	expect_split("system.posix_acl_default",
		     EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT, 24);
}

static void test_split_rejects(void **state)
{
	(void)state;
	expect_no_split("system.foo", 10);
	expect_no_split("system.", 7);
	expect_no_split("lustre.x", 8);
	expect_no_split("user.", 5);
	expect_no_split("trusted.", 8);
	expect_no_split("security.", 9);
	expect_no_split("user", 4);
	expect_no_split("", 0);
	expect_no_split("USER.foo", 8);
	expect_no_split("xuser.foo", 9);
	/* ACL names are whole prefixes */
	expect_no_split("system.posix_acl_access.x", 25);
	expect_no_split("system.posix_acl_accessx", 24);
	expect_no_split("system.posix_acl_defaults", 25);
	expect_no_split("system.posix_acl", 16);
	/* the length given counts, not the NUL */
	expect_no_split("user.foo", 5);
	expect_no_split("user.foo", 3);
}

/* ------------------------------------------------------------ entries */

static void test_entry_sizes(void **state)
{
	(void)state;
	assert_int_equal(fmt_xattr_entry_size(0, 0), 4);
	assert_int_equal(fmt_xattr_entry_size(1, 0), 8);
	assert_int_equal(fmt_xattr_entry_size(4, 0), 8);
	assert_int_equal(fmt_xattr_entry_size(3, 1), 8);
	assert_int_equal(fmt_xattr_entry_size(4, 1), 12);
	assert_int_equal(fmt_xattr_entry_size(6, 12), 24);
	assert_int_equal(fmt_xattr_entry_size(0, 28), 32);
	assert_int_equal(fmt_xattr_entry_size(255, 65535), 65796);
}

/* The entries of spec A.9, exact bytes including the zero padding. */
static void test_entry_encode_spec(void **state)
{
	static const uint8_t shared[24] = {
		0x06, 0x01, 0x0C, 0x00, 'c', 'o', 'm', 'm', 'o', 'n',
		's', 'h', 'a', 'r', 'e', 'd', '-', 'v', 'a', 'l', 'u', 'e',
		0, 0,
	};
	static const uint8_t opaque[12] = {
		0x06, 0x80, 0x01, 0x00, 'o', 'p', 'a', 'q', 'u', 'e', 'y', 0,
	};
	static const uint8_t only[12] = {
		0x04, 0x01, 0x01, 0x00, 'o', 'n', 'l', 'y', 'x', 0, 0, 0,
	};
	uint8_t out[64];
	struct fmt_xattr_entry_hdr h;

	(void)state;
	memset(out, 0xEE, sizeof(out));
	assert_int_equal(fmt_xattr_entry_encode(out, 1, "common", 6,
						"shared-value", 12), 24);
	assert_memory_equal(out, shared, 24);
	assert_int_equal(out[24], 0xEE);
	fmt_xattr_entry_decode(out, &h);
	assert_int_equal(h.name_len, 6);
	assert_int_equal(h.name_index, 1);
	assert_int_equal(h.value_size, 12);

	memset(out, 0xEE, sizeof(out));
	assert_int_equal(fmt_xattr_entry_encode(out, 0x80, "opaque", 6, "y", 1), 12);
	assert_memory_equal(out, opaque, 12);
	fmt_xattr_entry_decode(out, &h);
	assert_int_equal(h.name_index, 0x80);

	memset(out, 0xEE, sizeof(out));
	assert_int_equal(fmt_xattr_entry_encode(out, 1, "only", 4, "x", 1), 12);
	assert_memory_equal(out, only, 12);
}

static void test_entry_encode_empty(void **state)
{
	static const uint8_t acl[8] = { 0x00, 0x02, 0x04, 0x00, 1, 2, 3, 4 };
	static const uint8_t empty_value[8] = { 0x01, 0x01, 0x00, 0x00, 'e', 0, 0, 0 };
	uint8_t out[16];

	(void)state;
	/* ACL: empty suffix */
	memset(out, 0xEE, sizeof(out));
	assert_int_equal(fmt_xattr_entry_encode(out, 2, "", 0, "\1\2\3\4", 4), 8);
	assert_memory_equal(out, acl, 8);
	/* empty value */
	memset(out, 0xEE, sizeof(out));
	assert_int_equal(fmt_xattr_entry_encode(out, 1, "e", 1, NULL, 0), 8);
	assert_memory_equal(out, empty_value, 8);
	assert_int_equal(out[8], 0xEE);
}

static void test_entry_encode_max(void **state)
{
	size_t size = fmt_xattr_entry_size(255, 65535);
	uint8_t *out = malloc(size + 4);
	uint8_t *name = malloc(255), *value = malloc(65535);
	struct fmt_xattr_entry_hdr h;
	size_t i;

	(void)state;
	assert_non_null(out);
	assert_non_null(name);
	assert_non_null(value);
	memset(name, 'n', 255);
	for (i = 0; i < 65535; i++)
		value[i] = (uint8_t)(i * 7);
	memset(out, 0xEE, size + 4);
	assert_int_equal(fmt_xattr_entry_encode(out, 6, name, 255, value, 65535),
			 size);
	fmt_xattr_entry_decode(out, &h);
	assert_int_equal(h.name_len, 255);
	assert_int_equal(h.name_index, 6);
	assert_int_equal(h.value_size, 65535);
	assert_memory_equal(out + 4, name, 255);
	assert_memory_equal(out + 4 + 255, value, 65535);
	/* 4 + 255 + 65535 = 65794: two padding bytes */
	assert_int_equal(out[65794], 0);
	assert_int_equal(out[65795], 0);
	assert_int_equal(out[65796], 0xEE);
	free(out);
	free(name);
	free(value);
}

static void test_body_header(void **state)
{
	uint8_t out[16];
	struct fmt_xattr_body_hdr h;
	size_t i;

	(void)state;
	memset(out, 0xEE, sizeof(out));
	fmt_xattr_body_encode(out, 0xEFEFDFFFu, 1);
	/* spec A.9: filter bytes FF DF EF EF, shared count 1 */
	assert_int_equal(out[0], 0xFF);
	assert_int_equal(out[1], 0xDF);
	assert_int_equal(out[2], 0xEF);
	assert_int_equal(out[3], 0xEF);
	assert_int_equal(out[4], 1);
	for (i = 5; i < 12; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(out[12], 0xEE);
	fmt_xattr_body_decode(out, &h);
	assert_int_equal(h.name_filter, 0xEFEFDFFFu);
	assert_int_equal(h.shared_count, 1);

	fmt_xattr_body_encode(out, 0, 255);
	fmt_xattr_body_decode(out, &h);
	assert_int_equal(h.name_filter, 0);
	assert_int_equal(h.shared_count, 255);
}

/* ------------------------------------------------------------ filter */

/* The filter of a set of full names, as the spec (5.7) defines it. */
static uint32_t filter_of(const char *const *names, size_t n)
{
	uint32_t mask = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint8_t index = 0;
		size_t plen = 0;
		unsigned int bit;

		assert_true(fmt_xattr_split(names[i], strlen(names[i]), &index, &plen));
		bit = fmt_xattr_filter_bit(names[i] + plen, strlen(names[i]) - plen,
					   index);
		assert_true(bit < 32);
		mask |= 1u << bit;
	}
	return ~mask;
}

static void test_filter_spec(void **state)
{
	static const char *const three[] = {
		"user.common", "user.only", "trusted.overlay.opaque",
	};
	static const char *const one[] = { "user.common" };

	(void)state;
	assert_int_equal(filter_of(three, 3), 0xEFEFDFFFu);
	assert_int_equal(filter_of(one, 1), 0xFFFFDFFFu);
	/* the three names hash to three distinct bits: 13, 20, 28 */
	assert_int_equal(fmt_xattr_filter_bit("common", 6, 1), 13);
	assert_int_equal(fmt_xattr_filter_bit("only", 4, 1), 28);
	assert_int_equal(fmt_xattr_filter_bit("overlay.opaque", 14, 4), 20);
}

/* The seed depends on the prefix index, and only the suffix is hashed. */
static void test_filter_inputs(void **state)
{
	unsigned int i, differs = 0;
	static const char *const names[] = {
		"a", "bb", "selinux", "capability", "common", "x", "overlay.",
		"mime_type", "checksum", "origin",
	};

	(void)state;
	/* same suffix, other indexes: at least one name must differ */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (fmt_xattr_filter_bit(names[i], strlen(names[i]), 1) !=
		    fmt_xattr_filter_bit(names[i], strlen(names[i]), 6))
			differs++;
	assert_true(differs > 0);
	/* deterministic, and the empty ACL name is valid input */
	assert_int_equal(fmt_xattr_filter_bit("", 0, 2),
			 fmt_xattr_filter_bit("", 0, 2));
	assert_int_equal(fmt_xattr_filter_bit("", 0, 2), 30);
	/* the length bounds the input */
	assert_int_equal(fmt_xattr_filter_bit("commonXYZ", 6, 1), 13);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_table),
		cmocka_unit_test(test_split_accepts),
		cmocka_unit_test(test_split_rejects),
		cmocka_unit_test(test_entry_sizes),
		cmocka_unit_test(test_entry_encode_spec),
		cmocka_unit_test(test_entry_encode_empty),
		cmocka_unit_test(test_entry_encode_max),
		cmocka_unit_test(test_body_header),
		cmocka_unit_test(test_filter_spec),
		cmocka_unit_test(test_filter_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
