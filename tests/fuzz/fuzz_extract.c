/*
 * Fuzz target: extraction (fsck --extract), with one and with two
 * workers, over bytes taken as an image.  Besides crashes, it fails when
 * anything is written beside the target directory: the target sits three
 * levels deep in a directory of its own, and every level must hold only
 * the next one afterwards; and when neither run met a write error,
 * one worker and two must report the same problems.
 *
 * Everything happens on a small tmpfs in a mount namespace of the fuzzer's
 * own (root only), so that an image claiming gigabytes meets a full disk
 * instead of filling the machine, and the tmpfs goes with the process.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clean.h"
#include "transcript.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SCRATCH_SIZE "size=64m,nr_inodes=20000"

static char scratch[4096];
static char level1[4200], level2[4200], target[4200];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_extract: %s: %s\n", what, strerror(errno));
	exit(2);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* The mountpoint sits beside the fuzzer, in its build directory: an
	 * empty directory, all that outlives a run (libFuzzer may end one
	 * without exit handlers). */
	const char *slash = strrchr((*argv)[0], '/');

	(void)argc;
	snprintf(scratch, sizeof(scratch), "%.*s/extract-scratch",
		 slash ? (int)(slash - (*argv)[0]) : 1, slash ? (*argv)[0] : ".");
	if (mkdir(scratch, 0700) < 0 && errno != EEXIST)
		die(scratch);
	if (unshare(CLONE_NEWNS) < 0)
		die("unshare(CLONE_NEWNS) (needs root)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("making mounts private");
	if (mount("ek-fuzz", scratch, "tmpfs", 0, SCRATCH_SIZE) < 0)
		die("mounting the scratch tmpfs");
	snprintf(level1, sizeof(level1), "%s/a", scratch);
	snprintf(level2, sizeof(level2), "%s/a/b", scratch);
	snprintf(target, sizeof(target), "%s/a/b/out", scratch);
	if (mkdir(level1, 0755) < 0 || mkdir(level2, 0755) < 0)
		die("mkdir");
	return 0;
}

/* dir must hold nothing but an entry named only (if even that). */
static void expect_only(const char *dir, const char *only)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		die(dir);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (strcmp(e->d_name, only)) {
			fprintf(stderr, "fuzz_extract: wrote %s/%s, outside the target\n",
				dir, e->d_name);
			abort();
		}
	}
	closedir(d);
}

/* After each run: nothing beside the target, and the target gone. */
static void check_and_clean(void)
{
	expect_only(scratch, "a");
	expect_only(level1, "b");
	expect_only(level2, "out");
	/* Extracted modes may forbid writing or searching: as root that
	 * does not stop the removal. */
	if (fuzz_rm_tree(target) < 0 && errno != ENOENT)
		die(target);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	transcript_one_and_two(data, size, target, check_and_clean);
	return 0;
}
