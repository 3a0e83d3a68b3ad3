/* Drop-in names: erofskit invoked as mkfs.erofs, fsck.erofs or dump.erofs
 * (a symlink) takes erofs-utils' spellings of the options it implements,
 * translates them into its own and runs the subcommand; every other
 * option is refused by name (exit EXIT_USAGE). */
#ifndef EK_TOOLS_DROPIN_H
#define EK_TOOLS_DROPIN_H

int dropin_mkfs(int argc, char **argv);
int dropin_fsck(int argc, char **argv);
int dropin_dump(int argc, char **argv);

#endif
