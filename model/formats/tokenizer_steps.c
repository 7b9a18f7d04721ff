/* tokenizer_steps.c — the steps of a Hugging Face tokenizer.json around its vocabulary
 * (normalizer, pre_tokenizer, model options, decoder, post_processor), read into a gb_steps
 * (model/tokenizer/tokenizer_impl.h) for model/formats/tokenizer_json.c. Every type and every
 * option is checked against what glassbox implements: anything else is a one-line error that
 * names it ("tokenizer.json: pre_tokenizer Whitespace is not supported"), never skipped,
 * because a step left out gives other tokens without a word. */
#include "model/tokenizer/tokenizer_impl.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <utf8proc.h>

typedef struct rd {
	const char *path;
	gb_steps *st;
	gb_err *err;
	size_t cap_norm, cap_pre, cap_tmpl;
	int n_bytelevel_pre, n_bytelevel_dec, saw_fuse;
	int depth; /* Sequences inside Sequences */
} rd;

/* A Sequence may hold Sequences; real files nest one or two. The JSON parser stops at 2048
 * levels, but a step nested that deep is no tokenizer anyone wrote. */
#define MAX_SEQUENCE_DEPTH 16

static int deeper(rd *r, const char *what)
{
	if (++r->depth <= MAX_SEQUENCE_DEPTH)
		return 0;
	return gb_fail(r->err, "%s: %s Sequence nested too deeply (more than %d levels)", r->path, what,
	               MAX_SEQUENCE_DEPTH);
}

static void desc(rd *r, const char *fmt, ...)
{
	size_t n = strlen(r->st->desc);
	va_list ap;
	if (n + 1 >= sizeof r->st->desc)
		return;
	va_start(ap, fmt);
	vsnprintf(r->st->desc + n, sizeof r->st->desc - n, fmt, ap);
	va_end(ap);
}

/* Refuses any key of obj outside allowed (NULL-terminated; "type" is always allowed). */
static int check_keys(rd *r, json_t *obj, const char *what, const char *type,
                      const char *const *allowed)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		int ok = !strcmp(k, "type");
		for (int i = 0; !ok && allowed[i]; i++)
			ok = !strcmp(k, allowed[i]);
		if (!ok)
			return gb_fail(r->err, "%s: %s %s: option \"%s\" is not supported", r->path, what,
			               type, k);
	}
	return 0;
}

/* A string option, NULL when absent, not a string, or holding a NUL (it would be cut). */
static const char *str_of(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	const char *s = json_string_value(v);
	return s && strlen(s) == json_string_length(v) ? s : NULL;
}

/* The list of a Sequence step: an array, or -1 with a message. */
static int list_of(rd *r, json_t *n, const char *k, const char *what, json_t **list)
{
	*list = json_object_get(n, k);
	if (!json_is_array(*list))
		return gb_fail(r->err, "%s: %s Sequence: \"%s\" is not a list", r->path, what, k);
	return 0;
}

/* A boolean option: absent gives def; anything but a boolean is an error (-1). */
static int bool_of(rd *r, json_t *o, const char *k, int def, const char *what)
{
	json_t *v = json_object_get(o, k);
	if (!v || json_is_null(v))
		return def;
	if (!json_is_boolean(v))
		return gb_fail(r->err, "%s: %s: \"%s\" is not true or false", r->path, what, k);
	return json_is_true(v);
}

/* A {"String": s} or {"Regex": s} pattern: s, with *is_regex set; NULL when malformed. */
static const char *pattern_of(json_t *o, int *is_regex)
{
	json_t *p = json_object_get(o, "pattern");
	const char *s;
	if ((s = str_of(p, "String"))) {
		*is_regex = 0;
		return s;
	}
	*is_regex = 1;
	return str_of(p, "Regex");
}

static char *dup(const char *s) { return s ? strdup(s) : NULL; }

static int add_norm(rd *r, gb_norm g)
{
	gb_steps *st = r->st;
	if ((g.a == NULL) || GROW(st->norm, r->cap_norm, (size_t)st->n_norm + 1)) {
		free(g.a), free(g.b);
		return gb_fail(r->err, "%s: out of memory", r->path);
	}
	g.la = strlen(g.a);
	g.lb = g.b ? strlen(g.b) : 0;
	st->norm[st->n_norm++] = g;
	return 0;
}

static int normalizer(rd *r, json_t *n)
{
	if (!n || json_is_null(n))
		return 0;
	const char *type = str_of(n, "type");
	if (!type)
		return gb_fail(r->err, "%s: normalizer has no \"type\"", r->path);
	if (!strcmp(type, "Sequence")) {
		json_t *list, *x;
		size_t i;
		if (check_keys(r, n, "normalizer", type, (const char *[]){ "normalizers", NULL }) ||
		    list_of(r, n, "normalizers", "normalizer", &list))
			return -1;
		if (deeper(r, "normalizer"))
			return -1;
		json_array_foreach(list, i, x)
			if (normalizer(r, x))
				return -1;
		r->depth--;
		return 0;
	}
	if (!strcmp(type, "Prepend")) {
		const char *p = str_of(n, "prepend");
		if (check_keys(r, n, "normalizer", type, (const char *[]){ "prepend", NULL }))
			return -1;
		if (!p || !p[0])
			return gb_fail(r->err, "%s: normalizer Prepend needs a \"prepend\" text", r->path);
		desc(r, "%sPrepend(\"%s\")", r->st->n_norm ? ", " : "", p);
		return add_norm(r, (gb_norm){ NORM_PREPEND, dup(p), NULL, 0, 0, 0 });
	}
	if (!strcmp(type, "Replace")) {
		int re;
		const char *p = pattern_of(n, &re), *c = str_of(n, "content");
		if (check_keys(r, n, "normalizer", type, (const char *[]){ "pattern", "content", NULL }))
			return -1;
		if (p && re)
			return gb_fail(r->err, "%s: normalizer Replace with a Regex pattern is not supported "
			               "(only String)", r->path);
		if (!p || !p[0] || !c)
			return gb_fail(r->err, "%s: normalizer Replace needs a String pattern and a content",
			               r->path);
		desc(r, "%sReplace(\"%s\" -> \"%s\")", r->st->n_norm ? ", " : "", p, c);
		return add_norm(r, (gb_norm){ NORM_REPLACE, dup(p), dup(c), 0, 0, 0 });
	}
	/* The Unicode normal forms, as utf8proc computes them (composition keeps a stable result
	 * across Unicode versions; the K forms also fold compatibility characters: ﬁ to fi). */
	static const char *const forms[] = { "NFC", "NFD", "NFKC", "NFKD" };
	static const int form_opts[] = {
		UTF8PROC_STABLE | UTF8PROC_COMPOSE, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE,
		UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT,
		UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT,
	};
	for (int i = 0; i < 4; i++)
		if (!strcmp(type, forms[i])) {
			if (check_keys(r, n, "normalizer", type, (const char *[]){ NULL }))
				return -1;
			desc(r, "%s%s", r->st->n_norm ? ", " : "", type);
			return add_norm(r, (gb_norm){ NORM_UNICODE, dup(type), NULL, 0, 0, form_opts[i] });
		}
	return gb_fail(r->err, "%s: normalizer %s is not supported", r->path, type);
}

static const char *const beh_names[] = { "Isolated", "Removed", "MergedWithPrevious",
	                                     "MergedWithNext", "Contiguous" };

static int add_pre(rd *r, gb_pre p)
{
	gb_steps *st = r->st;
	if (GROW(st->pre, r->cap_pre, (size_t)st->n_pre + 1)) {
		gb_bpe_pre_free(&p);
		return gb_fail(r->err, "%s: out of memory", r->path);
	}
	st->pre[st->n_pre++] = p;
	return 0;
}

static int pre_tokenizer(rd *r, json_t *n, int top)
{
	gb_err e2;
	if (!n || json_is_null(n))
		return 0;
	const char *type = str_of(n, "type");
	if (!type)
		return gb_fail(r->err, "%s: pre_tokenizer has no \"type\"", r->path);
	const char *sep = r->st->n_pre ? ", " : "";
	if (!strcmp(type, "Sequence")) {
		json_t *list, *x;
		size_t i;
		if (check_keys(r, n, "pre_tokenizer", type, (const char *[]){ "pretokenizers", NULL }) ||
		    list_of(r, n, "pretokenizers", "pre_tokenizer", &list))
			return -1;
		if (deeper(r, "pre_tokenizer"))
			return -1;
		json_array_foreach(list, i, x)
			if (pre_tokenizer(r, x, top && i == 0))
				return -1;
		r->depth--;
		return 0;
	}
	if (!strcmp(type, "ByteLevel")) {
		int aps = bool_of(r, n, "add_prefix_space", 0, "pre_tokenizer ByteLevel"),
		    ur = bool_of(r, n, "use_regex", 1, "pre_tokenizer ByteLevel");
		if (check_keys(r, n, "pre_tokenizer", type,
		               (const char *[]){ "add_prefix_space", "trim_offsets", "use_regex", NULL }) ||
		    aps < 0 || ur < 0)
			return -1;
		if (aps)
			return gb_fail(r->err, "%s: pre_tokenizer ByteLevel with add_prefix_space true is not "
			               "supported", r->path);
		r->n_bytelevel_pre++;
		desc(r, "%sByteLevel(%s)", sep, ur ? "GPT-2's pattern, bytes as characters" : "bytes as characters");
		return add_pre(r, (gb_pre){ .type = PRE_BYTELEVEL, .use_regex = ur });
	}
	if (!strcmp(type, "Split")) {
		int re, inv = bool_of(r, n, "invert", 0, "pre_tokenizer Split"), beh = -1;
		const char *p = pattern_of(n, &re), *b = str_of(n, "behavior");
		if (check_keys(r, n, "pre_tokenizer", type,
		               (const char *[]){ "pattern", "behavior", "invert", NULL }) || inv < 0)
			return -1;
		if (!p)
			return gb_fail(r->err, "%s: pre_tokenizer Split needs a String or Regex pattern",
			               r->path);
		for (int k = 0; b && k < 5; k++)
			if (!strcmp(b, beh_names[k]))
				beh = k;
		if (beh < 0)
			return gb_fail(r->err, "%s: pre_tokenizer Split: behavior %s is not supported", r->path,
			               b ? b : "(missing)");
		gb_pre g = { .type = PRE_SPLIT, .behavior = beh, .invert = inv, .pattern = dup(p) };
		if (gb_bpe_pre_compile(&g, p, !re, &e2)) {
			free(g.pattern);
			return gb_fail(r->err, "%s: pre_tokenizer Split: the pattern does not compile: %s",
			               r->path, e2.msg);
		}
		desc(r, "%sSplit(%s%s%s, %s%s)", sep, re ? "/" : "\"", p, re ? "/" : "\"", b,
		     inv ? ", inverted" : "");
		return add_pre(r, g);
	}
	if (!strcmp(type, "Digits")) {
		int ind = bool_of(r, n, "individual_digits", 0, "pre_tokenizer Digits");
		if (check_keys(r, n, "pre_tokenizer", type, (const char *[]){ "individual_digits", NULL }) ||
		    ind < 0)
			return -1;
		gb_pre g = { .type = PRE_DIGITS, .individual = ind };
		if (gb_bpe_pre_compile(&g, ind ? "\\p{N}" : "\\p{N}+", 0, &e2))
			return gb_fail(r->err, "%s: %s", r->path, e2.msg);
		desc(r, "%sDigits(%s)", sep, ind ? "each digit alone" : "runs of digits");
		return add_pre(r, g);
	}
	if (!strcmp(type, "Metaspace")) {
		const char *rep = str_of(n, "replacement"), *ps = str_of(n, "prepend_scheme");
		int aps = bool_of(r, n, "add_prefix_space", 1, "pre_tokenizer Metaspace"),
		    sp = bool_of(r, n, "split", 1, "pre_tokenizer Metaspace"), scheme = aps > 0;
		if (check_keys(r, n, "pre_tokenizer", type,
		               (const char *[]){ "replacement", "prepend_scheme", "add_prefix_space",
		                                 "split", "str_rep", NULL }) || aps < 0 || sp < 0)
			return -1;
		if (sp)
			return gb_fail(r->err, "%s: pre_tokenizer Metaspace with split true is not supported",
			               r->path);
		if (!top || r->st->n_pre)
			return gb_fail(r->err, "%s: pre_tokenizer Metaspace after another pre-tokenizer is "
			               "not supported", r->path);
		if (ps && !strcmp(ps, "always"))
			scheme = 1;
		else if (ps && !strcmp(ps, "first"))
			scheme = 2;
		else if (ps && !strcmp(ps, "never"))
			scheme = 0;
		else if (ps)
			return gb_fail(r->err, "%s: pre_tokenizer Metaspace: prepend_scheme %s is not "
			               "supported", r->path, ps);
		if (!rep || !rep[0])
			return gb_fail(r->err, "%s: pre_tokenizer Metaspace needs a replacement", r->path);
		desc(r, "%sMetaspace(\" \" -> \"%s\", prepend %s)", sep, rep,
		     scheme == 1 ? "always" : scheme == 2 ? "first" : "never");
		return add_norm(r, (gb_norm){ NORM_METASPACE, dup(rep), NULL, 0, 0, scheme });
	}
	return gb_fail(r->err, "%s: pre_tokenizer %s is not supported", r->path, type);
}

static int decoder(rd *r, json_t *n)
{
	gb_steps *st = r->st;
	if (!n || json_is_null(n))
		return 0;
	const char *type = str_of(n, "type");
	if (!type)
		return gb_fail(r->err, "%s: decoder has no \"type\"", r->path);
	const char *sep = r->n_bytelevel_dec + st->n_dec_rep + st->dec_bytes + r->saw_fuse ? ", " : "";
	if (!strcmp(type, "Sequence")) {
		json_t *list, *x;
		size_t i;
		if (check_keys(r, n, "decoder", type, (const char *[]){ "decoders", NULL }) ||
		    list_of(r, n, "decoders", "decoder", &list))
			return -1;
		if (deeper(r, "decoder"))
			return -1;
		json_array_foreach(list, i, x)
			if (decoder(r, x))
				return -1;
		r->depth--;
		return 0;
	}
	if (!strcmp(type, "ByteLevel")) {
		if (check_keys(r, n, "decoder", type,
		               (const char *[]){ "add_prefix_space", "trim_offsets", "use_regex", NULL }))
			return -1;
		r->n_bytelevel_dec++;
		desc(r, "%sByteLevel", sep);
		return 0;
	}
	if (!strcmp(type, "Replace")) {
		int re;
		const char *p = pattern_of(n, &re), *c = str_of(n, "content");
		if (check_keys(r, n, "decoder", type, (const char *[]){ "pattern", "content", NULL }))
			return -1;
		if (!p || re || !p[0] || !c)
			return gb_fail(r->err, "%s: decoder Replace: only a String pattern with a content "
			               "is supported", r->path);
		if (st->dec_bytes || r->saw_fuse || st->dec_strip || st->n_dec_rep == 4)
			return gb_fail(r->err, "%s: decoder Replace after ByteFallback, Fuse or Strip is not "
			               "supported", r->path);
		st->dec_rep[st->n_dec_rep].from = p;
		st->dec_rep[st->n_dec_rep++].to = c;
		desc(r, "%sReplace(\"%s\" -> \"%s\")", sep, p, c);
		return 0;
	}
	if (!strcmp(type, "ByteFallback")) {
		if (check_keys(r, n, "decoder", type, (const char *[]){ NULL }))
			return -1;
		st->dec_bytes = 1;
		desc(r, "%sByteFallback", sep);
		return 0;
	}
	if (!strcmp(type, "Fuse")) {
		if (check_keys(r, n, "decoder", type, (const char *[]){ NULL }))
			return -1;
		r->saw_fuse = 1;
		desc(r, "%sFuse", sep);
		return 0;
	}
	if (!strcmp(type, "Strip")) {
		const char *c = str_of(n, "content");
		json_t *ja = json_object_get(n, "start"), *jb = json_object_get(n, "stop");
		json_int_t a = json_integer_value(ja), b = json_integer_value(jb);
		if (check_keys(r, n, "decoder", type, (const char *[]){ "content", "start", "stop", NULL }))
			return -1;
		if (!c || strcmp(c, " ") || !json_is_integer(ja) || !json_is_integer(jb) || b != 0 ||
		    a < 0 || a > 64 || !r->saw_fuse)
			return gb_fail(r->err, "%s: decoder Strip is supported only as Strip(\" \", start N, "
			               "stop 0) after Fuse", r->path);
		st->dec_strip = (int)a;
		desc(r, "%sStrip(%d leading space%s)", sep, (int)a, a == 1 ? "" : "s");
		return 0;
	}
	if (!strcmp(type, "Metaspace")) {
		const char *rep = str_of(n, "replacement"), *ps = str_of(n, "prepend_scheme");
		int aps = bool_of(r, n, "add_prefix_space", 1, "decoder Metaspace");
		if (check_keys(r, n, "decoder", type,
		               (const char *[]){ "replacement", "prepend_scheme", "add_prefix_space",
		                                 "split", "str_rep", NULL }) || aps < 0)
			return -1;
		if (!rep || !rep[0] || st->n_dec_rep == 4)
			return gb_fail(r->err, "%s: decoder Metaspace needs a replacement", r->path);
		st->dec_rep[st->n_dec_rep].from = rep;
		st->dec_rep[st->n_dec_rep++].to = " ";
		st->dec_strip = ps ? strcmp(ps, "never") != 0 : aps;
		desc(r, "%sMetaspace(\"%s\" -> \" \")", sep, rep);
		return 0;
	}
	return gb_fail(r->err, "%s: decoder %s is not supported", r->path, type);
}

/* special_tokens[name].ids of a TemplateProcessing, appended to st->tmpl. */
static int tmpl_token(rd *r, json_t *specials, const char *name, int after)
{
	json_t *ids = json_object_get(json_object_get(specials, name), "ids"), *x;
	size_t i;
	if (!json_is_array(ids) || !json_array_size(ids))
		return gb_fail(r->err, "%s: post_processor TemplateProcessing: special token %s has no ids",
		               r->path, name);
	json_array_foreach(ids, i, x) {
		json_int_t v = json_integer_value(x);
		if (!json_is_integer(x) || v < 0 || v >= MAX_VOCAB)
			return gb_fail(r->err, "%s: post_processor TemplateProcessing: %s has a bad id",
			               r->path, name);
		if (GROW(r->st->tmpl, r->cap_tmpl, (size_t)(r->st->n_tmpl_pre + r->st->n_tmpl_post) + 1))
			return gb_fail(r->err, "%s: out of memory", r->path);
		r->st->tmpl[r->st->n_tmpl_pre + r->st->n_tmpl_post] = (int)v;
		if (after)
			r->st->n_tmpl_post++;
		else
			r->st->n_tmpl_pre++;
	}
	return 0;
}

static int post_processor(rd *r, json_t *n)
{
	if (!n || json_is_null(n))
		return 0;
	const char *type = str_of(n, "type");
	if (!type)
		return gb_fail(r->err, "%s: post_processor has no \"type\"", r->path);
	if (!strcmp(type, "Sequence")) {
		json_t *list, *x;
		size_t i;
		if (check_keys(r, n, "post_processor", type, (const char *[]){ "processors", NULL }) ||
		    list_of(r, n, "processors", "post_processor", &list))
			return -1;
		if (deeper(r, "post_processor"))
			return -1;
		json_array_foreach(list, i, x)
			if (post_processor(r, x))
				return -1;
		r->depth--;
		return 0;
	}
	if (!strcmp(type, "ByteLevel")) /* offsets only: the ids are untouched */
		return check_keys(r, n, "post_processor", type,
		                  (const char *[]){ "add_prefix_space", "trim_offsets", "use_regex", NULL });
	if (!strcmp(type, "TemplateProcessing")) {
		json_t *single = json_object_get(n, "single"), *specials = json_object_get(n, "special_tokens"), *x;
		size_t i;
		int seen_a = 0;
		if (check_keys(r, n, "post_processor", type,
		               (const char *[]){ "single", "pair", "special_tokens", NULL }))
			return -1;
		if (r->st->tmpl)
			return gb_fail(r->err, "%s: two TemplateProcessing post-processors", r->path);
		desc(r, "; post-processor: ");
		json_array_foreach(single, i, x) {
			const char *name = str_of(json_object_get(x, "SpecialToken"), "id");
			json_t *seq = json_object_get(x, "Sequence");
			if (seq && !seen_a && !strcmp(str_of(seq, "id") ? str_of(seq, "id") : "", "A")) {
				seen_a = 1;
				desc(r, "%s$A", i ? " " : "");
				continue;
			}
			if (!name)
				return gb_fail(r->err, "%s: post_processor TemplateProcessing: single[%zu] is "
				               "neither a SpecialToken nor the sequence $A", r->path, i);
			if (tmpl_token(r, specials, name, seen_a))
				return -1;
			desc(r, "%s%s", i ? " " : "", name);
		}
		if (!seen_a)
			return gb_fail(r->err, "%s: post_processor TemplateProcessing: single has no $A",
			               r->path);
		return 0;
	}
	return gb_fail(r->err, "%s: post_processor %s is not supported", r->path, type);
}

static int model_options(rd *r, json_t *m)
{
	gb_steps *st = r->st;
	json_t *d = json_object_get(m, "dropout");
	const char *k2[] = { "continuing_subword_prefix", "end_of_word_suffix" };
	if (check_keys(r, m, "model", "BPE",
	               (const char *[]){ "dropout", "unk_token", "continuing_subword_prefix",
	                                 "end_of_word_suffix", "fuse_unk", "byte_fallback",
	                                 "ignore_merges", "vocab", "merges", NULL }))
		return -1;
	if (d && !json_is_null(d) && !(json_is_number(d) && json_number_value(d) == 0))
		return gb_fail(r->err, "%s: model.dropout is not supported (BPE dropout is random)", r->path);
	for (int k = 0; k < 2; k++) {
		const char *v = str_of(m, k2[k]);
		if (v && v[0])
			return gb_fail(r->err, "%s: model.%s \"%s\" is not supported", r->path, k2[k], v);
	}
	if ((st->fuse_unk = bool_of(r, m, "fuse_unk", 0, "model")) < 0 ||
	    (st->byte_fallback = bool_of(r, m, "byte_fallback", 0, "model")) < 0 ||
	    (st->ignore_merges = bool_of(r, m, "ignore_merges", 0, "model")) < 0)
		return -1;
	st->unk = str_of(m, "unk_token");
	return 0;
}

int gb_bpe_steps_read(json_t *root, const char *path, gb_steps *st, gb_err *err)
{
	rd r = { path, st, err, 0, 0, 0, 0, 0, 0, 0 };
	const char *k;
	json_t *v;
	memset(st, 0, sizeof *st);
	json_object_foreach(root, k, v) {
		static const char *const known[] = { "version", "truncation", "padding", "added_tokens",
			                                 "normalizer", "pre_tokenizer", "model", "decoder",
			                                 "post_processor", NULL };
		int ok = 0;
		for (int i = 0; known[i]; i++)
			ok |= !strcmp(k, known[i]);
		if (!ok)
			return gb_fail(err, "%s: \"%s\" is not supported", path, k);
		if ((!strcmp(k, "truncation") || !strcmp(k, "padding")) && !json_is_null(v))
			return gb_fail(err, "%s: %s is set; glassbox does not truncate or pad (set it to null)",
			               path, k);
	}
	desc(&r, "normalizer: ");
	size_t at = strlen(st->desc);
	if (normalizer(&r, json_object_get(root, "normalizer")))
		goto fail;
	if (strlen(st->desc) == at)
		desc(&r, "none");
	desc(&r, "; pre-tokenizer: ");
	at = strlen(st->desc);
	if (pre_tokenizer(&r, json_object_get(root, "pre_tokenizer"), 1))
		goto fail;
	if (strlen(st->desc) == at)
		desc(&r, "none (the whole text is one piece)");
	if (model_options(&r, json_object_get(root, "model")))
		goto fail;
	desc(&r, "; decoder: ");
	at = strlen(st->desc);
	if (decoder(&r, json_object_get(root, "decoder")))
		goto fail;
	if (strlen(st->desc) == at)
		desc(&r, "none");
	st->charlevel = !r.n_bytelevel_pre && !r.n_bytelevel_dec;
	if (!st->charlevel && (st->n_dec_rep || st->dec_bytes || st->dec_strip || st->byte_fallback)) {
		gb_fail(err, "%s: a byte-level vocabulary with %s is not supported", path,
		        st->byte_fallback ? "model.byte_fallback" : "decoder steps other than ByteLevel");
		goto fail;
	}
	if (!st->charlevel && !r.n_bytelevel_dec) {
		gb_fail(err, "%s: ByteLevel pre_tokenizer without a ByteLevel decoder is not supported", path);
		goto fail;
	}
	if (post_processor(&r, json_object_get(root, "post_processor")))
		goto fail;
	char tail[200];
	snprintf(tail, sizeof tail, "; model: BPE on %s%s%s%s", st->charlevel ? "characters" : "bytes",
	         st->byte_fallback ? ", byte fallback <0xNN>" : "",
	         st->ignore_merges ? ", a piece in the vocabulary is taken whole" : "",
	         st->unk ? ", unknown characters -> unk" : "");
	desc(&r, "%s", tail);
	st->plain = !st->charlevel && !st->n_norm && st->n_pre == 1 &&
	            st->pre[0].type == PRE_BYTELEVEL && st->pre[0].use_regex && !st->ignore_merges &&
	            !st->tmpl;
	return 0;
fail:
	gb_bpe_steps_free(st);
	return -1;
}

void gb_bpe_steps_free(gb_steps *st)
{
	for (int i = 0; i < st->n_norm; i++)
		free(st->norm[i].a), free(st->norm[i].b);
	free(st->norm);
	for (int i = 0; i < st->n_pre; i++)
		gb_bpe_pre_free(&st->pre[i]);
	free(st->pre);
	free(st->tmpl);
	memset(st, 0, sizeof *st);
}

/* ---- token bytes ------------------------------------------------------------------------ */

/* A SentencePiece-style token's bytes as the decoder makes them: <0xNN> is the byte NN under
 * ByteFallback, else the spelling with the decoder's Replace steps ("▁" -> " "). malloc'd. */
unsigned char *gb_bpe_charlevel_bytes(const gb_steps *st, const char *s, size_t l, size_t *n)
{
	unsigned hi, lo;
	static const char hex[] = "0123456789ABCDEF";
	if (st->dec_bytes && l == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' &&
	    strchr(hex, s[3]) && strchr(hex, s[4]) && s[3] && s[4]) {
		unsigned char *b = malloc(1);
		hi = (unsigned)(strchr(hex, s[3]) - hex), lo = (unsigned)(strchr(hex, s[4]) - hex);
		if (b)
			b[0] = (unsigned char)(hi << 4 | lo), *n = 1;
		return b;
	}
	unsigned char *cur = malloc(l + 1);
	size_t nc = l;
	if (!cur)
		return NULL;
	memcpy(cur, s, l);
	for (int k = 0; k < st->n_dec_rep; k++) {
		const char *a = st->dec_rep[k].from, *b = st->dec_rep[k].to;
		size_t la = strlen(a), lb = strlen(b), m = 0;
		unsigned char *nx = malloc(nc * (lb > la ? lb : 1) + 1);
		if (!nx) {
			free(cur);
			return NULL;
		}
		for (size_t i = 0; i < nc;) {
			if (i + la <= nc && !memcmp(cur + i, a, la)) {
				memcpy(nx + m, b, lb);
				m += lb, i += la;
			} else {
				nx[m++] = cur[i++];
			}
		}
		free(cur);
		cur = nx, nc = m;
	}
	*n = nc;
	return cur;
}

/* ---- onto a tokenizer ------------------------------------------------------------------ */

/* The steps and the lookups they need, onto a freshly built tokenizer (tokenizer_json.c).
 * str/len: every id's spelling; ids maps every spelling to its id. */
int gb_bpe_steps_attach(gb_tokenizer *t, const char *file, const char *const *str, const size_t *len,
                        unsigned char **add_flags, gb_steps *st, const smap *ids, gb_err *err)
{
	char q[40];
	int fresh;
	t->add_flags = *add_flags;
	*add_flags = NULL;
	t->hf_order = 1;
	t->custom = !st->plain;
	t->norm = st->norm, t->n_norm = st->n_norm;
	t->pre = st->pre, t->n_pre = st->n_pre;
	t->tmpl = st->tmpl, t->n_tmpl_pre = st->n_tmpl_pre, t->n_tmpl_post = st->n_tmpl_post;
	st->norm = NULL, st->pre = NULL, st->tmpl = NULL;
	st->n_norm = st->n_pre = 0;
	if (!t->pre && !st->plain) { /* pre_tokenizer null: one piece (not GPT-2's default) */
		t->pre = calloc(1, sizeof *t->pre);
		if (!t->pre)
			return gb_fail(err, "%s: out of memory", file);
	}
	t->byte_fallback = st->byte_fallback;
	t->fuse_unk = st->fuse_unk;
	t->ignore_merges = st->ignore_merges;
	t->dec_strip = st->dec_strip;
	snprintf(t->desc, sizeof t->desc, "%s", st->desc);
	for (int k = 0; k < t->n_tmpl_pre + t->n_tmpl_post; k++)
		if (t->tmpl[k] >= t->n_vocab)
			return gb_fail(err, "%s: post_processor names id %d, outside the vocabulary",
			               file, t->tmpl[k]);
	if (st->unk && (t->unk_id = gb_bpe_smap_get(ids, st->unk, strlen(st->unk))) < 0)
		return gb_fail(err, "%s: model.unk_token %s is not in the vocabulary", file,
		               gb_bpe_quote(q, sizeof q, st->unk, strlen(st->unk)));
	if (!t->charlevel && !t->ignore_merges)
		return 0;
	/* lookups by spelling: characters (charlevel) or whole pieces (ignore_merges) */
	if (!(t->by_spell = calloc(1, sizeof *t->by_spell)) ||
	    gb_bpe_smap_init(t->by_spell, (size_t)t->n_vocab))
		return gb_fail(err, "%s: out of memory", file);
	if (t->charlevel) {
		size_t total = 0;
		for (int i = 0; i < t->n_vocab; i++)
			total += len[i];
		if (!(t->spell = malloc(total + 1)) ||
		    !(t->spell_off = malloc(((size_t)t->n_vocab + 1) * sizeof *t->spell_off)))
			return gb_fail(err, "%s: out of memory", file);
		t->spell_off[0] = 0;
		for (int i = 0; i < t->n_vocab; i++) {
			memcpy(t->spell + t->spell_off[i], str[i], len[i]);
			t->spell_off[i + 1] = t->spell_off[i] + len[i];
		}
	}
	for (int i = 0; i < t->n_vocab; i++) {
		if (t->kind[i] != KIND_NORMAL)
			continue;
		const unsigned char *k = t->charlevel ? t->spell + t->spell_off[i] : t->bytes + t->off[i];
		size_t l = t->charlevel ? t->spell_off[i + 1] - t->spell_off[i] : t->off[i + 1] - t->off[i];
		sent *e = gb_bpe_smap_add(t->by_spell, k, l, 0, &fresh);
		if (!e)
			return gb_fail(err, "%s: out of memory", file);
		if (fresh)
			e->val = i;
	}
	for (int b = 0; b < 256 && t->byte_fallback; b++) {
		char name[8];
		snprintf(name, sizeof name, "<0x%02X>", b);
		if ((t->fb_id[b] = gb_bpe_smap_get(ids, name, 6)) < 0)
			return gb_fail(err, "%s: model.byte_fallback is true but %s is not in the vocabulary",
			               file, name);
	}
	return 0;
}
