/* Inode cores (spec 3): compact/extended encode and decode, rejections. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "format/inode.h"

static struct fmt_super test_sb(int64_t epoch, uint32_t fixed_nsec)
{
	struct fmt_super sb;

	memset(&sb, 0, sizeof(sb));
	sb.magic = EROFS_SUPER_MAGIC;
	sb.blkszbits = 12;
	sb.blksz = 4096;
	sb.epoch = epoch;
	sb.fixed_nsec = fixed_nsec;
	return sb;
}

static int decode(const uint8_t *buf, const struct fmt_super *sb,
		  struct fmt_inode *out)
{
	fmt_why why;

	memset(&why, 0, sizeof(why));
	return fmt_inode_decode(buf, sb, out, &why);
}

static void expect_reject(const uint8_t *buf, const struct fmt_super *sb,
			  int code)
{
	struct fmt_inode out;
	fmt_why why;

	memset(&why, 0, sizeof(why));
	assert_int_equal(fmt_inode_decode(buf, sb, &out, &why), code);
	assert_true(strlen(why.text) > 0);
}

/* A valid compact regular-file core to patch. */
static void compact_base(uint8_t *buf)
{
	memset(buf, 0, 64);
	put_le16(buf + 0, fmt_iformat(false, EROFS_LAYOUT_FLAT_PLAIN));
	put_le16(buf + 4, S_IFREG | 0644);
	put_le16(buf + 6, 1);
	put_le32(buf + 8, 100);
}

/* A valid extended regular-file core to patch. */
static void extended_base(uint8_t *buf)
{
	memset(buf, 0, 64);
	put_le16(buf + 0, fmt_iformat(true, EROFS_LAYOUT_FLAT_PLAIN));
	put_le16(buf + 4, S_IFREG | 0644);
	put_le64(buf + 8, 100);
	put_le32(buf + 44, 1);
}

/* ------------------------------------------------------------ compact */

static void test_iformat_values(void **state)
{
	(void)state;
	/* spec 3.1 examples */
	assert_int_equal(fmt_iformat(false, EROFS_LAYOUT_FLAT_INLINE), 0x0004);
	assert_int_equal(fmt_iformat(true, EROFS_LAYOUT_FLAT_INLINE), 0x0005);
	assert_int_equal(fmt_iformat(false, EROFS_LAYOUT_COMPRESSED_COMPACT), 0x0006);
	assert_int_equal(fmt_iformat(false, EROFS_LAYOUT_CHUNK_BASED), 0x0008);
	assert_int_equal(fmt_iformat(false, EROFS_LAYOUT_FLAT_PLAIN), 0x0000);
	assert_int_equal(fmt_inode_core_size(0x0004), 32);
	assert_int_equal(fmt_inode_core_size(0x0005), 64);
	assert_int_equal(fmt_xattr_isize(0), 0);
	assert_int_equal(fmt_xattr_isize(1), 12);
	assert_int_equal(fmt_xattr_isize(2), 16);
	assert_int_equal(fmt_xattr_isize(8), 40);
}

/* The two compact inodes of spec 11.3/11.4, exact bytes. */
static void test_compact_encode_spec_bytes(void **state)
{
	static const uint8_t root[32] = {
		0x04, 0x00, 0x00, 0x00, 0xED, 0x41, 0x02, 0x00,
		0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00,
		0, 0, 0, 0, 0, 0, 0, 0,
	};
	static const uint8_t file[32] = {
		0x04, 0x00, 0x00, 0x00, 0xA4, 0x81, 0x01, 0x00,
		0x0E, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x00, 0x00, 0x00,
		0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct fmt_inode in;
	uint8_t out[32];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.layout = EROFS_LAYOUT_FLAT_INLINE;
	in.mode = S_IFDIR | 0755;
	in.nlink = 2;
	in.size = 48;
	in.mtime = 1700000000;
	in.u = 0xFFFFFFFFu;
	in.ino = 1;
	memset(out, 0xAA, sizeof(out));
	fmt_inode_encode(&in, in.mtime, out);
	assert_memory_equal(out, root, 32);

	memset(&in, 0, sizeof(in));
	in.layout = EROFS_LAYOUT_FLAT_INLINE;
	in.mode = S_IFREG | 0644;
	in.nlink = 1;
	in.size = 14;
	in.mtime = 1700000000;
	in.u = 0xFFFFFFFFu;
	in.ino = 2;
	memset(out, 0x55, sizeof(out));
	fmt_inode_encode(&in, in.mtime, out);
	assert_memory_equal(out, file, 32);
}

static void test_compact_roundtrip(void **state)
{
	struct fmt_super sb = test_sb(1700000000, 250);
	struct fmt_inode in, out;
	uint8_t buf[64];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.layout = EROFS_LAYOUT_FLAT_PLAIN;
	in.xattr_icount = 3;
	in.mode = S_IFREG | 04755;
	in.nlink = 0xFFFE;
	in.size = 0xFFFFFFFFull;
	in.mtime = 1700000000;
	in.mtime_nsec = 250;
	in.u = 0x01020304u;
	in.ino = 0xA0B0C0D0u;
	in.uid = 0xFFFF;
	in.gid = 0x1234;
	memset(buf, 0xEE, sizeof(buf));
	fmt_inode_encode(&in, sb.epoch, buf);
	/* compact form is 32 bytes and leaves the rest alone */
	assert_int_equal(buf[32], 0xEE);
	assert_int_equal(get_le16(buf + 0), 0x0000);
	assert_int_equal(get_le16(buf + 2), 3);
	assert_int_equal(get_le16(buf + 4), S_IFREG | 04755);
	assert_int_equal(get_le16(buf + 6), 0xFFFE);
	assert_int_equal(get_le32(buf + 8), 0xFFFFFFFFu);
	assert_int_equal(get_le32(buf + 12), 0);
	assert_int_equal(get_le32(buf + 16), 0x01020304u);
	assert_int_equal(get_le32(buf + 20), 0xA0B0C0D0u);
	assert_int_equal(get_le16(buf + 24), 0xFFFF);
	assert_int_equal(get_le16(buf + 26), 0x1234);
	assert_int_equal(get_le32(buf + 28), 0);

	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_false(out.extended);
	assert_int_equal(out.layout, EROFS_LAYOUT_FLAT_PLAIN);
	assert_false(out.format_bit4);
	assert_int_equal(out.xattr_icount, 3);
	assert_int_equal(out.xattr_size, 20);
	assert_int_equal(out.core_size, 32);
	assert_int_equal(out.mode, S_IFREG | 04755);
	assert_int_equal(out.nb, 0xFFFE);
	assert_int_equal(out.nlink, 0xFFFE);
	assert_int_equal(out.size, 0xFFFFFFFFull);
	assert_int_equal(out.mtime, 1700000000);
	assert_int_equal(out.mtime_nsec, 250);
	assert_int_equal(out.u, 0x01020304u);
	assert_int_equal(out.ino, 0xA0B0C0D0u);
	assert_int_equal(out.uid, 0xFFFF);
	assert_int_equal(out.gid, 0x1234);
	assert_int_equal(out.startblk, 0x01020304u);
	assert_false(out.startblk_null);

	/* a compact mtime of its own (48-bit images): seconds after the epoch */
	memset(&in, 0, sizeof(in));
	in.mode = S_IFREG | 0644;
	in.nlink = 1;
	in.mtime = 1700000100;
	in.mtime_nsec = 250;
	fmt_inode_encode(&in, sb.epoch, buf);
	assert_int_equal(get_le32(buf + 12), 100);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_int_equal(out.mtime, 1700000100);
	assert_int_equal(out.mtime_nsec, 250);
}

/* Compact mtime = epoch + (unsigned) i_mtime, nanoseconds = fixed_nsec
 * (spec 3.5: i_mtime 100, fixed_nsec 123456789). */
static void test_compact_mtime(void **state)
{
	struct fmt_super sb = test_sb(1700000000, 123456789);
	struct fmt_inode out;
	uint8_t buf[64];

	(void)state;
	compact_base(buf);
	put_le32(buf + 12, 100);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_int_equal(out.mtime, 1700000100);
	assert_int_equal(out.mtime_nsec, 123456789);

	/* the field is unsigned: no negative offsets */
	put_le32(buf + 12, 0xFFFFFFFFu);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_int_equal(out.mtime, 1700000000ll + 0xFFFFFFFFll);

	/* negative epochs work too */
	sb = test_sb(-1000, 0);
	put_le32(buf + 12, 400);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_int_equal(out.mtime, -600);
	assert_int_equal(out.mtime_nsec, 0);
}

/* i_format bit 4 on a compact non-directory: NLINK_1, i_nb = high bits. */
static void test_compact_nlink1(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];

	(void)state;
	compact_base(buf);
	put_le16(buf + 0, fmt_iformat(false, EROFS_LAYOUT_FLAT_PLAIN) |
			  EROFS_IFORMAT_BIT4);
	put_le16(buf + 6, 0x0012);
	put_le32(buf + 16, 0x00000034u);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_true(out.format_bit4);
	assert_int_equal(out.nlink, 1);
	assert_int_equal(out.nb, 0x0012);
	assert_int_equal(out.startblk, 0x0000001200000034ull);
	assert_false(out.startblk_null);

	/* 48-bit NULL: i_u all ones and i_nb all ones */
	put_le16(buf + 6, 0xFFFF);
	put_le32(buf + 16, 0xFFFFFFFFu);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_true(out.startblk_null);
	put_le16(buf + 6, 0x0000);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_false(out.startblk_null);

	/* on symlinks as well */
	put_le16(buf + 4, S_IFLNK | 0777);
	put_le16(buf + 6, 7);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_int_equal(out.nlink, 1);

	/* on a directory the bit is DOT_OMITTED: i_nb stays the link count */
	put_le16(buf + 4, S_IFDIR | 0755);
	put_le16(buf + 6, 5);
	put_le32(buf + 16, 9);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_true(out.format_bit4);
	assert_int_equal(out.nlink, 5);
	assert_int_equal(out.startblk, 9);

	/* encode keeps i_nb for NLINK_1 */
	{
		struct fmt_inode in;
		uint8_t enc[32];

		memset(&in, 0, sizeof(in));
		in.format_bit4 = true;
		in.mode = S_IFREG | 0600;
		in.nb = 0x00AB;
		in.nlink = 1;
		fmt_inode_encode(&in, 0, enc);
		assert_int_equal(get_le16(enc + 0), 0x0010);
		assert_int_equal(get_le16(enc + 6), 0x00AB);
	}
}

static void test_compact_null_startblk(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];

	(void)state;
	compact_base(buf);
	put_le32(buf + 16, 0xFFFFFFFFu);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_true(out.startblk_null);
	/* FLAT_INLINE with i_u all ones is "no full blocks", not a hole */
	put_le16(buf + 0, fmt_iformat(false, EROFS_LAYOUT_FLAT_INLINE));
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_false(out.startblk_null);
}

/* ------------------------------------------------------------ extended */

/* Spec A.12: uid 70000, gid 70001, mtime 1700000123.456789000. */
static const uint8_t a12[64] = {
	0x05, 0x00, 0x00, 0x00, 0xA4, 0x81, 0x00, 0x00,
	0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x00, 0x00, 0x00,
	0x70, 0x11, 0x01, 0x00, 0x71, 0x11, 0x01, 0x00,
	0x7B, 0xF1, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00,
	0x08, 0x0C, 0x3A, 0x1B, 0x01, 0x00, 0x00, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static void test_extended_spec_a12_decode(void **state)
{
	struct fmt_super sb = test_sb(1700000000, 0);
	struct fmt_inode out;

	(void)state;
	assert_int_equal(decode(a12, &sb, &out), 0);
	assert_true(out.extended);
	assert_int_equal(out.core_size, 64);
	assert_int_equal(out.layout, EROFS_LAYOUT_FLAT_INLINE);
	assert_int_equal(out.mode, S_IFREG | 0644);
	assert_int_equal(out.size, 3);
	assert_int_equal(out.u, 0xFFFFFFFFu);
	assert_int_equal(out.ino, 2);
	assert_int_equal(out.uid, 70000);
	assert_int_equal(out.gid, 70001);
	assert_int_equal(out.mtime, 1700000123);
	assert_int_equal(out.mtime_nsec, 456789000);
	assert_int_equal(out.nlink, 1);
	assert_int_equal(out.xattr_size, 0);
}

static void test_extended_spec_a12_encode(void **state)
{
	struct fmt_inode in;
	uint8_t out[64];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.extended = true;
	in.layout = EROFS_LAYOUT_FLAT_INLINE;
	in.mode = S_IFREG | 0644;
	in.size = 3;
	in.u = 0xFFFFFFFFu;
	in.ino = 2;
	in.uid = 70000;
	in.gid = 70001;
	in.mtime = 1700000123;
	in.mtime_nsec = 456789000;
	in.nlink = 1;
	memset(out, 0xA5, sizeof(out));
	fmt_inode_encode(&in, in.mtime, out);
	assert_memory_equal(out, a12, 64);
}

static void test_extended_roundtrip(void **state)
{
	struct fmt_super sb = test_sb(5, 7);
	struct fmt_inode in, out;
	uint8_t buf[64];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.extended = true;
	in.layout = EROFS_LAYOUT_FLAT_PLAIN;
	in.xattr_icount = 0xFFFF;
	in.mode = S_IFDIR | 01777;
	in.nb = 0x00C3;
	in.nlink = 0x12345678u;
	in.size = (1ull << 63) - 1;
	in.mtime = -2208988800ll;     /* 1900-01-01 */
	in.mtime_nsec = 999999999u;
	in.u = 0x89ABCDEFu;
	in.ino = 77;
	in.uid = 0xFFFFFFFEu;
	in.gid = 0x80000000u;
	fmt_inode_encode(&in, sb.epoch, buf);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_true(out.extended);
	assert_int_equal(out.layout, EROFS_LAYOUT_FLAT_PLAIN);
	assert_int_equal(out.xattr_icount, 0xFFFF);
	assert_int_equal(out.xattr_size, 12 + 4 * 0xFFFEu);
	assert_int_equal(out.mode, S_IFDIR | 01777);
	assert_int_equal(out.nb, 0x00C3);
	assert_int_equal(out.nlink, 0x12345678u);
	assert_int_equal(out.size, (1ull << 63) - 1);
	assert_int_equal(out.mtime, -2208988800ll);
	assert_int_equal(out.mtime_nsec, 999999999u);
	assert_int_equal(out.u, 0x89ABCDEFu);
	assert_int_equal(out.ino, 77);
	assert_int_equal(out.uid, 0xFFFFFFFEu);
	assert_int_equal(out.gid, 0x80000000u);
	/* extended cores always carry the high address bits in i_nb */
	assert_int_equal(out.startblk, 0x000000C389ABCDEFull);
	/* reserved tail is zero */
	assert_int_equal(get_le64(buf + 48), 0);
	assert_int_equal(get_le64(buf + 56), 0);
}

static void test_extended_null_startblk(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];

	(void)state;
	extended_base(buf);
	put_le32(buf + 16, 0xFFFFFFFFu);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_false(out.startblk_null);       /* 48-bit: i_nb must be all ones too */
	put_le16(buf + 6, 0xFFFF);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_true(out.startblk_null);
}

/* ------------------------------------------------------------ devices */

static void test_rdev(void **state)
{
	uint32_t major, minor;

	(void)state;
	assert_int_equal(fmt_encode_rdev(8, 17), 0x811);
	assert_int_equal(fmt_encode_rdev(1, 3), 0x103);
	fmt_decode_rdev(0x811, &major, &minor);
	assert_int_equal(major, 8);
	assert_int_equal(minor, 17);
	fmt_decode_rdev(0x103, &major, &minor);
	assert_int_equal(major, 1);
	assert_int_equal(minor, 3);

	/* minors above 255 keep their high bits at 20.. */
	assert_int_equal(fmt_encode_rdev(259, 300), 0x0011032Cu);
	fmt_decode_rdev(0x0011032Cu, &major, &minor);
	assert_int_equal(major, 259);
	assert_int_equal(minor, 300);
	/* the largest numbers of the 32-bit encoding */
	assert_int_equal(fmt_encode_rdev(0xFFF, 0xFFFFF), 0xFFFFFFFFu);
	fmt_decode_rdev(0xFFFFFFFFu, &major, &minor);
	assert_int_equal(major, 0xFFF);
	assert_int_equal(minor, 0xFFFFF);
	fmt_decode_rdev(fmt_encode_rdev(4095, 65536), &major, &minor);
	assert_int_equal(major, 4095);
	assert_int_equal(minor, 65536);
}

static void test_device_inode_decode(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];

	(void)state;
	compact_base(buf);
	put_le16(buf + 4, S_IFBLK | 0660);
	put_le32(buf + 8, 0);
	put_le32(buf + 16, 0x811);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_int_equal(out.rdev_major, 8);
	assert_int_equal(out.rdev_minor, 17);
	put_le16(buf + 4, S_IFCHR | 0666);
	put_le32(buf + 16, fmt_encode_rdev(136, 1000));
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_int_equal(out.rdev_major, 136);
	assert_int_equal(out.rdev_minor, 1000);
}

static void test_ftype_of_mode(void **state)
{
	(void)state;
	assert_int_equal(fmt_ftype_of_mode(S_IFREG | 0644), EROFS_FT_REG);
	assert_int_equal(fmt_ftype_of_mode(S_IFDIR | 0755), EROFS_FT_DIR);
	assert_int_equal(fmt_ftype_of_mode(S_IFCHR), EROFS_FT_CHR);
	assert_int_equal(fmt_ftype_of_mode(S_IFBLK), EROFS_FT_BLK);
	assert_int_equal(fmt_ftype_of_mode(S_IFIFO), EROFS_FT_FIFO);
	assert_int_equal(fmt_ftype_of_mode(S_IFSOCK), EROFS_FT_SOCK);
	assert_int_equal(fmt_ftype_of_mode(S_IFLNK | 0777), EROFS_FT_LNK);
	assert_int_equal(fmt_ftype_of_mode(0), EROFS_FT_UNKNOWN);
}

/* ------------------------------------------------------------ rejects */

static void test_reject_iformat_bits(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];
	unsigned int bit;

	(void)state;
	for (bit = 5; bit < 16; bit++) {
		compact_base(buf);
		put_le16(buf, (uint16_t)(1u << bit));
		expect_reject(buf, &sb, -EOPNOTSUPP);
		extended_base(buf);
		put_le16(buf, (uint16_t)(0x0001u | (1u << bit)));
		expect_reject(buf, &sb, -EOPNOTSUPP);
	}
	/* bits 0..4 alone are fine */
	compact_base(buf);
	put_le16(buf, 0x0010);
	assert_int_equal(decode(buf, &sb, &out), 0);
}

static void test_reject_layouts(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];
	unsigned int layout;

	(void)state;
	for (layout = 5; layout <= 7; layout++) {
		compact_base(buf);
		put_le16(buf, fmt_iformat(false, layout));
		expect_reject(buf, &sb, -EOPNOTSUPP);
		extended_base(buf);
		put_le16(buf, fmt_iformat(true, layout));
		expect_reject(buf, &sb, -EOPNOTSUPP);
	}
	for (layout = 0; layout < 5; layout++) {
		compact_base(buf);
		put_le16(buf, fmt_iformat(false, layout));
		assert_int_equal(decode(buf, &sb, &out), 0);
		assert_int_equal(out.layout, layout);
	}
}

static void test_reject_mode_type(void **state)
{
	static const uint16_t bad[] = { 0, 0030000, 0050000, 0070000, 0110000,
					0130000, 0150000, 0160000, 0170000 };
	struct fmt_super sb = test_sb(0, 0);
	uint8_t buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		compact_base(buf);
		put_le16(buf + 4, (uint16_t)(bad[i] | 0644));
		expect_reject(buf, &sb, -EUCLEAN);
		extended_base(buf);
		put_le16(buf + 4, (uint16_t)(bad[i] | 0644));
		expect_reject(buf, &sb, -EUCLEAN);
	}
}

static void test_reject_negative_size(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];

	(void)state;
	extended_base(buf);
	put_le64(buf + 8, 1ull << 63);
	expect_reject(buf, &sb, -EUCLEAN);
	put_le64(buf + 8, UINT64_MAX);
	expect_reject(buf, &sb, -EUCLEAN);
	put_le64(buf + 8, (1ull << 63) - 1);
	assert_int_equal(decode(buf, &sb, &out), 0);
	assert_int_equal(out.size, (1ull << 63) - 1);
}

static void test_reject_chunk_format(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];
	unsigned int bit;

	(void)state;
	for (bit = 7; bit < 16; bit++) {
		compact_base(buf);
		put_le16(buf, fmt_iformat(false, EROFS_LAYOUT_CHUNK_BASED));
		put_le32(buf + 16, 1u << bit);
		expect_reject(buf, &sb, -EOPNOTSUPP);
	}
	compact_base(buf);
	put_le16(buf, fmt_iformat(false, EROFS_LAYOUT_CHUNK_BASED));
	put_le32(buf + 16, 0x7F);
	assert_int_equal(decode(buf, &sb, &out), 0);
	/* the same value is fine for other layouts (it is a block address) */
	put_le16(buf, fmt_iformat(false, EROFS_LAYOUT_FLAT_PLAIN));
	put_le32(buf + 16, 0x80);
	assert_int_equal(decode(buf, &sb, &out), 0);
}

static void test_reject_nsec(void **state)
{
	struct fmt_super sb = test_sb(0, 0);
	struct fmt_inode out;
	uint8_t buf[64];

	(void)state;
	extended_base(buf);
	put_le32(buf + 40, 1000000000u);
	expect_reject(buf, &sb, -EUCLEAN);
	put_le32(buf + 40, 0xFFFFFFFFu);
	expect_reject(buf, &sb, -EUCLEAN);
	put_le32(buf + 40, 999999999u);
	assert_int_equal(decode(buf, &sb, &out), 0);
	/* compact inodes take fixed_nsec from the superblock */
	sb = test_sb(0, 1000000000u);
	compact_base(buf);
	expect_reject(buf, &sb, -EUCLEAN);
}

/* Random cores: accepted ones satisfy every load-time rule. */
static void test_random_cores(void **state)
{
	struct fmt_super sb = test_sb(1700000000, 5);
	uint32_t seed = 31337;
	unsigned int round, accepted = 0;

	(void)state;
	for (round = 0; round < 50000; round++) {
		uint8_t buf[64];
		struct fmt_inode out;
		fmt_why why;
		unsigned int i;
		int ret;

		for (i = 0; i < 64; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (uint8_t)(seed >> 16);
		}
		if (round % 2)
			buf[1] = 0;                 /* i_format bits 8..15 clear */
		if (round % 4 == 1)
			buf[0] &= 0x1F;
		ret = fmt_inode_decode(buf, &sb, &out, &why);
		if (ret) {
			assert_true(ret == -EUCLEAN || ret == -EOPNOTSUPP);
			continue;
		}
		accepted++;
		assert_int_equal(get_le16(buf) & ~0x1Fu, 0);
		assert_true(out.layout < 5);
		assert_int_equal(out.extended, get_le16(buf) & 1);
		assert_int_equal(out.core_size, out.extended ? 64 : 32);
		assert_int_equal(out.size >> 63, 0);
		assert_true(out.mtime_nsec < 1000000000u);
		assert_true(fmt_ftype_of_mode(out.mode) != EROFS_FT_UNKNOWN);
		if (out.layout == EROFS_LAYOUT_CHUNK_BASED)
			assert_int_equal(out.u & 0xFF80u, 0);
		assert_int_equal(out.xattr_size, fmt_xattr_isize(out.xattr_icount));
	}
	assert_true(accepted > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iformat_values),
		cmocka_unit_test(test_compact_encode_spec_bytes),
		cmocka_unit_test(test_compact_roundtrip),
		cmocka_unit_test(test_compact_mtime),
		cmocka_unit_test(test_compact_nlink1),
		cmocka_unit_test(test_compact_null_startblk),
		cmocka_unit_test(test_extended_spec_a12_decode),
		cmocka_unit_test(test_extended_spec_a12_encode),
		cmocka_unit_test(test_extended_roundtrip),
		cmocka_unit_test(test_extended_null_startblk),
		cmocka_unit_test(test_rdev),
		cmocka_unit_test(test_device_inode_decode),
		cmocka_unit_test(test_ftype_of_mode),
		cmocka_unit_test(test_reject_iformat_bits),
		cmocka_unit_test(test_reject_layouts),
		cmocka_unit_test(test_reject_mode_type),
		cmocka_unit_test(test_reject_negative_size),
		cmocka_unit_test(test_reject_chunk_format),
		cmocka_unit_test(test_reject_nsec),
		cmocka_unit_test(test_random_cores),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
