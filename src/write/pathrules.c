/*
 * Attributes given by path: Android's fs_config (owner, permission bits,
 * file capabilities) and SELinux file contexts.  Android builds a
 * partition from a directory that holds its files (system/...), with
 * both rule files written for the paths the files take on the device:
 * --mount-point names the partition ("system"), and goes in front of
 * every path looked up.  See internal.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/ondisk.h"
#include "util/error.h"
#include "write/fsconfig.h"
#include "write/internal.h"
#include "write/selabel.h"

#define CAPABILITY_XATTR "security.capability"
/* Linux's struct vfs_cap_data, revision 2: the magic with the "effective"
 * flag (Android raises a file's capabilities as it runs), then the
 * permitted and inheritable sets of capabilities 0-31 and 32-63. */
#define VFS_CAP_REVISION_2 0x02000000u
#define VFS_CAP_FLAGS_EFFECTIVE 0x000001u
#define VFS_CAP_DATA_SIZE 20

bool path_rules_active(const struct build *b)
{
	return b->selabels || b->fsconfig;
}

bool path_rules_replace_xattr(const struct build *b, const char *name)
{
	return (b->selabels && !strcmp(name, SELINUX_XATTR)) ||
	       (b->fsconfig && !strcmp(name, CAPABILITY_XATTR));
}

int path_rules_open(struct build *b)
{
	const char *mp = b->o.mount_point;
	int ret = 0;

	if (mp) {
		size_t len;

		mp += strspn(mp, "/");
		len = strlen(mp);
		while (len && mp[len - 1] == '/')
			len--;
		b->mount_point = strndup(mp, len);
		if (!b->mount_point)
			return err_fail(b->err, -ENOMEM, "out of memory");
	}
	if (b->o.file_contexts && b->o.no_xattrs)
		return err_fail(b->err, -EINVAL, "file contexts set SELinux labels, which are "
				"xattrs: not without xattrs");
	if (b->o.file_contexts)
		ret = selabels_open(b->o.file_contexts, &b->selabels, b->err);
	if (!ret && b->o.fs_config)
		ret = fsconfig_open(b->o.fs_config, &b->fsconfig, b->err);
	return ret;
}

void path_rules_close(struct build *b)
{
	selabels_close(b->selabels);
	b->selabels = NULL;
	fsconfig_close(b->fsconfig);
	b->fsconfig = NULL;
	free(b->mount_point);
	b->mount_point = NULL;
}

/* The path the rules look up: under the mount point ("/system/bin/sh";
 * the root "/system") into *owned, or path itself (*owned NULL). */
static const char *rule_path(const struct build *b, const char *path, char **owned)
{
	const char *mp = b->mount_point && *b->mount_point ? b->mount_point : NULL;

	*owned = NULL;
	if (!mp)
		return path;
	if (asprintf(owned, "/%s%s", mp, strcmp(path, "/") ? path : "") < 0)
		*owned = NULL;
	return *owned;
}

static int apply_capabilities(struct build *b, struct tnode *n, uint64_t caps,
			      const char *path)
{
	uint8_t v[VFS_CAP_DATA_SIZE] = { 0 };

	if (!caps)
		return 0;
	if (b->o.no_xattrs)
		return err_fail(b->err, -EINVAL, "%s: %s gives it capabilities, which are an "
				"xattr: not without xattrs", path, fsconfig_path(b->fsconfig));
	put_le32(v, VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE);
	put_le32(v + 4, (uint32_t)caps);        /* permitted, 0-31 */
	put_le32(v + 12, (uint32_t)(caps >> 32)); /* permitted, 32-63 */
	return xattr_attach(b, n, CAPABILITY_XATTR, v, sizeof(v), path);
}

/* fs_config's key is the rule path without its '/' ("system/bin/sh"),
 * and "" for the root whatever the mount point. */
static int apply_fs_config(struct build *b, struct tnode *n, const char *path,
			   const char *rule)
{
	const char *key = strcmp(path, "/") ? rule + 1 : "";
	const struct fsconfig_entry *e = fsconfig_lookup(b->fsconfig, key);

	if (!e)
		return err_fail(b->err, -ENOENT, "%s: no entry in %s (looked up as '%s')", path,
				fsconfig_path(b->fsconfig), key);
	if (build_set_owner(b, n, e->uid, e->gid))
		return err_fail(b->err, -EOVERFLOW,
				"%s: owner %u:%u with the id offsets is over 4294967295", path,
				e->uid, e->gid);
	n->mode = (n->mode & S_IFMT) | e->mode;
	return apply_capabilities(b, n, e->capabilities, path);
}

static int apply_label(struct build *b, struct tnode *n, const char *path, const char *rule)
{
	char *context = NULL;
	int ret = selabels_lookup(b->selabels, rule, n->mode, &context, b->err);

	if (!ret && context)
		ret = xattr_attach(b, n, SELINUX_XATTR, context, strlen(context), path);
	free(context);
	return ret;
}

int path_rules_apply(struct build *b, struct tnode *n, const char *path)
{
	char *owned;
	const char *rule;
	int ret = 0;

	if (!path_rules_active(b))
		return 0;
	rule = rule_path(b, path, &owned);
	if (!rule)
		return err_fail(b->err, -ENOMEM, "out of memory");
	if (b->fsconfig)
		ret = apply_fs_config(b, n, path, rule);
	if (!ret && b->selabels)
		ret = apply_label(b, n, path, rule);
	if (!ret)
		xattr_sort(n);
	free(owned);
	return ret;
}
