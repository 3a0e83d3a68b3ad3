/* erofskit: one binary, one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dropin.h"
#include "erofskit/erofskit.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "mkfs", cmd_mkfs, "build an image from a directory, a tar or an OCI layout" },
	{ "fsck", cmd_fsck, "check an image, optionally extract it" },
	{ "dump", cmd_dump, "show the superblock, an inode, a directory or a file" },
	{ "mount", cmd_mount, "mount an image with FUSE" },
	{ "push", cmd_push, "upload an image to an OCI registry" },
};

/* Invoked through a symlink by one of erofs-utils' names, erofskit takes
 * that tool's command line (dropin.c). */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} dropin_names[] = {
	{ "mkfs.erofs", dropin_mkfs },
	{ "fsck.erofs", dropin_fsck },
	{ "dump.erofs", dropin_dump },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: erofskit COMMAND [options] ...\n\n"
		   "Build, check, inspect and read EROFS images.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-6s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'erofskit COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	const char *invoked = argc > 0 ? strrchr(argv[0], '/') : NULL;
	size_t i;

	invoked = invoked ? invoked + 1 : argc > 0 ? argv[0] : "";
	for (i = 0; i < sizeof(dropin_names) / sizeof(dropin_names[0]); i++)
		if (!strcmp(invoked, dropin_names[i].name))
			return dropin_names[i].run(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("erofskit %s\n", ek_version());
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "erofskit: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
