/*
 * SELinux labels from a file_contexts file (mkfs.erofs --file-contexts),
 * through libselinux's labeling API, loaded when first needed: each
 * inode's security.selinux is the context its path and type look up, and
 * none where no rule matches (the source's own label is not kept).
 */
#ifndef EK_WRITE_SELABEL_H
#define EK_WRITE_SELABEL_H

#include <stdint.h>

#include "erofskit/erofskit.h"

/* The xattr the labels are. */
#define SELINUX_XATTR "security.selinux"

struct selabels;

/* Read the rules of the file_contexts file at path: 0, -EIO when
 * libselinux does not load, or the error libselinux gives for the file,
 * err naming it. */
int selabels_open(const char *path, struct selabels **out, ek_error *err);
void selabels_close(struct selabels *s);
/*
 * The context of the file at path (absolute in the image, "/" the root)
 * with st_mode mode: a NUL-terminated string in *out, the caller's to
 * free(), or NULL when no rule matches.  0, or -errno with err naming the
 * path.
 */
int selabels_lookup(struct selabels *s, const char *path, uint32_t mode, char **out,
		    ek_error *err);

#endif
