/* pretok.c — pre-tokenizers, for the tokenizer module (tokenizer_impl.h): where the text is
 * cut into words before BPE runs inside each. One today, GPT-2's pattern (tokenizer.h spells
 * it out), written as a scanner so that it is byte-exact without a regex engine. Normalizers
 * would live here too; byte-level BPE has none. */
#include "model/tokenizer/tokenizer_impl.h"

/* ---- the pre-tokenizer ------------------------------------------------------------------ */

enum { C_LETTER, C_DIGIT, C_SPACE, C_OTHER };

static inline int cls(unsigned c)
{
	if (c >= 0x80 || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
		return C_LETTER;
	if (c >= '0' && c <= '9')
		return C_DIGIT;
	if (c == ' ' || (c >= '\t' && c <= '\r'))
		return C_SPACE;
	return C_OTHER;
}

/* The end of the pre-token that starts at s[i] (i < n): the first alternative of GPT-2's
 * pattern that matches there, as the regex engine would pick it. */
size_t gb_bpe_pretok_end(const unsigned char *s, size_t n, size_t i)
{
	if (s[i] == '\'' && i + 1 < n) { /* 's 't 're 've 'm 'll 'd */
		unsigned c = s[i + 1];
		if (c == 's' || c == 't' || c == 'm' || c == 'd')
			return i + 2;
		if (i + 2 < n && ((c == 'r' && s[i + 2] == 'e') || (c == 'v' && s[i + 2] == 'e') ||
		                  (c == 'l' && s[i + 2] == 'l')))
			return i + 3;
	}
	size_t j = i;
	if (s[j] == ' ' && j + 1 < n && cls(s[j + 1]) != C_SPACE)
		j++; /* " ?" before a run of letters, digits or other symbols */
	int k = cls(s[j]);
	if (k != C_SPACE) {
		while (j < n && cls(s[j]) == k)
			j++;
		return j;
	}
	while (j < n && cls(s[j]) == C_SPACE)
		j++;
	if (j == n)
		return n; /* \s+(?!\S) at the end of the text */
	if (j - i >= 2)
		return j - 1; /* \s+(?!\S): leave the last space to the word after it */
	return j;         /* \s+ */
}
