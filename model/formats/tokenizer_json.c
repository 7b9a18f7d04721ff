/* tokenizer_json.c — the tokenizer's files (see tokenizer.h, whose API this belongs to): Hugging
 * Face's tokenizer.json and GPT-2's vocab.json + merges.txt, read (every token spelled, every
 * merge resolved and checked, with the file and the token in each message) and written,
 * through jansson. A piece of the tokenizer module: it builds through the draft of
 * model/tokenizer/tokenizer_impl.h and reads gb_tokenizer's layout to write. */
#include "model/tokenizer/tokenizer_impl.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/fileio.h"

/* The largest tokenizer file read (GPT-2's tokenizer.json is 1.4 MB; Llama 3's 9 MB). */
#define MAX_FILE ((size_t)512 << 20)

/* ---- reading files ---------------------------------------------------------------------- */

/* Tokens by their spelling, as both file formats give them. */
typedef struct spelled {
	const char *file;    /* for messages about tokens */
	const char *mfile;   /* for messages about merges */
	int n;               /* ids 0..n-1 */
	const char **str;    /* (n) Hugging Face spelling, or an added token's text */
	size_t *len;         /* (n) */
	unsigned char *kind; /* (n) KIND_* */
	int n_merges;
	const char **m_str;  /* (n_merges, 2) the pieces' spellings */
	size_t *m_len;       /* (n_merges, 2) */
	const int *m_line;   /* (n_merges) merges.txt line numbers, or NULL: model.merges[i] */
	int infer_added;     /* vocab.json: find the special tokens (see tokenizer.h) */
	const gb_steps *st;  /* tokenizer.json's steps, or NULL */
	unsigned char *add_flags; /* (n) ADD_* of added tokens, or NULL */
} spelled;

static const char *merge_where(const spelled *sp, int i, char *buf, size_t cap)
{
	if (sp->m_line)
		snprintf(buf, cap, "line %d", sp->m_line[i]);
	else
		snprintf(buf, cap, "model.merges[%d]", i);
	return buf;
}

/* Resolves spellings to ids and bytes; the tokenizer or -1 with a message naming sp->file. */
static int build_spelled(spelled *sp, gb_tokenizer **out, gb_err *err)
{
	char q1[80], q2[80], q3[80], wh[48];
	smap ids = { 0 };
	draft d = { 0 };
	int *m = NULL;
	unsigned char *buf = NULL, *reach = NULL;
	size_t cap_buf = 0;
	int fresh;
	if (gb_bpe_smap_init(&ids, (size_t)sp->n) ||
	    !(m = malloc(((size_t)sp->n_merges * 3 + 1) * sizeof *m)))
		goto oom;
	for (int i = 0; i < sp->n; i++) {
		sent *e = gb_bpe_smap_add(&ids, sp->str[i], sp->len[i], 0, &fresh);
		if (!e)
			goto oom;
		if (!fresh) {
			gb_fail(err, "%s: ids %d and %d are both %s", sp->file, e->val, i,
			        gb_bpe_quote(q1, sizeof q1, sp->str[i], sp->len[i]));
			goto fail;
		}
		e->val = i;
	}
	for (int r = 0; r < sp->n_merges; r++) {
		const char *a = sp->m_str[2 * r], *b = sp->m_str[2 * r + 1];
		size_t la = sp->m_len[2 * r], lb = sp->m_len[2 * r + 1];
		int ia = gb_bpe_smap_get(&ids, a, la), ib = gb_bpe_smap_get(&ids, b, lb);
		if (ia < 0 || ib < 0) {
			gb_fail(err, "%s: %s: merge %s %s names an unknown token %s", sp->mfile,
			        merge_where(sp, r, wh, sizeof wh),
			        gb_bpe_quote(q1, sizeof q1, a, la),
			        gb_bpe_quote(q2, sizeof q2, b, lb),
			        ia < 0 ? q1 : q2);
			goto fail;
		}
		if (GROW(buf, cap_buf, la + lb + 1))
			goto oom;
		memcpy(buf, a, la);
		memcpy(buf + la, b, lb);
		int ic = gb_bpe_smap_get(&ids, buf, la + lb);
		if (ic < 0) {
			gb_fail(err, "%s: %s: merge %s %s makes %s, which is not in the vocabulary",
			        sp->mfile, merge_where(sp, r, wh, sizeof wh),
			        gb_bpe_quote(q1, sizeof q1, a, la),
			        gb_bpe_quote(q2, sizeof q2, b, lb),
			        gb_bpe_quote(q3, sizeof q3, buf, la + lb));
			goto fail;
		}
		m[3 * r] = ia, m[3 * r + 1] = ib, m[3 * r + 2] = ic;
	}
	if (sp->infer_added) {
		if (!(reach = calloc((size_t)sp->n, 1)))
			goto oom;
		for (int r = 0; r < sp->n_merges; r++)
			reach[m[3 * r + 2]] = 1;
		for (int i = 0; i < sp->n; i++) {
			const char *s = sp->str[i];
			size_t l = sp->len[i];
			uint32_t cp, bad;
			if (reach[i] ||
			    (l && gb_bpe_utf8_next((const unsigned char *)s, l, &cp) == l))
				continue; /* produced by a merge, or one character: a byte */
			if (GROW(buf, cap_buf, l + 1))
				goto oom;
			if ((l >= 2 && ((s[0] == '<' && s[l - 1] == '>') || (s[0] == '[' && s[l - 1] == ']'))) ||
			    gb_bpe_hf_to_bytes(s, l, buf, &bad) < 0)
				sp->kind[i] = KIND_SPECIAL;
		}
	}
	d.charlevel = sp->st && sp->st->charlevel;
	for (int i = 0; i < sp->n; i++) {
		const char *s = sp->str[i];
		size_t l = sp->len[i];
		uint32_t bad;
		if (sp->kind[i] != KIND_NORMAL) {
			if (gb_bpe_draft_token(&d, s, l, sp->kind[i]) < 0)
				goto oom;
			continue;
		}
		if (d.charlevel) {
			size_t nb;
			unsigned char *b = gb_bpe_charlevel_bytes(sp->st, s, l, &nb);
			if (!b)
				goto oom;
			if (!nb) {
				free(b);
				gb_fail(err, "%s: token %s (id %d) decodes to nothing", sp->file,
				        gb_bpe_quote(q1, sizeof q1, s, l), i);
				goto fail;
			}
			int id = gb_bpe_draft_token(&d, b, nb, KIND_NORMAL);
			free(b);
			if (id < 0)
				goto oom;
			continue;
		}
		if (GROW(buf, cap_buf, l + 1))
			goto oom;
		long nb = gb_bpe_hf_to_bytes(s, l, buf, &bad);
		if (nb < 0) {
			if (bad == UINT32_MAX)
				gb_fail(err, "%s: token %d is not valid UTF-8", sp->file, i);
			else
				gb_fail(err, "%s: token %s (id %d) is not byte-level BPE: U+%04X is not one of "
				        "GPT-2's 256 byte characters", sp->file, gb_bpe_quote(q1, sizeof q1, s, l), i,
				        (unsigned)bad);
			goto fail;
		}
		if (gb_bpe_draft_token(&d, buf, (size_t)nb, KIND_NORMAL) < 0)
			goto oom;
	}
	for (int r = 0; r < sp->n_merges; r++)
		if (gb_bpe_draft_merge(&d, m[3 * r], m[3 * r + 1], m[3 * r + 2]))
			goto oom;
	free(m);
	free(buf);
	free(reach);
	int rc = gb_bpe_draft_finish(&d, sp->file, out, err);
	if (!rc && sp->st && gb_bpe_steps_attach(*out, sp->file, sp->str, sp->len, &sp->add_flags, (gb_steps *)sp->st, &ids, err)) {
		gb_tok_free(*out);
		*out = NULL;
		rc = -1;
	}
	gb_bpe_smap_free(&ids);
	return rc;
oom:
	gb_fail(err, "%s: out of memory", sp->file);
fail:
	free(m);
	free(buf);
	free(reach);
	if (ids.e)
		gb_bpe_smap_free(&ids);
	gb_bpe_draft_free(&d);
	return -1;
}

static void spelled_free(spelled *sp)
{
	free(sp->add_flags);
	free(sp->str);
	free(sp->len);
	free(sp->kind);
	free((void *)sp->m_str);
	free(sp->m_len);
	free((void *)sp->m_line);
}

/* Parses path; *keep (when given) receives the file's text, *n_keep its length. */
static json_t *load_json_file(const char *path, char **keep, size_t *n_keep, gb_err *err)
{
	size_t n;
	json_error_t je;
	char *text = gb_read_file(path, MAX_FILE, &n, err);
	if (!text)
		return NULL;
	json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	if (keep && root) {
		*keep = text;
		*n_keep = n;
	} else {
		free(text);
	}
	if (!root)
		gb_fail(err, "%s: invalid JSON (line %d, column %d): %s", path, je.line, je.column,
		        je.text);
	return root;
}

/* Fills sp->str/len/kind from a {spelling: id} object; n = largest id + 1. */
static int vocab_from_object(spelled *sp, json_t *vocab, const char *field, gb_err *err)
{
	char q1[80];
	const char *key;
	json_t *v;
	json_int_t max = -1;
	json_object_foreach(vocab, key, v) {
		if (!json_is_integer(v))
			return gb_fail(err, "%s: %s: the id of %s is not an integer", sp->file, field,
			               gb_bpe_quote(q1, sizeof q1, key, strlen(key)));
		json_int_t id = json_integer_value(v);
		if (id < 0 || id >= MAX_VOCAB)
			return gb_fail(err, "%s: %s: id %lld of %s is out of range (0..%d)", sp->file,
			               field, (long long)id,
			               gb_bpe_quote(q1, sizeof q1, key, strlen(key)),
			               MAX_VOCAB - 1);
		if (id > max)
			max = id;
	}
	sp->n = (int)(max + 1);
	return 0;
}

static int spelled_alloc(spelled *sp, int n, gb_err *err)
{
	sp->n = n;
	sp->str = calloc((size_t)n + 1, sizeof *sp->str);
	sp->len = calloc((size_t)n + 1, sizeof *sp->len);
	sp->kind = calloc((size_t)n + 1, 1);
	if (!sp->str || !sp->len || !sp->kind)
		return gb_fail(err, "%s: out of memory", sp->file);
	return 0;
}

static int vocab_fill(spelled *sp, json_t *vocab, const char *field, gb_err *err)
{
	char q1[80], q2[80];
	const char *key;
	json_t *v;
	json_object_foreach(vocab, key, v) {
		int id = (int)json_integer_value(v);
		if (sp->str[id])
			return gb_fail(err, "%s: %s: id %d is given to both %s and %s", sp->file, field, id,
			               gb_bpe_quote(q1, sizeof q1, sp->str[id], sp->len[id]),
			               gb_bpe_quote(q2, sizeof q2, key, strlen(key)));
		sp->str[id] = key;
		sp->len[id] = strlen(key);
	}
	return 0;
}

static int check_gaps(const spelled *sp, gb_err *err)
{
	for (int i = 0; i < sp->n; i++)
		if (!sp->str[i])
			return gb_fail(err, "%s: no token has id %d (ids must run from 0 to %d without gaps)",
			               sp->file, i, sp->n - 1);
	return 0;
}

int gb_tok_load_json(const char *path, gb_tokenizer **out, gb_err *err)
{
	char q1[80], q2[80];
	spelled sp = { 0 };
	gb_steps st = { 0 };
	char *src = NULL;
	size_t n_src = 0;
	*out = NULL;
	sp.file = sp.mfile = path;
	json_t *root = load_json_file(path, &src, &n_src, err), *model, *vocab, *merges, *added, *x;
	if (!root)
		return -1;
	int rc = -1;
	if (!json_is_object(root) || !json_is_object(model = json_object_get(root, "model"))) {
		gb_fail(err, "%s: no \"model\" object: not a Hugging Face tokenizer.json", path);
		goto done;
	}
	x = json_object_get(model, "type");
	if (x && (!json_is_string(x) || strcmp(json_string_value(x), "BPE"))) {
		gb_fail(err, "%s: model.type is %s; glassbox reads only BPE", path,
		        json_is_string(x) ? gb_bpe_quote(q1, sizeof q1, json_string_value(x),
		                                         strlen(json_string_value(x))) : "not a string");
		goto done;
	}
	if (gb_bpe_steps_read(root, path, &st, err))
		goto done;
	sp.st = &st;
	if (!json_is_object(vocab = json_object_get(model, "vocab"))) {
		gb_fail(err, "%s: model.vocab is missing or not an object", path);
		goto done;
	}
	merges = json_object_get(model, "merges");
	if (merges && !json_is_array(merges)) {
		gb_fail(err, "%s: model.merges is not an array", path);
		goto done;
	}
	added = json_object_get(root, "added_tokens");
	if (added && !json_is_null(added) && !json_is_array(added)) {
		gb_fail(err, "%s: added_tokens is not an array", path);
		goto done;
	}

	/* ids: model.vocab, then added tokens (which may repeat a vocab entry) */
	if (vocab_from_object(&sp, vocab, "model.vocab", err))
		goto done;
	int n = sp.n;
	size_t i;
	json_array_foreach(added, i, x) {
		json_t *id = json_object_get(x, "id"), *content = json_object_get(x, "content");
		if (!json_is_integer(id) || !json_is_string(content) || !json_string_length(content)) {
			gb_fail(err, "%s: added_tokens[%zu] needs an integer \"id\" and a non-empty "
			        "\"content\"", path, i);
			goto done;
		}
		json_int_t v = json_integer_value(id);
		if (v < 0 || v >= MAX_VOCAB) {
			gb_fail(err, "%s: added_tokens[%zu]: id %lld is out of range (0..%d)", path, i,
			        (long long)v, MAX_VOCAB - 1);
			goto done;
		}
		if (v >= n)
			n = (int)v + 1;
	}
	if (spelled_alloc(&sp, n, err) || vocab_fill(&sp, vocab, "model.vocab", err))
		goto done;
	if (!(sp.add_flags = calloc((size_t)n + 1, 1))) {
		gb_fail(err, "%s: out of memory", path);
		goto done;
	}
	json_array_foreach(added, i, x) {
		int id = (int)json_integer_value(json_object_get(x, "id"));
		const char *key;
		json_t *v;
		json_object_foreach(x, key, v) {
			static const char *const known[] = { "id", "content", "single_word", "lstrip",
				                                 "rstrip", "normalized", "special", NULL };
			int ok = 0;
			for (int k = 0; known[k]; k++)
				ok |= !strcmp(key, known[k]);
			if (!ok || (strcmp(key, "id") && strcmp(key, "content") && !json_is_boolean(v))) {
				gb_fail(err, "%s: added_tokens[%zu]: option \"%s\" is not supported", path, i, key);
				goto done;
			}
		}
		if (json_is_true(json_object_get(x, "single_word"))) {
			gb_fail(err, "%s: added_tokens[%zu]: single_word true is not supported", path, i);
			goto done;
		}
		if (json_is_true(json_object_get(x, "normalized")) && st.n_norm) {
			gb_fail(err, "%s: added_tokens[%zu]: normalized true with a normalizer is not "
			        "supported (glassbox matches added tokens in the text as typed)", path, i);
			goto done;
		}
		sp.add_flags[id] = (json_is_true(json_object_get(x, "lstrip")) ? ADD_LSTRIP : 0) |
		                   (json_is_true(json_object_get(x, "rstrip")) ? ADD_RSTRIP : 0);
		json_t *content = json_object_get(x, "content");
		const char *c = json_string_value(content);
		size_t l = json_string_length(content);
		if (sp.kind[id] != KIND_NORMAL) {
			gb_fail(err, "%s: added_tokens: two tokens have id %d", path, id);
			goto done;
		}
		if (sp.str[id] && (sp.len[id] != l || memcmp(sp.str[id], c, l))) {
			gb_fail(err, "%s: added_tokens[%zu]: id %d is %s there but %s in model.vocab",
			        path, i, id, gb_bpe_quote(q1, sizeof q1, c, l),
			        gb_bpe_quote(q2, sizeof q2, sp.str[id], sp.len[id]));
			goto done;
		}
		sp.str[id] = c;
		sp.len[id] = l;
		sp.kind[id] = json_is_true(json_object_get(x, "special")) ? KIND_SPECIAL : KIND_ADDED;
	}
	if (check_gaps(&sp, err))
		goto done;

	sp.n_merges = (int)json_array_size(merges);
	sp.m_str = malloc(((size_t)sp.n_merges * 2 + 1) * sizeof *sp.m_str);
	sp.m_len = malloc(((size_t)sp.n_merges * 2 + 1) * sizeof *sp.m_len);
	if (!sp.m_str || !sp.m_len) {
		gb_fail(err, "%s: out of memory", path);
		goto done;
	}
	json_array_foreach(merges, i, x) {
		const char *a = NULL, *b = NULL;
		size_t la = 0, lb = 0;
		if (json_is_string(x)) { /* "a b": exactly one space, as Hugging Face splits it */
			const char *s = json_string_value(x), *sp1 = strchr(s, ' ');
			if (sp1 && !strchr(sp1 + 1, ' ') && sp1 > s && sp1[1]) {
				a = s, la = (size_t)(sp1 - s);
				b = sp1 + 1, lb = strlen(b);
			}
		} else if (json_is_array(x) && json_array_size(x) == 2 &&
		           json_is_string(json_array_get(x, 0)) && json_is_string(json_array_get(x, 1))) {
			a = json_string_value(json_array_get(x, 0));
			b = json_string_value(json_array_get(x, 1));
			la = json_string_length(json_array_get(x, 0));
			lb = json_string_length(json_array_get(x, 1));
		}
		if (!a || !la || !lb) {
			gb_fail(err, "%s: model.merges[%zu] is neither \"a b\" nor [\"a\", \"b\"]", path, i);
			goto done;
		}
		sp.m_str[2 * i] = a, sp.m_len[2 * i] = la;
		sp.m_str[2 * i + 1] = b, sp.m_len[2 * i + 1] = lb;
	}
	rc = build_spelled(&sp, out, err);
	if (!rc && (*out)->custom) { /* saved as it came: glassbox could not write its steps */
		(*out)->src = src;
		(*out)->n_src = n_src;
		src = NULL;
	}
done:
	gb_bpe_steps_free(&st);
	spelled_free(&sp);
	json_decref(root);
	free(src);
	return rc;
}

int gb_tok_load_vocab_merges(const char *vocab_path, const char *merges_path,
                             gb_tokenizer **out, gb_err *err)
{
	spelled sp = { 0 };
	char *text = NULL;
	int rc = -1, *lines = NULL;
	size_t n_text;
	*out = NULL;
	sp.file = vocab_path;
	sp.mfile = merges_path;
	json_t *vocab = load_json_file(vocab_path, NULL, NULL, err);
	if (!vocab)
		return -1;
	if (!json_is_object(vocab)) {
		gb_fail(err, "%s: not a JSON object {token: id}", vocab_path);
		goto done;
	}
	if (vocab_from_object(&sp, vocab, "vocab", err) || spelled_alloc(&sp, sp.n, err) ||
	    vocab_fill(&sp, vocab, "vocab", err) || check_gaps(&sp, err))
		goto done;

	if (!(text = gb_read_file(merges_path, MAX_FILE, &n_text, err)))
		goto done;
	if (memchr(text, 0, n_text)) {
		gb_fail(err, "%s: contains a NUL byte: not a merges.txt", merges_path);
		goto done;
	}
	size_t n_lines = 1;
	for (size_t k = 0; k < n_text; k++)
		n_lines += text[k] == '\n';
	sp.m_str = malloc((n_lines * 2 + 1) * sizeof *sp.m_str);
	sp.m_len = malloc((n_lines * 2 + 1) * sizeof *sp.m_len);
	sp.m_line = lines = malloc((n_lines + 1) * sizeof *lines);
	if (!sp.m_str || !sp.m_len || !lines) {
		gb_fail(err, "%s: out of memory", merges_path);
		goto done;
	}
	int line = 0;
	for (char *p = text, *end = text + n_text; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *s1;
		line++;
		if (e > p && e[-1] == '\r')
			e--;
		size_t l = (size_t)(e - p);
		if (line == 1 && l >= 8 && !memcmp(p, "#version", 8)) {
			/* the header GPT-2's files carry */
		} else if (l > 0) {
			s1 = memchr(p, ' ', l);
			if (!s1 || s1 == p || s1 + 1 == e || memchr(s1 + 1, ' ', (size_t)(e - s1 - 1))) {
				gb_fail(err, "%s: line %d: expected two tokens separated by one space",
				        merges_path, line);
				goto done;
			}
			if (sp.n_merges > INT_MAX / 4) {
				gb_fail(err, "%s: too many merges", merges_path);
				goto done;
			}
			int r = sp.n_merges++;
			sp.m_str[2 * r] = p, sp.m_len[2 * r] = (size_t)(s1 - p);
			sp.m_str[2 * r + 1] = s1 + 1, sp.m_len[2 * r + 1] = (size_t)(e - s1 - 1);
			lines[r] = line;
		}
		p = nl ? nl + 1 : end;
	}
	sp.infer_added = 1;
	rc = build_spelled(&sp, out, err);
done:
	spelled_free(&sp);
	free(text);
	json_decref(vocab);
	return rc;
}

int gb_tok_load(const char *dir, gb_tokenizer **out, gb_err *err)
{
	struct stat st;
	*out = NULL;
	if (stat(dir, &st))
		return gb_fail(err, "%s: cannot open (%s)", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gb_tok_load_json(dir, out, err);
	size_t n = strlen(dir) + 32;
	char *tj = malloc(n), *vj = malloc(n), *mt = malloc(n);
	int rc = -1;
	if (!tj || !vj || !mt) {
		gb_fail(err, "out of memory");
		goto done;
	}
	snprintf(tj, n, "%s/tokenizer.json", dir);
	snprintf(vj, n, "%s/vocab.json", dir);
	snprintf(mt, n, "%s/merges.txt", dir);
	int has_v = !stat(vj, &st), has_m = !stat(mt, &st);
	if (!stat(tj, &st))
		rc = gb_tok_load_json(tj, out, err);
	else if (has_v && has_m)
		rc = gb_tok_load_vocab_merges(vj, mt, out, err);
	else if (has_v || has_m)
		gb_fail(err, "%s: has %s but no %s (and no tokenizer.json)", dir,
		        has_v ? "vocab.json" : "merges.txt", has_v ? "merges.txt" : "vocab.json");
	else
		gb_fail(err, "%s: no tokenizer: neither tokenizer.json nor vocab.json + merges.txt", dir);
done:
	free(tj);
	free(vj);
	free(mt);
	return rc;
}

/* ---- writing files ---------------------------------------------------------------------- */

/* The spelling of token id as the files carry it, malloc'd and NUL-terminated. */
static char *spell(const gb_tokenizer *t, int id)
{
	size_t len = t->off[id + 1] - t->off[id];
	char *s = malloc(2 * len + 1);
	if (!s)
		return NULL;
	if (t->kind[id] != KIND_NORMAL) {
		memcpy(s, t->bytes + t->off[id], len);
		s[len] = 0;
	} else {
		s[gb_bpe_bytes_to_hf(t->bytes + t->off[id], len, s)] = 0;
	}
	return s;
}

/* {spelling: id} for every token, or NULL with a message. */
static json_t *vocab_object(const gb_tokenizer *t, char **sp, const char *path, gb_err *err)
{
	json_t *v = json_object();
	if (!v) {
		gb_fail(err, "%s: out of memory", path);
		return NULL;
	}
	for (int i = 0; i < t->n_vocab; i++)
		if (json_object_set_new(v, sp[i], json_integer(i))) {
			gb_fail(err, "%s: cannot store token %d (not valid UTF-8?)", path, i);
			json_decref(v);
			return NULL;
		}
	return v;
}

static char **spell_all(const gb_tokenizer *t, const char *path, gb_err *err)
{
	char **sp = calloc((size_t)t->n_vocab, sizeof *sp);
	for (int i = 0; sp && i < t->n_vocab; i++)
		if (!(sp[i] = spell(t, i))) {
			for (int k = 0; k < i; k++)
				free(sp[k]);
			free(sp);
			sp = NULL;
		}
	if (!sp)
		gb_fail(err, "%s: out of memory", path);
	return sp;
}

static void spell_free(const gb_tokenizer *t, char **sp)
{
	if (!sp)
		return;
	for (int i = 0; i < t->n_vocab; i++)
		free(sp[i]);
	free(sp);
}

static int dump_json(json_t *root, const char *path, gb_err *err)
{
	gb_file w;
	if (gb_file_begin(&w, path, err))
		return -1;
	if (json_dumpf(root, w.f, JSON_INDENT(2)) || fputc('\n', w.f) == EOF) {
		gb_file_abort(&w);
		return gb_fail(err, "%s: write failed (%s)", path, strerror(errno));
	}
	return gb_file_commit(&w, err);
}

/* json_pack would do, but a failed set must not leak: build step by step. */
static json_t *obj(json_t *o, const char *k, json_t *v)
{
	if (o && (!v || json_object_set_new(o, k, v))) {
		json_decref(o);
		return NULL;
	}
	if (!o)
		json_decref(v);
	return o;
}

static json_t *bytelevel(int add_prefix_space)
{
	json_t *o = json_object();
	o = obj(o, "type", json_string("ByteLevel"));
	o = obj(o, "add_prefix_space", json_boolean(add_prefix_space));
	o = obj(o, "trim_offsets", json_true());
	o = obj(o, "use_regex", json_true());
	return o;
}

int gb_tok_save_json(const gb_tokenizer *t, const char *path, gb_err *err)
{
	if (t->custom) { /* steps glassbox reads but does not write: the file it came from */
		gb_file w;
		if (!t->src)
			return gb_fail(err, "%s: this tokenizer's steps cannot be written", path);
		if (gb_file_begin(&w, path, err))
			return -1;
		if (fwrite(t->src, 1, t->n_src, w.f) != t->n_src) {
			gb_file_abort(&w);
			return gb_fail(err, "%s: write failed (%s)", path, strerror(errno));
		}
		return gb_file_commit(&w, err);
	}
	char **sp = spell_all(t, path, err);
	if (!sp)
		return -1;
	int rc = -1, pairs = 0;
	json_t *root = NULL, *added = json_array(), *merges = json_array(), *vocab;
	if (!(vocab = vocab_object(t, sp, path, err)))
		goto done;
	for (int r = 0; r < t->n_merges; r++)
		for (int k = 0; k < 2; k++)
			if (strchr(sp[t->merges[3 * r + k]], ' '))
				pairs = 1; /* a piece with a space: only the pair form can say it */
	for (int r = 0; r < t->n_merges && merges; r++) {
		const char *a = sp[t->merges[3 * r]], *b = sp[t->merges[3 * r + 1]];
		json_t *m;
		if (pairs) {
			m = json_array();
			if (m && (json_array_append_new(m, json_string(a)) ||
			          json_array_append_new(m, json_string(b)))) {
				json_decref(m);
				m = NULL;
			}
		} else {
			size_t la = strlen(a), lb = strlen(b);
			char *s = malloc(la + lb + 2);
			m = NULL;
			if (s) {
				memcpy(s, a, la);
				s[la] = ' ';
				memcpy(s + la + 1, b, lb + 1);
				m = json_string(s);
				free(s);
			}
		}
		if (!m || json_array_append_new(merges, m)) {
			json_decref(merges);
			merges = NULL;
		}
	}
	for (int i = 0; i < t->n_vocab && added; i++) {
		if (t->kind[i] == KIND_NORMAL)
			continue;
		json_t *a = json_object();
		a = obj(a, "id", json_integer(i));
		a = obj(a, "content", json_string(sp[i]));
		a = obj(a, "single_word", json_false());
		a = obj(a, "lstrip", json_false());
		a = obj(a, "rstrip", json_false());
		a = obj(a, "normalized", json_false());
		a = obj(a, "special", json_boolean(t->kind[i] == KIND_SPECIAL));
		if (!a || json_array_append_new(added, a)) {
			json_decref(added);
			added = NULL;
		}
	}
	json_t *model = json_object();
	model = obj(model, "type", json_string("BPE"));
	model = obj(model, "dropout", json_null());
	model = obj(model, "unk_token", json_null());
	model = obj(model, "continuing_subword_prefix", json_null());
	model = obj(model, "end_of_word_suffix", json_null());
	model = obj(model, "fuse_unk", json_false());
	model = obj(model, "byte_fallback", json_false());
	model = obj(model, "vocab", vocab);
	model = obj(model, "merges", merges);
	vocab = merges = NULL;
	root = json_object();
	root = obj(root, "version", json_string("1.0"));
	root = obj(root, "truncation", json_null());
	root = obj(root, "padding", json_null());
	root = obj(root, "added_tokens", added);
	root = obj(root, "normalizer", json_null());
	root = obj(root, "pre_tokenizer", bytelevel(0));
	root = obj(root, "post_processor", json_null());
	root = obj(root, "decoder", bytelevel(1));
	root = obj(root, "model", model);
	added = NULL;
	if (!root) {
		gb_fail(err, "%s: out of memory (or a token that is not valid UTF-8)", path);
		goto done;
	}
	rc = dump_json(root, path, err);
done:
	json_decref(root);
	json_decref(vocab);
	json_decref(merges);
	json_decref(added);
	spell_free(t, sp);
	return rc;
}

int gb_tok_save_vocab_merges(const gb_tokenizer *t, const char *vocab_path,
                             const char *merges_path, gb_err *err)
{
	if (t->custom)
		return gb_fail(err, "%s: vocab.json + merges.txt cannot hold this tokenizer's steps (%s); "
		               "write tokenizer.json instead", vocab_path, t->desc);
	char **sp = spell_all(t, vocab_path, err);
	if (!sp)
		return -1;
	int rc = -1;
	json_t *vocab = NULL;
	gb_file w;
	for (int r = 0; r < t->n_merges; r++)
		for (int k = 0; k < 2; k++)
			if (strchr(sp[t->merges[3 * r + k]], ' ') || strchr(sp[t->merges[3 * r + k]], '\n')) {
				gb_fail(err, "%s: merge %d has a piece with a space or newline, which "
				        "merges.txt cannot hold; write tokenizer.json instead", merges_path, r);
				goto done;
			}
	if (!(vocab = vocab_object(t, sp, vocab_path, err)) || dump_json(vocab, vocab_path, err))
		goto done;
	if (gb_file_begin(&w, merges_path, err))
		goto done;
	fputs("#version: 0.2\n", w.f);
	for (int r = 0; r < t->n_merges; r++)
		fprintf(w.f, "%s %s\n", sp[t->merges[3 * r]], sp[t->merges[3 * r + 1]]);
	rc = gb_file_commit(&w, err);
done:
	json_decref(vocab);
	spell_free(t, sp);
	return rc;
}
