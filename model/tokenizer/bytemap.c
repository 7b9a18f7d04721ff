/* bytemap.c — bytes as characters, for the tokenizer module (tokenizer_impl.h): GPT-2's
 * bytes_to_unicode in both directions, the Hugging Face spelling of a byte string (the form
 * vocab.json and tokenizer.json keep tokens in), strict UTF-8, and bytes quoted for a one-line
 * message. */
#include "model/tokenizer/tokenizer_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- GPT-2's bytes_to_unicode ---------------------------------------------------------
 * The 188 printable bytes stand for themselves; the other 68, in byte order, become
 * U+0100..U+0143, so a space is U+0120 'Ġ' and a newline U+010A 'Ċ'. */

int gb_bpe_byte_to_cp(int b)
{
	if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)
		return b;
	if (b <= 0x20)
		return 256 + b;
	if (b <= 0xA0)
		return 256 + 33 + (b - 0x7F);
	return 256 + 67; /* 0xAD, the soft hyphen */
}

static int cp_to_byte(uint32_t cp)
{
	if ((cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
		return (int)cp;
	if (cp >= 256 && cp <= 256 + 32)
		return (int)cp - 256;
	if (cp >= 256 + 33 && cp <= 256 + 66)
		return (int)cp - 256 - 33 + 0x7F;
	if (cp == 256 + 67)
		return 0xAD;
	return -1;
}

/* Strict UTF-8: the length of the character at s (1..4) and its code point, or 0. */
size_t gb_bpe_utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	size_t len;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF)
		len = 2, v = c & 0x1F, min = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, v = c & 0x0F, min = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4, v = c & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

int gb_bpe_utf8_valid(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint32_t cp;
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = gb_bpe_utf8_next(s + i, n - i, &cp)))
			return 0;
	return 1;
}

/* A Hugging Face spelling to bytes, into out (at least n bytes). Returns the byte count, or
 * -1 with *bad the offending code point (UINT32_MAX for invalid UTF-8). */
long gb_bpe_hf_to_bytes(const char *spell, size_t n, unsigned char *out, uint32_t *bad)
{
	const unsigned char *s = (const unsigned char *)spell;
	size_t i = 0, j = 0, k;
	uint32_t cp;
	while (i < n) {
		if (!(k = gb_bpe_utf8_next(s + i, n - i, &cp))) {
			*bad = UINT32_MAX;
			return -1;
		}
		int b = cp_to_byte(cp);
		if (b < 0) {
			*bad = cp;
			return -1;
		}
		out[j++] = (unsigned char)b;
		i += k;
	}
	return (long)j;
}

/* Bytes to their Hugging Face spelling into out (room for 2n bytes); returns its length. */
size_t gb_bpe_bytes_to_hf(const unsigned char *s, size_t n, char *out)
{
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int cp = gb_bpe_byte_to_cp(s[i]);
		if (cp < 0x80) {
			out[j++] = (char)cp;
		} else {
			out[j++] = (char)(0xC0 | cp >> 6);
			out[j++] = (char)(0x80 | (cp & 0x3F));
		}
	}
	return j;
}

/* A short quoted rendering of s for a one-line message: control bytes escaped, long text cut. */
const char *gb_bpe_quote(char *dst, size_t cap, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t j = 0;
	dst[j++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned c = s[i];
		if (j + 4 + 5 >= cap) {
			while (j > 1 && ((unsigned char)dst[j - 1] & 0xC0) == 0x80)
				j--; /* do not leave half a character */
			if (j > 1 && ((unsigned char)dst[j - 1] & 0xC0) == 0xC0)
				j--;
			memcpy(dst + j, "...", 3);
			j += 3;
			break;
		}
		if (c == '"' || c == '\\') {
			dst[j++] = '\\';
			dst[j++] = (char)c;
		} else if (c < 0x20 || c == 0x7F) {
			j += (size_t)snprintf(dst + j, cap - j, "\\x%02X", c);
		} else {
			dst[j++] = (char)c;
		}
	}
	dst[j++] = '"';
	dst[j] = 0;
	return dst;
}
