/* Inode cores: decode with the kernel's load-time checks, and encode. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "format/inode.h"

uint32_t fmt_encode_rdev(uint32_t major, uint32_t minor)
{
	return (minor & 0xFFu) | (major << 8) | ((minor & ~0xFFu) << 12);
}

void fmt_decode_rdev(uint32_t v, uint32_t *major, uint32_t *minor)
{
	*major = (v & 0xFFF00u) >> 8;
	*minor = (v & 0xFFu) | ((v >> 12) & 0xFFF00u);
}

/* Directory entry types: the mode's type bits, and a name for people. */
static const struct {
	uint32_t mode;
	const char *name;
} ftypes[EROFS_FT_MAX] = {
	[EROFS_FT_UNKNOWN] = { 0, "unknown" },
	[EROFS_FT_REG] = { S_IFREG, "regular" },
	[EROFS_FT_DIR] = { S_IFDIR, "directory" },
	[EROFS_FT_CHR] = { S_IFCHR, "chardev" },
	[EROFS_FT_BLK] = { S_IFBLK, "blockdev" },
	[EROFS_FT_FIFO] = { S_IFIFO, "fifo" },
	[EROFS_FT_SOCK] = { S_IFSOCK, "socket" },
	[EROFS_FT_LNK] = { S_IFLNK, "symlink" },
};

uint8_t fmt_ftype_of_mode(uint32_t mode)
{
	uint8_t t;

	for (t = EROFS_FT_REG; t < EROFS_FT_MAX; t++)
		if (ftypes[t].mode == (mode & S_IFMT))
			return t;
	return EROFS_FT_UNKNOWN;
}

uint32_t fmt_mode_of_ftype(unsigned int ftype)
{
	return ftype < EROFS_FT_MAX ? ftypes[ftype].mode : 0;
}

const char *fmt_ftype_name(unsigned int ftype)
{
	return ftypes[ftype < EROFS_FT_MAX ? ftype : EROFS_FT_UNKNOWN].name;
}

const char *fmt_layout_name(unsigned int layout)
{
	static const char *const names[EROFS_LAYOUT_MAX] = {
		[EROFS_LAYOUT_FLAT_PLAIN] = "flat plain",
		[EROFS_LAYOUT_COMPRESSED_FULL] = "compressed full",
		[EROFS_LAYOUT_FLAT_INLINE] = "flat inline",
		[EROFS_LAYOUT_COMPRESSED_COMPACT] = "compressed compact",
		[EROFS_LAYOUT_CHUNK_BASED] = "chunk based",
	};

	return layout < EROFS_LAYOUT_MAX && names[layout] ? names[layout] : "unknown";
}

static bool layout_is_flat(unsigned int layout)
{
	return layout == EROFS_LAYOUT_FLAT_PLAIN ||
	       layout == EROFS_LAYOUT_FLAT_INLINE;
}

int fmt_inode_decode(const uint8_t *buf, const struct fmt_super *sb,
		     struct fmt_inode *in, fmt_why *why)
{
	uint16_t i_format = get_le16(buf);
	bool high_addr;

	memset(in, 0, sizeof(*in));
	if (i_format & ~EROFS_IFORMAT_KNOWN_BITS) {
		fmt_why_set(why, "unsupported i_format 0x%04x", i_format);
		return -EOPNOTSUPP;
	}
	in->extended = i_format & EROFS_IFORMAT_EXTENDED;
	in->layout = (i_format >> EROFS_IFORMAT_LAYOUT_SHIFT) &
		     EROFS_IFORMAT_LAYOUT_MASK;
	in->format_bit4 = i_format & EROFS_IFORMAT_BIT4;
	if (in->layout >= EROFS_LAYOUT_MAX) {
		fmt_why_set(why, "unsupported data layout %u", in->layout);
		return -EOPNOTSUPP;
	}
	in->core_size = fmt_inode_core_size(i_format);
	in->xattr_icount = get_le16(buf + 2);
	in->xattr_size = fmt_xattr_isize(in->xattr_icount);
	in->mode = get_le16(buf + 4);
	in->nb = get_le16(buf + 6);
	if (in->extended) {
		in->size = get_le64(buf + 8);
		in->u = get_le32(buf + 16);
		in->ino = get_le32(buf + 20);
		in->uid = get_le32(buf + 24);
		in->gid = get_le32(buf + 28);
		in->mtime = (int64_t)get_le64(buf + 32);
		in->mtime_nsec = get_le32(buf + 40);
		in->nlink = get_le32(buf + 44);
		high_addr = true;
	} else {
		in->size = get_le32(buf + 8);
		in->mtime = sb->epoch + (int64_t)get_le32(buf + 12);
		in->mtime_nsec = sb->fixed_nsec;
		in->u = get_le32(buf + 16);
		in->ino = get_le32(buf + 20);
		in->uid = get_le16(buf + 24);
		in->gid = get_le16(buf + 26);
		/* On a compact non-directory, bit 4 is NLINK_1: i_nb then holds
		 * the high address bits instead of the link count. */
		high_addr = in->format_bit4 && !S_ISDIR(in->mode);
		in->nlink = high_addr ? 1 : in->nb;
	}
	if (in->mtime_nsec >= 1000000000u) {
		fmt_why_set(why, "mtime nanoseconds %u out of range", in->mtime_nsec);
		return -EUCLEAN;
	}
	if (in->size >> 63) {
		fmt_why_set(why, "negative i_size 0x%llx",
			    (unsigned long long)in->size);
		return -EUCLEAN;
	}
	switch (in->mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFLNK:
		break;
	case S_IFCHR:
	case S_IFBLK:
		fmt_decode_rdev(in->u, &in->rdev_major, &in->rdev_minor);
		break;
	case S_IFIFO:
	case S_IFSOCK:
		break;
	default:
		fmt_why_set(why, "invalid file type in mode 0%o", in->mode);
		return -EUCLEAN;
	}
	if (layout_is_flat(in->layout)) {
		in->startblk = in->u;
		if (high_addr)
			in->startblk |= (uint64_t)in->nb << 32;
		/* An all-ones start block of a plain file means "no data"
		 * (48-bit era); 48 bits for cores that carry high bits. */
		if (in->layout == EROFS_LAYOUT_FLAT_PLAIN)
			in->startblk_null = high_addr ?
				in->startblk == 0xFFFFFFFFFFFFull :
				in->startblk == EROFS_NULL_ADDR;
	}
	if (in->layout == EROFS_LAYOUT_CHUNK_BASED &&
	    ((in->u & 0xFFFFu) & ~EROFS_CHUNK_KNOWN_BITS)) {
		fmt_why_set(why, "unsupported chunk format 0x%04x", in->u & 0xFFFFu);
		return -EOPNOTSUPP;
	}
	return 0;
}

void fmt_inode_encode(const struct fmt_inode *in, int64_t epoch, uint8_t *out)
{
	uint16_t i_format = fmt_iformat(in->extended, in->layout);

	if (in->format_bit4)
		i_format |= EROFS_IFORMAT_BIT4;
	if (in->extended) {
		memset(out, 0, EROFS_INODE_EXTENDED_SIZE);
		put_le16(out + 0, i_format);
		put_le16(out + 2, in->xattr_icount);
		put_le16(out + 4, in->mode);
		put_le16(out + 6, in->nb);
		put_le64(out + 8, in->size);
		put_le32(out + 16, in->u);
		put_le32(out + 20, in->ino);
		put_le32(out + 24, in->uid);
		put_le32(out + 28, in->gid);
		put_le64(out + 32, (uint64_t)in->mtime);
		put_le32(out + 40, in->mtime_nsec);
		put_le32(out + 44, in->nlink);
	} else {
		memset(out, 0, EROFS_INODE_COMPACT_SIZE);
		put_le16(out + 0, i_format);
		put_le16(out + 2, in->xattr_icount);
		put_le16(out + 4, in->mode);
		put_le16(out + 6, in->format_bit4 && !S_ISDIR(in->mode) ?
				  in->nb : (uint16_t)in->nlink);
		put_le32(out + 8, (uint32_t)in->size);
		/* Seconds after the epoch (6.15+).  0 unless the image is
		 * 48-bit: its other compact cores have mtime == epoch, which
		 * reads the same on older kernels, which ignore the field. */
		put_le32(out + 12, (uint32_t)(in->mtime - epoch));
		put_le32(out + 16, in->u);
		put_le32(out + 20, in->ino);
		put_le16(out + 24, (uint16_t)in->uid);
		put_le16(out + 26, (uint16_t)in->gid);
	}
}
