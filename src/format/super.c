/* Superblock (spec section 2) and its checksum (section 10.1). */
#include <errno.h>
#include <isa-l/crc.h>
#include <string.h>

#include "format/super.h"

uint32_t fmt_crc32c(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	/* ISA-L takes an int length: feed it in bounded pieces. */
	while (len > 0) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;

		crc = crc32_iscsi((unsigned char *)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}

size_t fmt_super_checksum_span(uint32_t blksz)
{
	return blksz > EROFS_SUPER_OFFSET ? blksz - EROFS_SUPER_OFFSET : blksz;
}

uint32_t fmt_super_checksum(const uint8_t *block, size_t len)
{
	static const uint8_t zero[4];
	uint32_t crc = fmt_crc32c(0xFFFFFFFFu, block, 4);

	crc = fmt_crc32c(crc, zero, 4);
	return fmt_crc32c(crc, block + 8, len - 8);
}

int fmt_super_decode(const uint8_t *img, size_t len, struct fmt_super *sb,
		     fmt_why *why)
{
	const uint8_t *p;

	memset(sb, 0, sizeof(*sb));
	if (len < EROFS_SUPER_OFFSET + EROFS_SUPER_BASE_SIZE) {
		fmt_why_set(why, "image is %zu bytes, too small to hold a superblock", len);
		return -EUCLEAN;
	}
	p = img + EROFS_SUPER_OFFSET;
	sb->magic = get_le32(p + 0);
	if (sb->magic != EROFS_SUPER_MAGIC) {
		fmt_why_set(why, "bad superblock magic 0x%08x (expected 0x%08x)",
			    sb->magic, EROFS_SUPER_MAGIC);
		return -EUCLEAN;
	}
	sb->checksum = get_le32(p + 4);
	sb->feature_compat = get_le32(p + 8);
	sb->blkszbits = p[12];
	sb->sb_extslots = p[13];
	sb->root_nid_16 = get_le16(p + 14);
	sb->inos = get_le64(p + 16);
	sb->epoch = (int64_t)get_le64(p + 24);
	sb->fixed_nsec = get_le32(p + 32);
	sb->blocks_lo = get_le32(p + 36);
	sb->meta_blkaddr = get_le32(p + 40);
	sb->xattr_blkaddr = get_le32(p + 44);
	memcpy(sb->uuid, p + 48, 16);
	memcpy(sb->volume_name, p + 64, 16);
	sb->feature_incompat = get_le32(p + 80);
	sb->u1 = get_le16(p + 84);
	sb->extra_devices = get_le16(p + 86);
	sb->devt_slotoff = get_le16(p + 88);
	sb->dirblkbits = p[90];
	sb->xattr_prefix_count = p[91];
	sb->xattr_prefix_start = get_le32(p + 92);
	sb->packed_nid = get_le64(p + 96);
	sb->xattr_filter_reserved = p[104];
	sb->ishare_xattr_prefix_id = p[105];
	sb->build_time = get_le32(p + 108);
	sb->rootnid_8b = get_le64(p + 112);

	if (sb->blkszbits < EROFS_MIN_BLKSZBITS ||
	    sb->blkszbits > EROFS_MAX_BLKSZBITS) {
		fmt_why_set(why, "block size 2^%u is not supported (must be 512..4096)",
			    sb->blkszbits);
		return -EOPNOTSUPP;
	}
	sb->blksz = 1u << sb->blkszbits;
	if (sb->dirblkbits != 0) {
		fmt_why_set(why, "dirblkbits %u is not supported (must be 0)",
			    sb->dirblkbits);
		return -EOPNOTSUPP;
	}
	sb->sb_size = EROFS_SUPER_BASE_SIZE +
		      EROFS_SUPER_EXTSLOT_SIZE * sb->sb_extslots;
	/* The kernel reads the superblock from one page. */
	if (sb->sb_size > 4096u - EROFS_SUPER_OFFSET) {
		fmt_why_set(why, "sb_extslots %u makes a %u-byte superblock, too large",
			    sb->sb_extslots, sb->sb_size);
		return -EUCLEAN;
	}
	if (sb->feature_compat & EROFS_COMPAT_SB_CHKSUM) {
		size_t span = fmt_super_checksum_span(sb->blksz);
		uint32_t crc;

		if (len < EROFS_SUPER_OFFSET + span) {
			fmt_why_set(why, "image too short for the superblock checksum span");
			return -EUCLEAN;
		}
		crc = fmt_super_checksum(p, span);
		if (crc != sb->checksum) {
			fmt_why_set(why, "superblock checksum mismatch: stored 0x%08x, computed 0x%08x",
				    sb->checksum, crc);
			return -EUCLEAN;
		}
	}
	if (sb->feature_incompat & ~EROFS_INCOMPAT_SUPPORTED) {
		fmt_why_set(why, "unknown incompatible features 0x%x",
			    sb->feature_incompat & ~EROFS_INCOMPAT_SUPPORTED);
		return -EOPNOTSUPP;
	}
	if (len < EROFS_SUPER_OFFSET + sb->sb_size) {
		fmt_why_set(why, "image too short for a %u-byte superblock", sb->sb_size);
		return -EUCLEAN;
	}
	if (sb->sb_size > EROFS_SUPER_BASE_SIZE)
		sb->metabox_nid = get_le64(p + 128);
	if (sb->feature_incompat & EROFS_INCOMPAT_METABOX) {
		if (sb->sb_size <= EROFS_SUPER_BASE_SIZE ||
		    (sb->metabox_nid >> 63)) {
			fmt_why_set(why, "metabox feature without a valid metabox nid");
			return -EUCLEAN;
		}
	}
	if (sb->packed_nid >> 63) {
		fmt_why_set(why, "packed_nid 0x%llx has bit 63 set",
			    (unsigned long long)sb->packed_nid);
		return -EUCLEAN;
	}
	sb->blocks = sb->blocks_lo;
	sb->root_nid = sb->root_nid_16;
	if ((sb->feature_incompat & EROFS_INCOMPAT_48BIT) && sb->rootnid_8b) {
		sb->root_nid = sb->rootnid_8b;
		sb->blocks |= (uint64_t)sb->root_nid_16 << 32;
	}
	return 0;
}

void fmt_super_encode(const struct fmt_super *sb, uint8_t *out)
{
	unsigned int size = EROFS_SUPER_BASE_SIZE +
			    EROFS_SUPER_EXTSLOT_SIZE * sb->sb_extslots;

	memset(out, 0, size);
	put_le32(out + 0, EROFS_SUPER_MAGIC);
	put_le32(out + 4, sb->checksum);
	put_le32(out + 8, sb->feature_compat);
	out[12] = sb->blkszbits;
	out[13] = sb->sb_extslots;
	put_le16(out + 14, sb->root_nid_16);
	put_le64(out + 16, sb->inos);
	put_le64(out + 24, (uint64_t)sb->epoch);
	put_le32(out + 32, sb->fixed_nsec);
	put_le32(out + 36, sb->blocks_lo);
	put_le32(out + 40, sb->meta_blkaddr);
	put_le32(out + 44, sb->xattr_blkaddr);
	memcpy(out + 48, sb->uuid, 16);
	memcpy(out + 64, sb->volume_name, 16);
	put_le32(out + 80, sb->feature_incompat);
	put_le16(out + 84, sb->u1);
	put_le16(out + 86, sb->extra_devices);
	put_le16(out + 88, sb->devt_slotoff);
	out[90] = sb->dirblkbits;
	out[91] = sb->xattr_prefix_count;
	put_le32(out + 92, sb->xattr_prefix_start);
	put_le64(out + 96, sb->packed_nid);
	out[104] = sb->xattr_filter_reserved;
	out[105] = sb->ishare_xattr_prefix_id;
	put_le32(out + 108, sb->build_time);
	put_le64(out + 112, sb->rootnid_8b);
	if (size > EROFS_SUPER_BASE_SIZE)
		put_le64(out + 128, sb->metabox_nid);
}
