/* erofskit: one binary, one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "erofskit/erofskit.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "mkfs", cmd_mkfs, "build an image from a directory" },
	{ "fsck", cmd_fsck, "check an image, optionally extract it" },
	{ "dump", cmd_dump, "show the superblock, an inode, a directory or a file" },
	{ "mount", cmd_mount, "mount an image with FUSE" },
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
	size_t i;

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
