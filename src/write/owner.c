/*
 * What the options make of an inode's owner and mtime from its source
 * (--all-root, --force-uid/gid, the id offsets, -T, SOURCE_DATE_EPOCH's
 * clamp); see internal.h.
 */
#include <errno.h>
#include <stdint.h>

#include "write/internal.h"

int build_set_owner(struct build *b, struct tnode *n, uint32_t uid, uint32_t gid)
{
	const ek_build_options *o = &b->o;
	uint64_t shifted_uid, shifted_gid;

	n->uid = o->all_root ? 0 : uid;
	n->gid = o->all_root ? 0 : gid;
	if (o->force_uid >= 0)
		n->uid = (uint32_t)o->force_uid;
	if (o->force_gid >= 0)
		n->gid = (uint32_t)o->force_gid;
	/* Both offsets are checked to be 0..UINT32_MAX: no sum overflows. */
	shifted_uid = n->uid + (uint64_t)o->uid_offset;
	shifted_gid = n->gid + (uint64_t)o->gid_offset;
	if (shifted_uid > UINT32_MAX || shifted_gid > UINT32_MAX)
		return -EOVERFLOW;
	n->uid = (uint32_t)shifted_uid;
	n->gid = (uint32_t)shifted_gid;
	return 0;
}

int build_set_owner_time(struct build *b, struct tnode *n, uint32_t uid, uint32_t gid,
			 int64_t mtime, uint32_t mtime_nsec)
{
	const ek_build_options *o = &b->o;

	if (build_set_owner(b, n, uid, gid))
		return -EOVERFLOW;
	n->mtime = mtime;
	n->mtime_nsec = mtime_nsec;
	if (o->timestamp_set && !o->timestamp_build_only) {
		n->mtime = o->timestamp;
		n->mtime_nsec = 0;
	} else if (o->clamp_mtime && n->mtime >= o->timestamp) {
		n->mtime = o->timestamp;
		n->mtime_nsec = 0;
	}
	return 0;
}
