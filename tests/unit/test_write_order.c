/*
 * The order in which mkfs puts whole small files into the packed inode
 * (write/order.c): the files of a name shared by many are gathered, by
 * name, ahead of the rest, which keep the tree's order; nothing is lost
 * or repeated; the same input gives the same order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "write/order.h"
#include "write/tree.h"

#define FILES 40

static struct tnode nodes[FILES];
static char paths[FILES][64];

/* Tree order: dir0/a.c dir0/copyright dir0/Makefile dir1/a.c ... : ten
 * copyrights, seven Makefiles (too few to gather), unique names. */
static void make_tree(struct tnode **files)
{
	static const char *names[4] = { "a.c", "copyright", "Makefile", "unique" };
	int i;

	for (i = 0; i < FILES; i++) {
		int dir = i / 4, kind = i % 4;

		if (kind == 2 && dir >= 7)
			snprintf(paths[i], sizeof(paths[i]), "src/dir%d/GNUmakefile", dir);
		else if (kind == 3)
			snprintf(paths[i], sizeof(paths[i]), "src/dir%d/unique%d.h", dir, dir);
		else
			snprintf(paths[i], sizeof(paths[i]), "src/dir%d/%s", dir, names[kind]);
		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].src_path = paths[i];
		files[i] = &nodes[i];
	}
}

static void gathers_shared_names_first(void **state)
{
	struct tnode *files[FILES], *again[FILES];
	size_t i, at = 0;
	(void)state;

	make_tree(files);
	assert_int_equal(order_by_likeness(files, FILES), 0);
	/* a.c and copyright: ten each, gathered in name order ("a.c" <
	 * "copyright"), each group in the tree's order. */
	for (i = 0; i < 10; i++)
		assert_ptr_equal(files[at++], &nodes[i * 4]);
	for (i = 0; i < 10; i++)
		assert_ptr_equal(files[at++], &nodes[i * 4 + 1]);
	/* The rest as the tree had them. */
	for (i = 0; i < FILES; i++)
		if (i % 4 >= 2)
			assert_ptr_equal(files[at++], &nodes[i]);
	assert_int_equal(at, FILES);

	make_tree(again);
	assert_int_equal(order_by_likeness(again, FILES), 0);
	assert_memory_equal(files, again, sizeof(files));
}

static void seven_namesakes_stay_in_place(void **state)
{
	struct tnode *files[FILES], *before[FILES];
	size_t i;
	(void)state;

	make_tree(files);
	/* Only the first 28 files: seven of each name, none gathered. */
	memcpy(before, files, sizeof(files));
	assert_int_equal(order_by_likeness(files, 28), 0);
	for (i = 0; i < 28; i++)
		assert_ptr_equal(files[i], before[i]);
	assert_int_equal(order_by_likeness(files, 0), 0);
	assert_int_equal(order_by_likeness(NULL, 0), 0);   /* no small file at all */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gathers_shared_names_first),
		cmocka_unit_test(seven_namesakes_stay_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
