/* Directory entry lists in on-disk order. */
#include <errno.h>
#include <stdlib.h>

#include "write/internal.h"
#include "write/dirent.h"
#include "format/inode.h"
#include "util/error.h"

int dir_entries(struct build *b, const struct tnode *dir,
		struct fmt_dirent_in **out, size_t *count)
{
	struct fmt_dirent_in dots[2] = {
		{ (const uint8_t *)".", 1, tnode_nid_ref(dir), EROFS_FT_DIR },
		{ (const uint8_t *)"..", 2, tnode_nid_ref(dir->parent), EROFS_FT_DIR },
	};
	struct fmt_dirent_in *ents;
	/* -Edot-omitted: ".." alone (the kernel makes "." up). */
	size_t n = 0, d = b->o.dot_omitted ? 1 : 0;
	uint32_t i = 0;

	ents = malloc((dir->nchildren + 2) * sizeof(*ents));
	if (!ents)
		return err_fail(b->err, -ENOMEM, "out of memory");
	/* Merge the two dot entries into the sorted children: names that
	 * start with a byte below '.' sort before them. */
	while (i < dir->nchildren || d < 2) {
		const struct tdentry *c = i < dir->nchildren ? &dir->children[i] : NULL;

		if (d < 2 && (!c || fmt_name_cmp(dots[d].name, dots[d].name_len,
						 (const uint8_t *)c->name,
						 c->name_len) < 0)) {
			ents[n++] = dots[d++];
			continue;
		}
		ents[n].name = (const uint8_t *)c->name;
		ents[n].name_len = c->name_len;
		ents[n].nid = tnode_nid_ref(c->inode);
		ents[n].type = fmt_ftype_of_mode(c->inode->mode);
		n++;
		i++;
	}
	*out = ents;
	*count = n;
	return 0;
}
