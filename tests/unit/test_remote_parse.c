/* What servers and users hand the network back ends, parsed: Content-Range
 * values, WWW-Authenticate challenges, header values and oci://
 * references; every malformed one refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "io/httpparse.h"
#include "io/registry.h"

static void content_range(void **state)
{
	static const char *const bad[] = {
		"", "bytes", "bytes 1-", "bytes 1-2", "bytes 1-2/", "bytes 1-2/*",
		"bytes 2-1/10", "bytes 0-10/10", "bytes -1-2/10", "bytes 1--2/10",
		"bytes +1-2/10", "bytes  1-2/10", "bytes 1-2/10x", "items 1-2/10",
		"bytes 1-2/99999999999999999999999", "bytes 0-0/0",
	};
	uint64_t first, last, total;
	size_t i;

	(void)state;
	assert_true(http_content_range("bytes 0-65535/1212416", &first, &last, &total));
	assert_int_equal(first, 0);
	assert_int_equal(last, 65535);
	assert_int_equal(total, 1212416);
	assert_true(http_content_range("BYTES 5-5/6", &first, &last, &total));
	assert_int_equal(last, 5);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(http_content_range(bad[i], &first, &last, &total));
}

static void challenge(void **state)
{
	const char *c = "Bearer realm=\"https://auth.example/token\",service=\"registry\","
			"scope=\"repository:a/b:pull\"";
	char out[64];

	(void)state;
	assert_true(http_challenge_param(c, "realm", out, sizeof(out)));
	assert_string_equal(out, "https://auth.example/token");
	assert_true(http_challenge_param(c, "service", out, sizeof(out)));
	assert_string_equal(out, "registry");
	assert_true(http_challenge_param(c, "scope", out, sizeof(out)));
	assert_string_equal(out, "repository:a/b:pull");
	assert_false(http_challenge_param(c, "error", out, sizeof(out)));
	/* A name inside another's value or name is not it. */
	assert_false(http_challenge_param("Bearer myrealm=\"x\"", "realm", out, sizeof(out)));
	assert_true(http_challenge_param("Basic realm=plain, x=y", "realm", out, sizeof(out)));
	assert_string_equal(out, "plain");
	/* Cut to fit, never past the buffer. */
	assert_true(http_challenge_param(c, "realm", out, 8));
	assert_string_equal(out, "https:/");
	/* An unterminated quote ends with the string. */
	assert_true(http_challenge_param("Bearer realm=\"abc", "realm", out, sizeof(out)));
	assert_string_equal(out, "abc");
}

static void header_value(void **state)
{
	char out[8];

	(void)state;
	http_header_value(" \t\"abc\" \r\n", 10, out, sizeof(out));
	assert_string_equal(out, "\"abc\"");
	http_header_value(" 0123456789\r\n", 13, out, sizeof(out));
	assert_string_equal(out, "0123456");
	http_header_value("\r\n", 2, out, sizeof(out));
	assert_string_equal(out, "");
}

static void references(void **state)
{
	static const char *const bad[] = {
		"", "oci://", "oci:///repo", "oci://host", "oci://host/",
		"docker://host/repo", "oci://host/Repo", "oci://host/repo/",
		"oci://host/re..po", "oci://host/repo:", "oci://host/repo:-x",
		"oci://host/repo@sha256:abc", "oci://host/repo@md5:00",
		"oci://host/repo@sha256:ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789",
		"oci://ho st/repo", "oci://host/repo:t a g",
	};
	struct oci_ref r;
	ek_error err;
	size_t i;

	(void)state;
	assert_int_equal(oci_parse_ref("oci://127.0.0.1:5000/a/b-c_d.e:v1.0", &r, &err), 0);
	assert_string_equal(r.host, "127.0.0.1:5000");
	assert_string_equal(r.repo, "a/b-c_d.e");
	assert_string_equal(r.tag, "v1.0");
	assert_string_equal(r.digest, "");
	assert_int_equal(oci_parse_ref("oci://registry.example/img", &r, &err), 0);
	assert_string_equal(r.tag, "latest");
	assert_string_equal(r.repo, "img");
	/* Docker Hub: its API's host, and official images under library/. */
	assert_int_equal(oci_parse_ref("oci://docker.io/debian:12", &r, &err), 0);
	assert_string_equal(r.host, "registry-1.docker.io");
	assert_string_equal(r.repo, "library/debian");
	assert_string_equal(r.tag, "12");
	assert_int_equal(oci_parse_ref("oci://index.docker.io/someone/tool", &r, &err), 0);
	assert_string_equal(r.host, "registry-1.docker.io");
	assert_string_equal(r.repo, "someone/tool");
	assert_int_equal(oci_parse_ref("oci://h/img@sha256:"
				       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				       &r, &err), 0);
	assert_string_equal(r.tag, "");
	assert_string_equal(r.digest, "sha256:0123456789abcdef0123456789abcdef"
				      "0123456789abcdef0123456789abcdef");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = oci_parse_ref(bad[i], &r, &err);

		if (!ret)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(ret, -EINVAL);
		assert_true(strlen(err.message) > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(content_range),
		cmocka_unit_test(challenge),
		cmocka_unit_test(header_value),
		cmocka_unit_test(references),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
