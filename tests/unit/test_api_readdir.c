/*
 * ek_readdir(): the root's entries with their types and nids, a 700-entry
 * directory over several blocks stopped and resumed at every kind of
 * offset, and a non-directory refused.
 */
#include "lib_fixture.h"

/* ------------------------------------------------------------ readdir */

static int find_name(const struct collected *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], name))
			return (int)i;
	return -1;
}

static void test_readdir_root(void **state)
{
	static const struct {
		const char *name;
		unsigned int type;
	} expect[] = {
		{ ".", EK_FT_DIR }, { "..", EK_FT_DIR }, { "b4095", EK_FT_REG },
		{ "b4096", EK_FT_REG }, { "b4097", EK_FT_REG }, { "big", EK_FT_REG },
		{ "empty", EK_FT_REG }, { "fifo", EK_FT_FIFO }, { "hard", EK_FT_REG },
		{ "link", EK_FT_LNK }, { "one", EK_FT_REG }, { "sub", EK_FT_DIR },
		{ "fit4064", EK_FT_REG }, { "fit4065", EK_FT_REG },
		{ "sparse", EK_FT_REG }, { "link3000", EK_FT_LNK },
		{ "link4095", EK_FT_LNK }, { "-dash", EK_FT_REG },
		{ "\xC3\xA9t\xC3\xA9", EK_FT_REG },
	};
	struct collected *c = calloc(1, sizeof(*c));
	ek_inode *root = get_path("/");
	ek_error err = { 0, "" };
	unsigned int i;

	(void)state;
	assert_non_null(c);
	assert_int_equal(ek_readdir(root, 0, collect, c, &err), 0);
	assert_int_equal(c->n, 19 + (g.have_chr ? 1 : 0));
	assert_string_equal(c->names[0], "-dash");
	assert_string_equal(c->names[1], ".");
	assert_string_equal(c->names[2], "..");
	assert_string_equal(c->names[c->n - 1], "\xC3\xA9t\xC3\xA9");
	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		int k = find_name(c, expect[i].name);

		assert_true(k >= 0);
		assert_int_equal(c->types[k], expect[i].type);
		if (strcmp(expect[i].name, ".") && strcmp(expect[i].name, "..")) {
			char path[32];

			snprintf(path, sizeof(path), "/%s", expect[i].name);
			assert_int_equal(c->nids[k], nid_of(path));
		} else {
			assert_int_equal(c->nids[k], ek_root_nid(g.img));
		}
	}
	if (g.have_chr)
		assert_int_equal(c->types[find_name(c, "chr")], EK_FT_CHR);
	/* on-disk order is sorted */
	for (i = 1; i < c->n; i++)
		assert_true(strcmp(c->names[i - 1], c->names[i]) < 0);
	free(c);
	ek_inode_put(root);
}

static void test_readdir_large(void **state)
{
	struct collected *all = calloc(1, sizeof(*all));
	struct collected *part = calloc(1, sizeof(*part));
	static const unsigned int stops[] = { 1, 2, 3, 100, 239, 240, 241, 242, 300, 500, 701, 702 };
	ek_inode *sub = get_path("/sub");
	ek_error err = { 0, "" };
	unsigned int i, s;

	(void)state;
	assert_non_null(all);
	assert_non_null(part);
	assert_int_equal(ek_readdir(sub, 0, collect, all, &err), 0);
	assert_int_equal(all->n, NSUB + 2);
	assert_true(ek_inode_stat(sub)->size > 2 * 4096);
	for (i = 0; i < NSUB; i++) {
		char name[16];
		int k;

		snprintf(name, sizeof(name), "f%04u", i);
		k = find_name(all, name);
		assert_true(k >= 0);
		assert_int_equal(all->types[k], EK_FT_REG);
	}
	assert_int_equal(all->nids[find_name(all, "..")], ek_root_nid(g.img));
	assert_int_equal(all->nids[find_name(all, ".")], nid_of("/sub"));
	for (i = 1; i < all->n; i++)
		assert_true(strcmp(all->names[i - 1], all->names[i]) < 0);

	/* stop after k entries, then continue from the last next_offset */
	for (s = 0; s < sizeof(stops) / sizeof(stops[0]); s++) {
		unsigned int k = stops[s], j;
		uint64_t resume;
		int ret;

		memset(part, 0, sizeof(*part));
		part->stop_after = k;
		ret = ek_readdir(sub, 0, collect, part, &err);
		assert_int_equal(ret, 42);
		assert_int_equal(part->n, k);
		resume = part->next[k - 1];
		part->stop_after = 0;
		assert_int_equal(ek_readdir(sub, resume, collect, part, &err), 0);
		assert_int_equal(part->n, all->n);
		for (j = 0; j < all->n; j++) {
			assert_string_equal(part->names[j], all->names[j]);
			assert_int_equal(part->nids[j], all->nids[j]);
		}
	}
	/* every next_offset resumes right after its entry */
	for (i = 0; i < all->n; i += 97) {
		memset(part, 0, sizeof(*part));
		assert_int_equal(ek_readdir(sub, all->next[i], collect, part, &err), 0);
		assert_int_equal(part->n, all->n - i - 1);
		if (part->n)
			assert_string_equal(part->names[0], all->names[i + 1]);
	}
	free(all);
	free(part);
	ek_inode_put(sub);
}

static void test_readdir_not_dir(void **state)
{
	struct collected *c = calloc(1, sizeof(*c));
	ek_inode *file = get_path("/big");
	ek_error err = { 0, "" };

	(void)state;
	assert_non_null(c);
	expect_error(ek_readdir(file, 0, collect, c, &err), -ENOTDIR, &err);
	assert_int_equal(c->n, 0);
	free(c);
	ek_inode_put(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readdir_root),
		cmocka_unit_test(test_readdir_large),
		cmocka_unit_test(test_readdir_not_dir),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
