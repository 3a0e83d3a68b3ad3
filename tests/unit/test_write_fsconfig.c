/*
 * Android's canned fs_config as mkfs --fs-config-file reads it
 * (write/fsconfig.c): the forms Android's build writes (the root as a
 * line that starts with a blank, selabel= words, capabilities in hex),
 * a path given twice taking its last line, and every malformed line
 * refused with its file and line number.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "write/fsconfig.h"

static char *write_file(const char *text, size_t len)
{
	char *path = strdup("/tmp/ek-fsconfig-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static int open_text(const char *text, struct fsconfig **out, ek_error *err)
{
	char *path = write_file(text, strlen(text));
	int ret = fsconfig_open(path, out, err);

	unlink(path);
	free(path);
	return ret;
}

static void test_android_forms(void **state)
{
	static const char text[] =
		" 0 0 755 selabel=u:object_r:rootfs:s0 capabilities=0x0\n"
		"# a comment\n"
		"\n"
		"system/bin 0 2000 751 selabel=u:object_r:system_file:s0 capabilities=0x0\n"
		"/system/bin/ping 0 0 4750 capabilities=0x3000\r\n"
		"system/bin/run-as 0 2000 0750 capabilities=0x20000000C0\n"
		"system/bin/oct 1 2 644 capabilities=010\n"
		"system/etc/ 1000 1000 0755\n"
		"system/app 4294967295 4294967295 07777\n"
		"system/app 10 20 0700\n";
	ek_error err = { 0 };
	struct fsconfig *c;
	const struct fsconfig_entry *e;

	(void)state;
	assert_int_equal(open_text(text, &c, &err), 0);
	e = fsconfig_lookup(c, "");
	assert_non_null(e);
	assert_int_equal(e->mode, 0755);
	assert_true(e->capabilities == 0);
	e = fsconfig_lookup(c, "system/bin");
	assert_non_null(e);
	assert_int_equal(e->gid, 2000);
	assert_int_equal(e->mode, 0751);
	/* a leading '/' and a CR do not count */
	e = fsconfig_lookup(c, "system/bin/ping");
	assert_non_null(e);
	assert_int_equal(e->mode, 04750);
	assert_true(e->capabilities == 0x3000);
	e = fsconfig_lookup(c, "system/bin/run-as");
	assert_non_null(e);
	assert_true(e->capabilities == 0x20000000C0ull);
	e = fsconfig_lookup(c, "system/bin/oct");
	assert_non_null(e);
	assert_true(e->capabilities == 8);
	/* a trailing '/' neither */
	assert_non_null(fsconfig_lookup(c, "system/etc"));
	/* the last line of a path given twice */
	e = fsconfig_lookup(c, "system/app");
	assert_non_null(e);
	assert_int_equal(e->uid, 10);
	assert_int_equal(e->mode, 0700);
	assert_null(fsconfig_lookup(c, "system"));
	assert_null(fsconfig_lookup(c, "system/bin/"));
	fsconfig_close(c);
}

static void test_root_as_slash(void **state)
{
	ek_error err = { 0 };
	struct fsconfig *c;

	(void)state;
	assert_int_equal(open_text("/ 0 0 0755\nvendor 0 2000 0755\n", &c, &err), 0);
	assert_non_null(fsconfig_lookup(c, ""));
	assert_non_null(fsconfig_lookup(c, "vendor"));
	fsconfig_close(c);
}

static void test_bad_lines(void **state)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "a 0 0\n", "a: bad fields" },
		{ "a\n", "bad fields" },
		{ "ok 0 0 755\na 0 0 0800\n", ":2: a: bad mode" },
		{ "a 0 0 10000\n", "bad mode" },
		{ "a 4294967296 0 755\n", "bad owner" },
		{ "a 0 -1 755\n", "bad group" },
		{ "a 0x10 0 755\n", "bad owner" },
		{ "a 0 0 755 capabilities=0xZZ\n", "bad capabilities" },
		{ "a 0 0 755 capabilities=\n", "bad capabilities" },
		{ "a 0 0 755 capabilities=0x10000000000000000\n", "bad capabilities" },
		{ " 0 0\n", "(the root)" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ek_error err = { 0 };
		struct fsconfig *c = NULL;

		assert_int_equal(open_text(bad[i].text, &c, &err), -EINVAL);
		assert_null(c);
		if (!strstr(err.message, bad[i].says))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].text, err.message,
				 bad[i].says);
	}
}

static void test_nul_and_missing(void **state)
{
	static const char nul[] = "a 0 0 755\nb\0c 0 0 755\n";
	ek_error err = { 0 };
	struct fsconfig *c = NULL;
	char *path = write_file(nul, sizeof(nul) - 1);

	(void)state;
	assert_int_equal(fsconfig_open(path, &c, &err), -EINVAL);
	assert_non_null(strstr(err.message, ":2: a NUL byte"));
	unlink(path);
	assert_int_equal(fsconfig_open(path, &c, &err), -ENOENT);
	assert_non_null(strstr(err.message, path));
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_android_forms),
		cmocka_unit_test(test_root_as_slash),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_nul_and_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
