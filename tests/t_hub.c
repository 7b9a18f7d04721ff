/* t_hub.c — checkpoints as the Hugging Face hub ships them: name prefixes ("transformer.",
 * "model."), the buffers saved beside the weights (GPT-2's attn.bias / attn.masked_bias,
 * RoPE's inv_freq), an lm_head stored although tied, and sharded checkpoints with
 * model.safetensors.index.json. Each layout is written here from a model whose plain folder
 * loads, and must give bit-identical logits; each broken variant a one-line error. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/forward.h"
#include "model/model.h"
#include "tests/tap.h"

static char dir[256];

/* One tensor as a test writes it. */
typedef struct wt {
	char name[128];
	const char *dtype;
	int ndim;
	int64_t shape[4];
	const void *data;
	size_t bytes;
} wt;

typedef struct wlist {
	wt t[512];
	int n;
} wlist;

static void wl_add(wlist *l, const char *name, const char *dtype, int ndim, const int64_t *shape, const void *data,
                   size_t bytes)
{
	wt *t = &l->t[l->n++];
	snprintf(t->name, sizeof t->name, "%s", name);
	t->dtype = dtype;
	t->ndim = ndim;
	for (int d = 0; d < ndim; d++)
		t->shape[d] = shape[d];
	t->data = data;
	t->bytes = bytes;
}

/* The model's parameters, renamed by `rename` (NULL: as they are). */
static void wl_params(wlist *l, const gb_model *m, const char *(*rename)(const char *, char *))
{
	char buf[160];
	for (int i = 0; i < m->n_params; i++) {
		const gb_param *p = &m->params[i];
		int64_t sh[2] = { p->shape[0], p->shape[1] };
		wl_add(l, rename ? rename(p->name, buf) : p->name, "F32", p->ndim, sh, p->data, p->n * 4);
	}
}

/* Writes entries [from, to) of l as one safetensors file (header padded to 8 bytes). */
static void write_st(const char *path, const wlist *l, int from, int to)
{
	json_t *h = json_object();
	size_t off = 0;
	for (int i = from; i < to; i++) {
		const wt *t = &l->t[i];
		json_t *shape = json_array();
		for (int d = 0; d < t->ndim; d++)
			json_array_append_new(shape, json_integer(t->shape[d]));
		json_object_set_new(h, t->name, json_pack("{s:s, s:o, s:[I, I]}", "dtype", t->dtype, "shape", shape,
		                                          "data_offsets", (json_int_t)off, (json_int_t)(off + t->bytes)));
		off += t->bytes;
	}
	char *text = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(h);
	size_t len = strlen(text), padded = (len + 7) & ~(size_t)7;
	uint64_t len8 = padded;
	FILE *f = fopen(path, "wb");
	fwrite(&len8, 8, 1, f);
	fputs(text, f);
	for (size_t i = len; i < padded; i++)
		fputc(' ', f);
	free(text);
	for (int i = from; i < to; i++)
		fwrite(l->t[i].data, 1, l->t[i].bytes, f);
	fclose(f);
}

static void write_text(const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	fputs(text, f);
	fclose(f);
}

static void rm(const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	unlink(p);
}

/* A fresh folder holding config.json only (the weights are up to the test). */
static void fresh(const gb_model *m)
{
	gb_err err;
	gb_model_save(m, dir, &err);
	rm("model.safetensors");
	rm("model.safetensors.index.json");
	rm("model-00001-of-00003.safetensors");
	rm("model-00002-of-00003.safetensors");
	rm("model-00003-of-00003.safetensors");
}

static void st_path(char *p, size_t cap, const char *name) { snprintf(p, cap, "%s/%s", dir, name); }

static const int IDS[] = { 1, 5, 9, 2, 2, 7, 3, 10, 0, 4 };
#define N_IDS 10

/* The logits of m on IDS (malloc'd), with the reference kernels. */
static float *logits(const gb_model *m)
{
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_by_name("ref");
	gb_err err;
	float *out = NULL;
	if (!gb_forward(m, IDS, N_IDS, NULL, 0, &tr, &o, &err)) {
		const gb_ttensor *t = gb_trace_get(&tr, "logits");
		out = malloc(t->n * sizeof *out);
		memcpy(out, t->data, t->n * sizeof *out);
	}
	gb_trace_free(&tr);
	return out;
}

/* Loads dir and compares its logits with want, bit for bit; returns the load note. */
static void expect_same(const char *what, const float *want, size_t n, const char *note_has)
{
	gb_model m;
	gb_err err = { "" };
	if (!tap_ok(gb_model_load(&m, dir, &err) == 0, "%s: loads", what)) {
		tap_diag("%s", err.msg);
		tap_ok(0, "%s: logits (not run)", what);
		return;
	}
	float *got = logits(&m);
	tap_ok(got && !memcmp(got, want, n * sizeof *got), "%s: logits bit-identical to the plain folder's (%zu values)",
	       what, n);
	if (note_has)
		if (!tap_ok(strstr(m.load_note, note_has) != NULL, "%s: info's note says \"%s\"", what, note_has))
			tap_diag("note: %s", m.load_note);
	free(got);
	gb_model_free(&m);
}

static void expect_fail(const char *what, const char *want)
{
	gb_model m;
	gb_err err = { "" };
	int rc = gb_model_load(&m, dir, &err);
	if (!tap_ok(rc == -1 && strstr(err.msg, want) != NULL && !strchr(err.msg, '\n'), "%s: refused (%s)", what, err.msg))
		tap_diag("  wanted a one-line message containing \"%s\"", want);
	if (rc == 0)
		gb_model_free(&m);
}

static gb_config small(int family, int tied)
{
	gb_config c;
	gb_config_defaults(&c, family);
	c.d_model = 16, c.n_layer = 2, c.n_head = 4, c.n_kv_head = family == GB_FAM_LLAMA ? 2 : 4, c.d_head = 4;
	c.d_ffn = 24, c.vocab = 11, c.n_ctx = 16, c.bos_id = 1, c.tied = tied;
	return c;
}

static const char *with_transformer(const char *name, char *buf)
{
	if (!strcmp(name, "lm_head.weight"))
		return name;
	snprintf(buf, 160, "transformer.%s", name);
	return buf;
}

static const char *without_model(const char *name, char *buf)
{
	return strncmp(name, "model.", 6) ? name : name + 6;
}

static void gpt2_hub(void)
{
	gb_err err;
	gb_config c = small(GB_FAM_GPT2, 1);
	gb_model m;
	gb_model_init(&m, &c, 5, 0.3f, &err);
	float *want = logits(&m);
	size_t n = (size_t)N_IDS * c.vocab;
	char p[512];

	/* As GPT2LMHeadModel's older checkpoints hold it: prefixed names, per layer a causal
	 * mask (1, 1, C, C) and the scalar fill value, and the output matrix although tied. */
	static float mask[16 * 16], fill = -10000.0f;
	static unsigned char bmask[16 * 16];
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++)
			mask[i * 16 + j] = bmask[i * 16 + j] = j <= i;
	static wlist l;
	l.n = 0;
	wl_params(&l, &m, with_transformer);
	int64_t msh[4] = { 1, 1, 16, 16 }, vd[2] = { c.vocab, c.d_model };
	char name[64];
	for (int i = 0; i < c.n_layer; i++) {
		snprintf(name, sizeof name, "transformer.h.%d.attn.bias", i);
		wl_add(&l, name, i ? "BOOL" : "F32", 4, msh, i ? (void *)bmask : (void *)mask, i ? sizeof bmask : sizeof mask);
		snprintf(name, sizeof name, "transformer.h.%d.attn.masked_bias", i);
		wl_add(&l, name, "F32", 0, msh, &fill, 4);
	}
	wl_add(&l, "lm_head.weight", "F32", 2, vd, m.embed.w, (size_t)c.vocab * c.d_model * 4);
	fresh(&m);
	st_path(p, sizeof p, "model.safetensors");
	write_st(p, &l, 0, l.n);
	expect_same("GPT-2 hub layout (transformer. prefix, mask buffers, tied lm_head copy)", want, n,
	            "skipped 2 x h.N.attn.bias (GPT-2's causal mask");
	expect_same("GPT-2 hub layout", want, n, "lm_head.weight is a copy of the token embedding (tied)");

	/* A tied model whose lm_head differs from the embedding: config.json is wrong. */
	static float other[11 * 16];
	memcpy(other, m.embed.w, sizeof other);
	other[17] += 0.25f;
	l.t[l.n - 1].data = other;
	write_st(p, &l, 0, l.n);
	expect_fail("tied, but lm_head.weight differs", "\"lm_head.weight\" differs from the token embedding");

	/* The same weight twice, with and without the prefix. */
	l.t[l.n - 1].data = m.embed.w;
	wl_add(&l, "wte.weight", "F32", 2, vd, m.embed.w, (size_t)c.vocab * c.d_model * 4);
	write_st(p, &l, 0, l.n);
	expect_fail("a weight with and without the prefix", "are the same weight");
	l.n--;

	/* An unknown tensor among the buffers. */
	wl_add(&l, "transformer.h.0.attn.rotary", "F32", 0, msh, &fill, 4);
	write_st(p, &l, 0, l.n);
	expect_fail("an unknown tensor", "\"transformer.h.0.attn.rotary\" is not part of this 2-layer gpt2 model");
	l.n--;

	/* An integer weight of the right size is still not a weight glassbox reads. */
	static int32_t ints[11 * 16];
	const void *keep = l.t[0].data;
	l.t[0].dtype = "I32";
	l.t[0].data = ints;
	write_st(p, &l, 0, l.n);
	expect_fail("an I32 embedding", "has dtype I32; glassbox reads F32, F16, BF16 and F64 weights");
	l.t[0].dtype = "F32";
	l.t[0].data = keep;

	/* F64 weights convert exactly (the F32 values are representable). */
	static wlist d;
	static double wide[8192];
	d.n = 0;
	size_t at = 0;
	for (int i = 0; i < m.n_params; i++) {
		const gb_param *q = &m.params[i];
		int64_t sh[2] = { q->shape[0], q->shape[1] };
		for (size_t k = 0; k < q->n; k++)
			wide[at + k] = q->data[k];
		wl_add(&d, q->name, "F64", q->ndim, sh, wide + at, q->n * 8);
		at += q->n;
	}
	write_st(p, &d, 0, d.n);
	expect_same("F64 weights", want, n, NULL);

	/* Sharded into three files, with prefixed names and the buffers. */
	fresh(&m);
	int cut1 = l.n / 3, cut2 = 2 * l.n / 3;
	const char *shard[3] = { "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
	                         "model-00003-of-00003.safetensors" };
	st_path(p, sizeof p, shard[0]);
	write_st(p, &l, 0, cut1);
	st_path(p, sizeof p, shard[1]);
	write_st(p, &l, cut1, cut2);
	st_path(p, sizeof p, shard[2]);
	write_st(p, &l, cut2, l.n);
	json_t *wm = json_object();
	for (int i = 0; i < l.n; i++)
		json_object_set_new(wm, l.t[i].name, json_string(shard[i < cut1 ? 0 : i < cut2 ? 1 : 2]));
	json_t *idx = json_pack("{s:{s:i}, s:o}", "metadata", "total_size", 0, "weight_map", wm);
	char *text = json_dumps(idx, JSON_INDENT(2));
	write_text("model.safetensors.index.json", text);
	free(text);
	expect_same("GPT-2 in 3 shards", want, n, "weights from 3 shards");
	gb_model_summary sm;
	gb_err err2;
	int rc = gb_model_check(dir, &sm, &err2);
	tap_ok(rc == 0 && !strcmp(sm.format, "safetensors, 3 shards") &&
	       sm.n_weights == m.n_weights && sm.cfg.n_layer == 2,
	       "the gallery's check of the sharded folder: %s, %zu parameters", sm.format, sm.n_weights);

	/* Broken shardings. */
	rm(shard[1]);
	expect_fail("a shard missing", "shard model-00002-of-00003.safetensors (named by");
	rc = gb_model_check(dir, &sm, &err2);
	tap_ok(rc == -1 && strstr(err2.msg, "is missing"),
	       "the gallery's check finds the missing shard too (%s)", err2.msg);
	st_path(p, sizeof p, shard[1]);
	write_st(p, &l, cut1, cut2 + 1); /* the third shard's first tensor also here */
	expect_fail("a tensor in two shards", "is in this shard, but");
	write_st(p, &l, cut1, cut2 - 1); /* the second shard's last tensor nowhere */
	expect_fail("a tensor the index names but its shard lacks", "which does not hold it");
	write_st(p, &l, cut1, cut2);
	json_object_set_new(wm, l.t[0].name, json_string("../elsewhere.safetensors"));
	text = json_dumps(idx, JSON_INDENT(2));
	write_text("model.safetensors.index.json", text);
	free(text);
	expect_fail("a shard outside the folder", "the shard must be a file name in the model's folder");
	json_decref(idx);
	write_text("model.safetensors.index.json", "{\"weight_map\": [1, 2]}");
	expect_fail("weight_map not an object", "needs a \"weight_map\" object");
	write_text("model.safetensors.index.json", "{\"weight_map\": {\"a\": ");
	expect_fail("broken index JSON", "broken JSON");
	write_text("model.safetensors.index.json", "{\"weight_map\": {}}");
	expect_fail("an empty weight_map", "the weight_map is empty");

	free(want);
	gb_model_free(&m);
}

static void llama_hub(void)
{
	gb_err err;
	gb_config c = small(GB_FAM_LLAMA, 0);
	gb_model m;
	gb_model_init(&m, &c, 6, 0.3f, &err);
	float *want = logits(&m);
	size_t n = (size_t)N_IDS * c.vocab;
	char p[512], name[96];
	static wlist l;

	/* LlamaModel's names (no "model." prefix), an lm_head, and inv_freq per layer. */
	static float inv[2];
	for (int k = 0; k < 2; k++)
		inv[k] = (float)pow(10000.0, -2.0 * k / 4);
	l.n = 0;
	wl_params(&l, &m, without_model);
	int64_t ish[1] = { 2 };
	for (int i = 0; i < c.n_layer; i++) {
		snprintf(name, sizeof name, "layers.%d.self_attn.rotary_emb.inv_freq", i);
		wl_add(&l, name, "F32", 1, ish, inv, sizeof inv);
	}
	fresh(&m);
	st_path(p, sizeof p, "model.safetensors");
	write_st(p, &l, 0, l.n);
	expect_same("Llama without the model. prefix, inv_freq buffers", want, n,
	            "skipped 2 x layers.N.self_attn.rotary_emb.inv_freq (RoPE's frequencies");

	/* inv_freq of another base: a scaled or different RoPE that glassbox would not apply. */
	static float inv2[2];
	inv2[0] = 1.0f, inv2[1] = (float)pow(500000.0, -0.5);
	l.t[l.n - 1].data = inv2;
	write_st(p, &l, 0, l.n);
	expect_fail("inv_freq of another RoPE base", "holds RoPE frequencies other than rope_theta");
	l.t[l.n - 1].data = inv;

	/* Untied, and the output matrix missing. */
	l.n -= 2;
	for (int i = 0; i < l.n; i++)
		if (!strcmp(l.t[i].name, "lm_head.weight")) {
			l.t[i] = l.t[l.n - 1];
			l.n--;
			break;
		}
	write_st(p, &l, 0, l.n);
	expect_fail("untied, lm_head.weight missing", "set tie_word_embeddings true if the output shares");

	/* Sharded, HF names. */
	l.n = 0;
	wl_params(&l, &m, NULL);
	fresh(&m);
	const char *shard[2] = { "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors" };
	st_path(p, sizeof p, shard[0]);
	write_st(p, &l, 0, 5);
	st_path(p, sizeof p, shard[1]);
	write_st(p, &l, 5, l.n);
	json_t *wm = json_object();
	for (int i = 0; i < l.n; i++)
		json_object_set_new(wm, l.t[i].name, json_string(shard[i >= 5]));
	json_t *idx = json_pack("{s:o}", "weight_map", wm);
	char *text = json_dumps(idx, 0);
	write_text("model.safetensors.index.json", text);
	free(text);
	expect_same("Llama in 2 shards", want, n, "weights from 2 shards");
	/* A shard whose own header is broken is named in the message. */
	st_path(p, sizeof p, shard[1]);
	truncate(p, 40);
	expect_fail("a broken shard", "model-00002-of-00003.safetensors: header length");
	json_decref(idx);
	free(want);
	gb_model_free(&m);
}

/* Random damage to a good file's header: every load either succeeds or fails with one line. */
static void damaged(void)
{
	gb_err err;
	gb_config c = small(GB_FAM_GPT2, 1);
	gb_model m;
	gb_model_init(&m, &c, 8, 0.3f, &err);
	fresh(&m);
	gb_model_save(&m, dir, &err);
	char p[512];
	st_path(p, sizeof p, "model.safetensors");
	FILE *f = fopen(p, "rb");
	static unsigned char good[1 << 16], bad[1 << 16];
	size_t len = fread(good, 1, sizeof good, f);
	fclose(f);
	uint64_t hlen;
	memcpy(&hlen, good, 8);
	unsigned seed = 12345;
	int ok = 0, refused = 0, clean = 1;
	for (int trial = 0; trial < 300; trial++) {
		memcpy(bad, good, len);
		int flips = 1 + trial % 3;
		for (int k = 0; k < flips; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % (8 + hlen);
			seed = seed * 1103515245u + 12345u;
			bad[at] = (unsigned char)(trial % 2 ? bad[at] ^ (1u << ((seed >> 8) % 8)) : (seed >> 8));
		}
		f = fopen(p, "wb");
		fwrite(bad, 1, len, f);
		fclose(f);
		gb_model back;
		if (gb_model_load(&back, dir, &err) == 0) {
			ok++;
			gb_model_free(&back);
		} else {
			refused++;
			if (strchr(err.msg, '\n') || !err.msg[0])
				clean = 0;
		}
	}
	tap_ok(clean && ok + refused == 300, "300 damaged headers: %d refused with one line each, %d still loaded", refused,
	       ok);
	gb_model_free(&m);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/gb_hub.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP cannot make a temporary folder\n");
		return 0;
	}
	gpt2_hub();
	llama_hub();
	damaged();
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		tap_diag("could not remove %s", dir);
	return tap_done();
}
