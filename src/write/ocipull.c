/*
 * An image in an OCI registry as an image layout on disk, for oci.c to
 * read as it reads any layout.  The layout is a scratch directory: its
 * index.json names the manifest (or index) the reference names, and the
 * blobs come down as oci.c asks for them, so only the chosen platform's
 * manifest, its config and its layers are fetched.  Each is checked by
 * oci.c as it reads it (digest and size), as a local layout's blobs are.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fdio.h"
#include "write/ocipull.h"

#define LAYOUT_FILE "{\"imageLayoutVersion\":\"1.0.0\"}"
#define SCRATCH_PREFIX "erofskit-pull."
/* A scratch layout is swept only when its maker's lock is free and it
 * has not changed for this long: one just made is not yet locked. */
#define STALE_SECONDS 60

/* A small file of the scratch layout, whole. */
static int put_file(int dirfd, const char *name, const char *text, ek_error *err)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), ret;

	if (fd < 0)
		return err_fail(err, -errno, "the scratch layout's %s: %s", name, strerror(errno));
	ret = fd_pwrite_full(fd, text, strlen(text), 0);
	close(fd);
	return ret ? err_fail(err, ret, "the scratch layout's %s: %s", name, strerror(-ret)) : 0;
}

/* index.json: one entry, the reference's manifest, tagged as it is. */
static int put_index(int dirfd, const struct oci_pulled *top, const char *tag, ek_error *err)
{
	char digest[80];
	json_t *doc;
	char *text;
	int ret;

	snprintf(digest, sizeof(digest), "sha256:%s", top->hex);
	doc = json_pack("{s:i, s:[{s:s, s:s, s:I}]}", "schemaVersion", 2, "manifests",
			"mediaType", top->media_type, "digest", digest, "size",
			(json_int_t)top->size);
	if (doc && tag)
		json_object_set_new(json_array_get(json_object_get(doc, "manifests"), 0),
				    "annotations", json_pack("{s:s}", OCI_REF_NAME, tag));
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text)
		return err_fail(err, -ENOMEM, "out of memory");
	ret = put_file(dirfd, "index.json", text, err);
	free(text);
	return ret;
}

/* blobs/sha256/HEX.WHICH.part */
static void part_path(const char *hex, unsigned int which, char *out, size_t size)
{
	char path[128];

	oci_blob_path(hex, path, sizeof(path));
	snprintf(out, size, "%s.%u.part", path, which);
}

int ocipull_part_open(struct ocipull *p, const char *hex, unsigned int which, ek_error *err)
{
	char part[160];
	int fd;

	part_path(hex, which, part, sizeof(part));
	fd = openat(p->dirfd, part, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_fail(err, -errno, "the scratch layout's %s: %s", part, strerror(errno));
	return fd;
}

int ocipull_part_done(struct ocipull *p, const char *hex, unsigned int which, int ret,
		      ek_error *err)
{
	char path[128], part[160];

	oci_blob_path(hex, path, sizeof(path));
	part_path(hex, which, part, sizeof(part));
	if (!ret && renameat(p->dirfd, part, p->dirfd, path) < 0)
		ret = err_fail(err, -errno, "the scratch layout's %s: %s", path, strerror(errno));
	if (ret)
		unlinkat(p->dirfd, part, 0);
	return ret;
}

/* Fetch into blobs/sha256/HEX through a file of its own, renamed once
 * whole: a failed fetch leaves no blob for a later read to trust. */
static int fetch_into(struct ocipull *p, const char *hex, bool manifest, uint64_t size,
		      ek_error *err)
{
	int fd = ocipull_part_open(p, hex, 0, err), ret;

	if (fd < 0)
		return fd;
	ret = oci_pull_blob(p->session, hex, manifest, size, fd, NULL, err);
	close(fd);
	return ocipull_part_done(p, hex, 0, ret, err);
}

/* A scratch layout's files, then its directories; whatever else is
 * there (nothing this wrote) stays, and so does the directory. */
static void remove_layout(int dirfd)
{
	int fd = openat(dirfd, OCI_BLOBS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(fd, e->d_name, 0);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	unlinkat(dirfd, OCI_BLOBS, AT_REMOVEDIR);
	unlinkat(dirfd, "blobs", AT_REMOVEDIR);
	unlinkat(dirfd, "index.json", 0);
	unlinkat(dirfd, "oci-layout", 0);
}

/* The scratch layouts of pulls that died without removing theirs
 * (kill -9, a crash, a power cut), in base: each of this user's that no
 * live pull holds locked. */
static void sweep_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	struct stat st;
	int fd;

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX)))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
		    st.st_mtime + STALE_SECONDS < time(NULL) && flock(fd, LOCK_EX | LOCK_NB) == 0) {
			remove_layout(fd);
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
		close(fd);
	}
	if (d)
		closedir(d);
}

int ocipull_open(struct ocipull *p, const char *ref, const ek_http_options *http, ek_error *err)
{
	const char *tmp = getenv("TMPDIR"), *base = tmp && *tmp ? tmp : "/var/tmp";
	struct oci_pulled *top = &p->top;
	char part[140];
	int fd, ret;

	memset(p, 0, sizeof(*p));
	p->dirfd = -1;
	p->http = http;
	p->ref = strdup(ref);
	if (!p->ref)
		return err_fail(err, -ENOMEM, "out of memory");
	ret = oci_pull_begin(ref, http, &p->session, err);
	if (ret)
		return ret;
	sweep_stale(base);
	if (asprintf(&p->dir, "%s/" SCRATCH_PREFIX "XXXXXX", base) < 0) {
		p->dir = NULL;
		return err_fail(err, -ENOMEM, "out of memory");
	}
	if (!mkdtemp(p->dir)) {
		ret = err_fail(err, -errno, "%s: a scratch directory for the image's blobs: %s",
			       p->dir, strerror(errno));
		free(p->dir);
		p->dir = NULL;
		return ret;
	}
	/* Held until the layout is gone (or the process is): the sign a
	 * later pull's sweep goes by. */
	p->dirfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0 || flock(p->dirfd, LOCK_EX) < 0 || mkdirat(p->dirfd, "blobs", 0755) < 0 ||
	    mkdirat(p->dirfd, OCI_BLOBS, 0755) < 0)
		return err_fail(err, -errno, "%s: %s", p->dir, strerror(errno));
	ret = put_file(p->dirfd, "oci-layout", LAYOUT_FILE, err);
	if (ret)
		return ret;
	/* The top manifest's digest is known once it is here: it lands
	 * under a name of its own, then takes its digest's. */
	fd = openat(p->dirfd, OCI_BLOBS "/top.part", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_fail(err, -errno, "%s: %s", p->dir, strerror(errno));
	ret = oci_pull_top(p->session, fd, top, err);
	close(fd);
	if (ret)
		return ret;
	oci_blob_path(top->hex, part, sizeof(part));
	if (renameat(p->dirfd, OCI_BLOBS "/top.part", p->dirfd, part) < 0)
		ret = err_fail(err, -errno, "%s: %s", p->dir, strerror(errno));
	if (!ret)
		ret = put_index(p->dirfd, top, oci_pull_tag(p->session), err);
	return ret;
}

const char *ocipull_tag(const struct ocipull *p)
{
	return oci_pull_tag(p->session);
}

int ocipull_blob(struct ocipull *p, const char *hex, bool manifest, uint64_t size,
		 ek_error *err)
{
	char path[128];

	oci_blob_path(hex, path, sizeof(path));
	if (!faccessat(p->dirfd, path, F_OK, 0))
		return 0;
	return fetch_into(p, hex, manifest, size, err);
}

int ocipull_session(const struct ocipull *p, struct oci_pull **out, ek_error *err)
{
	return oci_pull_begin(p->ref, p->http, out, err);
}

void ocipull_drop_blob(struct ocipull *p, const char *hex)
{
	char path[128];

	oci_blob_path(hex, path, sizeof(path));
	unlinkat(p->dirfd, path, 0);
}

/* The scratch layout goes whole: the files this wrote, then its
 * directories. */
void ocipull_close(struct ocipull *p)
{
	if (p->dirfd >= 0) {
		remove_layout(p->dirfd);
		close(p->dirfd);
	}
	if (p->dir)
		rmdir(p->dir);
	free(p->dir);
	free(p->ref);
	oci_pull_end(p->session);
	memset(p, 0, sizeof(*p));
	p->dirfd = -1;
}
