/* Names for people and inspection tools: file types, layouts, extent
 * kinds, superblock features. */
#include <stdio.h>

#include "erofskit/erofskit.h"
#include "format/inode.h"
#include "format/ondisk.h"

/* The public file types are the on-disk directory entry types. */
#define SAME_TYPE(t) ((int)EK_FT_##t == (int)EROFS_FT_##t)
_Static_assert(SAME_TYPE(UNKNOWN) && SAME_TYPE(REG) && SAME_TYPE(DIR) && SAME_TYPE(CHR) &&
	       SAME_TYPE(BLK) && SAME_TYPE(FIFO) && SAME_TYPE(SOCK) && SAME_TYPE(LNK),
	       "ek_file_type differs from the on-disk types");

unsigned int ek_file_type_of_mode(uint32_t mode)
{
	return fmt_ftype_of_mode(mode);
}

uint32_t ek_file_type_mode(unsigned int type)
{
	return fmt_mode_of_ftype(type);
}

const char *ek_file_type_name(unsigned int type)
{
	return fmt_ftype_name(type);
}

const char *ek_layout_name(unsigned int layout)
{
	return fmt_layout_name(layout);
}

const char *ek_extent_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		[EK_EXTENT_HOLE] = "hole",
		[EK_EXTENT_PLAIN] = "plain",
		[EK_EXTENT_COMPRESSED] = "compressed",
		[EK_EXTENT_FRAGMENT] = "fragment",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

static const struct {
	uint32_t bit;
	const char *name;
} compat_names[] = {
	{ EROFS_COMPAT_SB_CHKSUM, "sb_csum" },
	{ EROFS_COMPAT_MTIME, "mtime" },
	{ EROFS_COMPAT_XATTR_FILTER, "xattr_filter" },
	{ EROFS_COMPAT_SHARED_EA_IN_METABOX, "shared_ea_in_metabox" },
	{ EROFS_COMPAT_PLAIN_XATTR_PFX, "plain_xattr_pfx" },
	{ EROFS_COMPAT_ISHARE_XATTRS, "ishare_xattrs" },
}, incompat_names[] = {
	{ EROFS_INCOMPAT_ZERO_PADDING, "0padding" },
	{ EROFS_INCOMPAT_COMPR_CFGS, "compr_cfgs/big_pcluster" },
	{ EROFS_INCOMPAT_CHUNKED_FILE, "chunked_file" },
	{ EROFS_INCOMPAT_DEVICE_TABLE, "device_table" },
	{ EROFS_INCOMPAT_ZTAILPACKING, "ztailpacking" },
	{ EROFS_INCOMPAT_FRAGMENTS, "fragments/dedupe" },
	{ EROFS_INCOMPAT_XATTR_PREFIXES, "xattr_prefixes" },
	{ EROFS_INCOMPAT_48BIT, "48bit" },
	{ EROFS_INCOMPAT_METABOX, "metabox" },
};

void ek_feature_names(const ek_super_info *sb, char *buf, size_t size)
{
	size_t used = 0, i;

	if (size)
		buf[0] = '\0';
	for (i = 0; i < sizeof(compat_names) / sizeof(compat_names[0]); i++)
		if ((sb->feature_compat & compat_names[i].bit) && used < size)
			used += (size_t)snprintf(buf + used, size - used, "%s%s",
						 used ? "," : "", compat_names[i].name);
	for (i = 0; i < sizeof(incompat_names) / sizeof(incompat_names[0]); i++)
		if ((sb->feature_incompat & incompat_names[i].bit) && used < size)
			used += (size_t)snprintf(buf + used, size - used, "%s%s",
						 used ? "," : "", incompat_names[i].name);
}
