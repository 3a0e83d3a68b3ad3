/*
 * The spec section 11 image (and its 11.6 variant), written byte by byte
 * in spec_image.h, read through the public API; and that image damaged in
 * the ways of spec A.13.  No fixture tree: these need only the bytes.
 */
#include "format/super.h"
#include "lib_fixture.h"
#include "spec_image.h"

/* ------------------------------------------------------------ spec 11 */

struct spec_ctx {
	unsigned int n;
	char names[4][16];
	ek_nid nids[4];
};

static int spec_collect(void *ctx, const ek_dirent *d)
{
	struct spec_ctx *c = ctx;

	if (c->n >= 4 || d->name_len >= 16)
		return -1;
	memcpy(c->names[c->n], d->name, d->name_len);
	c->names[c->n][d->name_len] = '\0';
	c->nids[c->n++] = d->nid;
	return 0;
}

static void check_spec_image(bool variant)
{
	uint8_t *bytes = malloc(SPEC_IMAGE_VARIANT_SIZE);
	size_t size = variant ? SPEC_IMAGE_VARIANT_SIZE : SPEC_IMAGE_SIZE;
	ek_image *img = NULL;
	ek_error err = { 0, "" };
	ek_inode *root, *file;
	struct spec_ctx c;
	const ek_stat *st;
	ek_extent e;
	ek_nid nid;
	char buf[32];

	assert_non_null(bytes);
	spec_image_build(bytes, variant);
	put_le32(bytes + 1028, variant ? SPEC_IMAGE_VARIANT_CRC : SPEC_IMAGE_CRC);
	assert_int_equal(ek_open_memory(bytes, size, NULL, &img, &err), 0);
	assert_int_equal(ek_root_nid(img), SPEC_ROOT_NID);
	assert_int_equal(ek_inode_get(img, SPEC_ROOT_NID, &root, &err), 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(ek_readdir(root, 0, spec_collect, &c, &err), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.names[0], ".");
	assert_string_equal(c.names[1], "..");
	assert_string_equal(c.names[2], "hello.txt");
	assert_int_equal(c.nids[2], SPEC_FILE_NID);
	assert_int_equal(ek_lookup(img, "/hello.txt", &nid, &err), 0);
	assert_int_equal(nid, SPEC_FILE_NID);
	assert_int_equal(ek_inode_get(img, nid, &file, &err), 0);
	st = ek_inode_stat(file);
	assert_int_equal(st->mode, 0100644);
	assert_int_equal(st->size, 14);
	assert_int_equal(st->nlink, 1);
	assert_int_equal(st->mtime, SPEC_EPOCH);
	assert_int_equal(st->mtime_nsec, 0);
	assert_int_equal(ek_inode_stat(root)->nlink, 2);
	assert_int_equal(ek_inode_stat(root)->mode, 040755);
	{
		static const uint8_t uuid[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
						  10, 11, 12, 13, 14, 15 };
		ek_super_info si;
		ek_inode_detail d;

		ek_get_super_info(img, &si);
		assert_int_equal(si.block_size, 4096);
		assert_int_equal(si.inodes, 2);
		assert_int_equal(si.epoch, SPEC_EPOCH);
		assert_int_equal(si.blocks, variant ? 2 : 1);
		assert_memory_equal(si.uuid, uuid, 16);
		assert_string_equal(si.volume_name, "mini");
		assert_int_equal(si.checksum, variant ? SPEC_IMAGE_VARIANT_CRC
						      : SPEC_IMAGE_CRC);
		ek_inode_get_detail(root, &d);
		assert_false(d.extended);
		assert_int_equal(d.layout, EROFS_LAYOUT_FLAT_INLINE);
		assert_int_equal(d.inode_offset, 0x480);
		assert_int_equal(d.inline_offset, 0x4A0);
		assert_int_equal(d.inline_size, 48);
		assert_int_equal(d.on_disk_ino, 1);
		ek_inode_get_detail(file, &d);
		assert_int_equal(d.inode_offset, 0x4E0);
		assert_int_equal(d.on_disk_ino, 2);
		if (variant) {
			assert_int_equal(d.layout, EROFS_LAYOUT_FLAT_PLAIN);
			assert_int_equal(d.raw_u, 1);
		} else {
			assert_int_equal(d.layout, EROFS_LAYOUT_FLAT_INLINE);
			assert_int_equal(d.inline_offset, 0x500);
			assert_int_equal(d.inline_size, 14);
		}
	}
	memset(buf, 0, sizeof(buf));
	assert_int_equal(ek_read(file, buf, sizeof(buf), 0, &err), 14);
	assert_string_equal(buf, "Hello, EROFS!\n");
	assert_int_equal(ek_map(file, 3, &e, &err), 0);
	assert_int_equal(e.logical, 0);
	assert_int_equal(e.length, 14);
	if (variant) {
		assert_int_equal(e.kind, EK_EXTENT_PLAIN);
		assert_false(e.in_metadata);
		assert_int_equal(e.physical, 4096);
	} else {
		assert_int_equal(e.kind, EK_EXTENT_PLAIN);
		assert_true(e.in_metadata);
		assert_int_equal(e.physical, 0x500);
	}
	ek_inode_put(file);
	ek_inode_put(root);
	ek_close(img);
	free(bytes);
}

static void test_spec_image_read(void **state)
{
	(void)state;
	check_spec_image(false);
}

static void test_spec_variant_read(void **state)
{
	(void)state;
	check_spec_image(true);
}

/* Spec A.13: the section 11 image patched (checksum recomputed). */
static uint8_t *patched_spec_image(void)
{
	uint8_t *bytes = malloc(SPEC_IMAGE_SIZE);

	assert_non_null(bytes);
	spec_image_build(bytes, false);
	return bytes;
}

static int open_patched(uint8_t *bytes, ek_image **img, ek_error *err)
{
	put_le32(bytes + 1028, fmt_super_checksum(bytes + 1024, 3072));
	*img = NULL;
	return ek_open_memory(bytes, SPEC_IMAGE_SIZE, NULL, img, err);
}

static int count_dir(void *ctx, const ek_dirent *d)
{
	(void)d;
	(*(unsigned int *)ctx)++;
	return 0;
}

static void test_spec_image_damaged(void **state)
{
	uint8_t *b;
	ek_image *img;
	ek_inode *inode;
	ek_error err = { 0, "" };
	ek_nid nid;
	unsigned int n = 0;
	char buf[64];

	(void)state;
	/* root is not a directory: refused at open */
	b = patched_spec_image();
	put_le16(b + 0x484, 0100755);
	expect_error(open_patched(b, &img, &err), -EUCLEAN, &err);
	assert_null(img);
	free(b);

	/* i_format bit 5 and layout 5: EOPNOTSUPP when the inode is loaded */
	b = patched_spec_image();
	put_le16(b + 0x4E0, 0x0024);
	assert_int_equal(open_patched(b, &img, &err), 0);
	expect_error(ek_inode_get(img, SPEC_FILE_NID, &inode, &err), -EOPNOTSUPP, &err);
	ek_close(img);
	put_le16(b + 0x4E0, 0x000A);
	assert_int_equal(open_patched(b, &img, &err), 0);
	expect_error(ek_inode_get(img, SPEC_FILE_NID, &inode, &err), -EOPNOTSUPP, &err);
	ek_close(img);
	free(b);

	/* NLINK_1 on a compact regular file is accepted: nlink 1 */
	b = patched_spec_image();
	put_le16(b + 0x4E0, 0x0014);
	put_le16(b + 0x4E6, 0);
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_int_equal(ek_inode_get(img, SPEC_FILE_NID, &inode, &err), 0);
	assert_int_equal(ek_inode_stat(inode)->nlink, 1);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(ek_read(inode, buf, sizeof(buf), 0, &err), 14);
	assert_string_equal(buf, "Hello, EROFS!\n");
	ek_inode_put(inode);
	ek_close(img);
	free(b);

	/* nameoff0 8: readdir and lookups fail as corrupt */
	b = patched_spec_image();
	put_le16(b + 0x4A8, 8);
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_int_equal(ek_inode_get(img, SPEC_ROOT_NID, &inode, &err), 0);
	expect_error(ek_readdir(inode, 0, count_dir, &n, &err), -EUCLEAN, &err);
	assert_int_equal(n, 0);
	assert_true(ek_lookup(img, "/hello.txt", &nid, &err) < 0);
	ek_inode_put(inode);
	ek_close(img);
	free(b);

	/* '/' in a name: never listed */
	b = patched_spec_image();
	b[0x4C4 + 3 + 3] = '/';    /* "hel/o.txt" */
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_int_equal(ek_inode_get(img, SPEC_ROOT_NID, &inode, &err), 0);
	n = 0;
	memset(&err, 0, sizeof(err));
	assert_true(ek_readdir(inode, 0, count_dir, &n, &err) < 0);
	assert_int_equal(n, 0);
	assert_true(strlen(err.message) > 0);
	ek_inode_put(inode);
	ek_close(img);
	free(b);

	/* unsorted names: "-ello.txt" sorts before "."; lookups fail */
	b = patched_spec_image();
	b[0x4C4 + 3] = '-';
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_true(ek_lookup(img, "/-ello.txt", &nid, &err) < 0);
	ek_close(img);
	free(b);

	/* an inline tail crossing the block end (i_size 3000 at 0x500):
	 * the data cannot be read */
	b = patched_spec_image();
	put_le32(b + 0x4E8, 3000);
	assert_int_equal(open_patched(b, &img, &err), 0);
	memset(&err, 0, sizeof(err));
	if (ek_inode_get(img, SPEC_FILE_NID, &inode, &err) == 0) {
		char *big = malloc(3000);

		assert_non_null(big);
		assert_true(ek_read(inode, big, 3000, 0, &err) < 0);
		free(big);
		ek_inode_put(inode);
	}
	assert_true(strlen(err.message) > 0);
	ek_close(img);
	free(b);

	/* i_xattr_icount 1 (a header-only body): xattr calls fail */
	b = patched_spec_image();
	put_le16(b + 0x4E2, 1);
	assert_int_equal(open_patched(b, &img, &err), 0);
	assert_int_equal(ek_inode_get(img, SPEC_FILE_NID, &inode, &err), 0);
	memset(&err, 0, sizeof(err));
	assert_true(ek_xattr_list(inode, buf, sizeof(buf), &err) < 0);
	assert_true(strlen(err.message) > 0);
	memset(&err, 0, sizeof(err));
	assert_true(ek_xattr_get(inode, "user.x", buf, sizeof(buf), &err) < 0);
	assert_true(strlen(err.message) > 0);
	ek_inode_put(inode);
	ek_close(img);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_image_read),
		cmocka_unit_test(test_spec_variant_read),
		cmocka_unit_test(test_spec_image_damaged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
