/* erofskit push: upload an image to an OCI registry as an artifact. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const CMD = "push";

static void usage(FILE *f)
{
	fprintf(f,
"usage: erofskit push [options] IMAGE oci://REGISTRY/REPO:TAG\n"
"\n"
"Upload IMAGE to an OCI registry as an artifact: a manifest of artifact\n"
"type application/vnd.erofs whose one layer is the image, tagged TAG.\n"
"Prints the reference by digest, which erofskit mount, fsck and dump take\n"
"(they read the image where it is, by Range requests).\n"
"\n"
"options:\n"
"  -o OPT,...     options of the registry:\n"
CLI_REMOTE_HTTP_ITEMS
"  -h, --help     this text\n"
"\n"
"examples:\n"
"  erofskit push root.erofs oci://registry.example.com/images/root:v1\n"
"  erofskit mount oci://registry.example.com/images/root:v1 /mnt\n");
}

int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	ek_open_options oo;
	char digest[80];
	const char *at, *repo;
	ek_error err;
	int c, ret;

	ek_open_options_init(&oo);
	optind = 1;
	while ((c = cli_getopt(CMD, argc, argv, "ho:", longopts)) != -1) {
		switch (c) {
		case 'o':
			if (cli_remote_options(CMD, CLI_REMOTE_PUSH, optarg, &oo))
				return EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			cli_usage_error(CMD, usage);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		cli_error(CMD, "expected IMAGE and oci://REGISTRY/REPO:TAG");
		cli_usage_error(CMD, usage);
		return EXIT_USAGE;
	}
	ret = ek_push(argv[optind], argv[optind + 1], &oo.http, digest, sizeof(digest), &err);
	if (ret) {
		cli_error(CMD, "%s", err.message);
		return EXIT_USAGE;
	}
	/* The same reference, by digest instead of tag (the tag follows the
	 * repository's last '/'; a port's ':' comes before it; without one
	 * the tag was "latest"). */
	repo = strrchr(argv[optind + 1], '/');
	at = strchr(repo ? repo : argv[optind + 1], ':');
	printf("%.*s@%s\n", at ? (int)(at - argv[optind + 1]) : (int)strlen(argv[optind + 1]),
	       argv[optind + 1], digest);
	return EXIT_OK;
}
