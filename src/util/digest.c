/* SHA-256 through OpenSSL's EVP interface (SHA extensions where the CPU
 * has them: about 1.4 GB/s per core here). */
#include <openssl/evp.h>
#include <string.h>

#include "util/digest.h"

void digest_of(const void *data, size_t len, uint8_t out[DIGEST_SIZE])
{
	unsigned int n = DIGEST_SIZE;

	/* EVP_Digest() fails only without memory: leave a digest no data
	 * has, so that nothing is taken for a duplicate of it. */
	if (!EVP_Digest(data, len, out, &n, EVP_sha256(), NULL))
		memset(out, 0xFF, DIGEST_SIZE);
}

struct digest_state *digest_begin(void)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (c && !EVP_DigestInit_ex(c, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(c);
		c = NULL;
	}
	return (struct digest_state *)c;
}

void digest_add(struct digest_state *d, const void *data, size_t len)
{
	EVP_DigestUpdate((EVP_MD_CTX *)d, data, len);
}

void digest_end(struct digest_state *d, uint8_t out[DIGEST_SIZE])
{
	unsigned int n = DIGEST_SIZE;

	if (!EVP_DigestFinal_ex((EVP_MD_CTX *)d, out, &n))
		memset(out, 0xFF, DIGEST_SIZE);
	EVP_MD_CTX_free((EVP_MD_CTX *)d);
}

void digest_to_hex(const uint8_t d[DIGEST_SIZE], char out[2 * DIGEST_SIZE + 1])
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < DIGEST_SIZE; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * DIGEST_SIZE] = '\0';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int digest_from_hex(const char *s, uint8_t out[DIGEST_SIZE])
{
	size_t i;

	for (i = 0; i < DIGEST_SIZE; i++) {
		int hi = hex_digit(s[2 * i]), lo = hi < 0 ? -1 : hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return s[2 * DIGEST_SIZE] ? -1 : 0;
}
