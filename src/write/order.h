/* The order in which whole files go into the packed inode. */
#ifndef EK_WRITE_ORDER_H
#define EK_WRITE_ORDER_H

#include <stddef.h>

struct tnode;

/*
 * Reorder files (given in the tree's order) so that files alike lie side
 * by side, where one compressed cluster holds them together: the files
 * of a name that many files share (each package's copyright, every
 * directory's Makefile or __init__.py), grouped by name, come first; the
 * rest keep the tree's order, which keeps a directory's files together.
 * The same on every run.  0 or -ENOMEM.
 */
int order_by_likeness(struct tnode **files, size_t count);

#endif
