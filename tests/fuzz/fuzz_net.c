/*
 * Fuzz target: what servers answer.  The input is a script of HTTP
 * answers, one per connection, in order, separated by "\n#next\n"; a
 * server thread on 127.0.0.1 gives each connection the next answer as it
 * stands and closes it (a connection past the script's end is closed
 * unanswered).  "@HOST@" in an answer becomes the server's host:port, so
 * that a script can name it (a token realm, a redirect).  An answer that
 * begins "@RANGE@\n" is not sent: its bytes are an object, served as a
 * server that honours Range would serve it to this and every later
 * connection.
 *
 * The first byte picks the client: an image at an http:// URL (bit 0
 * clear), or one in an OCI registry (oci://, plain HTTP: the manifest, a
 * token flow, the blob, whose digest is then checked), anonymously or with
 * credentials (bit 1: Basic auth, or the token flow with them).  Whatever
 * the answers, the open fails with an error or yields an image that is
 * walked; no answer makes erofskit crash, leak or hang (every answer
 * ends: the server closes each connection).  With bit 2 too, the
 * registry's image is a container image that mkfs --oci pulls and builds
 * (the manifest, an index's entry, the config and the layers, each
 * fetched into a scratch layout and checked): the build fails with an
 * error or writes an image, and leaves no scratch layout either way.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "erofskit/build.h"
#include "walk.h"

#define SEPARATOR "\n#next\n"
#define RANGE_MARK "@RANGE@\n"
#define HOST_MARK "@HOST@"
#define REQUEST_MAX (16u << 10)

/* The script of the current run: the server's own copy, so that a
 * connection still being answered never reads the fuzzer's freed input. */
static struct {
	pthread_mutex_t lock;
	uint8_t *data;
	size_t size;
	size_t next;             /* offset of the next answer */
	const uint8_t *object;   /* once a @RANGE@ answer is reached */
	size_t object_size;
} script = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int listen_fd = -1;
static char host[32];        /* 127.0.0.1:PORT */
static size_t host_len;
static char credentials[64] = "/tmp/ek-fuzz-net.XXXXXX";
static char pulled[64] = "/tmp/ek-fuzz-pull.XXXXXX";   /* a directory */
static char pulled_image[96];

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

/* The request's head (up to the blank line), NUL terminated. */
static size_t read_request(int fd, char *buf, size_t size)
{
	size_t have = 0;

	while (have + 1 < size) {
		ssize_t r = recv(fd, buf + have, size - 1 - have, 0);

		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	buf[have] = '\0';
	return have;
}

/* An object served as a Range-honouring server would. */
static void serve_object(int fd, const char *request, const uint8_t *obj, size_t size)
{
	const char *range = strcasestr(request, "\r\nrange: bytes=");
	unsigned long long first = 0, last = size ? size - 1 : 0;
	char head[512];
	int n;

	if (!strncmp(request, "HEAD ", 5)) {
		n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
			     "ETag: \"fuzz\"\r\nAccept-Ranges: bytes\r\n\r\n", size);
		send_all(fd, head, (size_t)n);
		return;
	}
	if (!range) {
		n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
			     "ETag: \"fuzz\"\r\n\r\n", size);
		send_all(fd, head, (size_t)n);
		send_all(fd, obj, size);
		return;
	}
	if (sscanf(range + 15, "%llu-%llu", &first, &last) < 1 || first >= size) {
		n = snprintf(head, sizeof(head), "HTTP/1.1 416 Range Not Satisfiable\r\n"
			     "Content-Range: bytes */%zu\r\nContent-Length: 0\r\n\r\n", size);
		send_all(fd, head, (size_t)n);
		return;
	}
	if (last >= size || last < first)
		last = size - 1;
	n = snprintf(head, sizeof(head), "HTTP/1.1 206 Partial Content\r\nContent-Length: %llu\r\n"
		     "Content-Range: bytes %llu-%llu/%zu\r\nETag: \"fuzz\"\r\n\r\n",
		     last - first + 1, first, last, size);
	send_all(fd, head, (size_t)n);
	send_all(fd, obj + first, (size_t)(last - first + 1));
}

/* The next literal answer, "@HOST@" replaced, newly allocated into *out
 * (NULL: none left); or the object, once the script has reached it. */
static void next_answer(char **out, size_t *out_len, uint8_t **object, size_t *object_size)
{
	const size_t mark_len = strlen(HOST_MARK), range_len = strlen(RANGE_MARK);
	const uint8_t *p, *end, *sep;
	size_t len, i, o = 0;
	char *a;

	*out = NULL;
	*object = NULL;
	pthread_mutex_lock(&script.lock);
	if (!script.object && script.next <= script.size && script.data) {
		p = script.data + script.next;
		end = script.data + script.size;
		sep = memmem(p, (size_t)(end - p), SEPARATOR, strlen(SEPARATOR));
		len = sep ? (size_t)(sep - p) : (size_t)(end - p);
		script.next = sep ? (size_t)(sep - script.data) + strlen(SEPARATOR) : script.size + 1;
		if (len >= range_len && !memcmp(p, RANGE_MARK, range_len)) {
			script.object = p + range_len;
			script.object_size = len - range_len;
		} else if ((a = malloc(len * (host_len + 1) + 1))) {
			for (i = 0; i < len; i++) {
				if (len - i >= mark_len && !memcmp(p + i, HOST_MARK, mark_len)) {
					memcpy(a + o, host, host_len);
					o += host_len;
					i += mark_len - 1;
				} else {
					a[o++] = (char)p[i];
				}
			}
			*out = a;
			*out_len = o;
		}
	}
	if (script.object && (*object = malloc(script.object_size + 1))) {
		memcpy(*object, script.object, script.object_size);
		*object_size = script.object_size;
	}
	pthread_mutex_unlock(&script.lock);
}

static void *serve(void *unused)
{
	static char request[REQUEST_MAX];

	(void)unused;
	for (;;) {
		struct timeval tv = { .tv_sec = 2 };
		int fd = accept(listen_fd, NULL, NULL);
		char *answer;
		uint8_t *object;
		size_t len = 0, object_size = 0;

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		read_request(fd, request, sizeof(request));
		next_answer(&answer, &len, &object, &object_size);
		if (object)
			serve_object(fd, request, object, object_size);
		else if (answer)
			send_all(fd, answer, len);
		free(answer);
		free(object);
		shutdown(fd, SHUT_WR);
		close(fd);
	}
	return NULL;
}

static void start_server(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	pthread_t t;

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(listen_fd, 64) || getsockname(listen_fd, (struct sockaddr *)&a, &alen) ||
	    pthread_create(&t, NULL, serve, NULL))
		abort();
	pthread_detach(t);
	host_len = (size_t)snprintf(host, sizeof(host), "127.0.0.1:%u", ntohs(a.sin_port));
}

static void remove_credentials(void)
{
	unlink(credentials);
	rmdir(pulled);
}

/* "user:password" in a file of its own, for the registry client; and
 * a directory of its own for the images pulled. */
static void make_credentials(void)
{
	int fd = mkstemp(credentials);

	if (fd < 0 || write(fd, "fuzz:s3cret\n", 12) != 12 || !mkdtemp(pulled))
		abort();
	close(fd);
	snprintf(pulled_image, sizeof(pulled_image), "%s/image.erofs", pulled);
	/* The pull's scratch layouts go there too. */
	if (setenv("TMPDIR", pulled, 1))
		abort();
	atexit(remove_credentials);
}

/* mkfs --oci of the registry's image: a failure or an image, and
 * nothing else left in its directory (TMPDIR: the scratch layouts' too). */
static void pull(const char *url, const ek_http_options *http)
{
	ek_build_options o;
	ek_build_stats stats;
	ek_http_options one_at_a_time = *http;
	ek_error err;

	/* The answers go to connections in the order they come: layers
	 * fetched at once would take them in any order, and a finding
	 * would not repeat. */
	one_at_a_time.downloads = 1;
	ek_build_options_init(&o);
	o.workers = 1;
	o.http = &one_at_a_time;
	(void)ek_build_oci(pulled_image, url, &o, &stats, &err);
	unlink(pulled_image);
	if (rmdir(pulled))       /* anything left in it */
		abort();
	if (mkdir(pulled, 0700))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char url[96];
	ek_open_options o;
	ek_image *img = NULL;
	ek_error err;
	uint8_t *copy;

	if (size < 1)
		return 0;
	if (listen_fd < 0) {
		start_server();
		make_credentials();
	}
	copy = malloc(size);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	pthread_mutex_lock(&script.lock);
	free(script.data);
	script.data = copy;
	script.size = size;
	script.next = 1;         /* after the client byte */
	script.object = NULL;
	pthread_mutex_unlock(&script.lock);

	ek_open_options_init(&o);
	o.workers = 1;
	o.cache_bytes = 1u << 20;
	o.http.cache_dir = "none";
	o.http.retries = EK_HTTP_NO_RETRIES;
	o.http.timeout_ms = 3000;
	if (data[0] & 1) {
		o.http.plain_http = 1;
		if (data[0] & 2)
			o.http.credentials_file = credentials;
		snprintf(url, sizeof(url), "oci://%s/fuzz/image:latest", host);
		if (data[0] & 4) {
			pull(url, &o.http);
			return 0;
		}
	} else {
		snprintf(url, sizeof(url), "http://%s/image.erofs", host);
	}
	if (!ek_open(url, &o, &img, &err)) {
		fuzz_walk_image(img);
		(void)ek_verify_source(img, &err);
		ek_close(img);
	}
	return 0;
}
