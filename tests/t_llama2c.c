/* t_llama2c.c — llama2.c's tokenizer.bin encoder: hand-worked cases, a plain reference (run.c's
 * algorithm with a linear search for every piece) against the hashed encoder on random
 * vocabularies and texts (invalid UTF-8, blank runs, ties in scores), decode(encode(x)) == x,
 * and the writer's refusals. tests/t_llama2c.sh holds the checkpoints against PyTorch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/formats/llama2c.h"
#include "model/forward.h"
#include "model/formats/llama2c_tok.h"
#include "model/model.h"
#include "tests/tap.h"

static char path[256];

typedef struct vocab {
	char *piece[600];
	int len[600];
	float score[600];
	int n;
} vocab;

static void v_add(vocab *v, const char *s, int len, float score)
{
	v->piece[v->n] = malloc((size_t)len + 1);
	memcpy(v->piece[v->n], s, (size_t)len);
	v->piece[v->n][len] = 0;
	v->len[v->n] = len;
	v->score[v->n++] = score;
}

/* <unk>, BOS, EOS and the 256 byte pieces, as tokenizer.py exports them. */
static void v_base(vocab *v)
{
	v->n = 0;
	v_add(v, "<unk>", 5, 0);
	v_add(v, "\n<s>\n", 5, 0);
	v_add(v, "\n</s>\n", 6, 0);
	char b[8];
	for (int i = 0; i < 256; i++) {
		snprintf(b, sizeof b, "<0x%02X>", i);
		v_add(v, b, 6, 0);
	}
}

static void v_free(vocab *v)
{
	for (int i = 0; i < v->n; i++)
		free(v->piece[i]);
	v->n = 0;
}

static gb_l2c_tok *v_load(const vocab *v)
{
	FILE *f = fopen(path, "wb");
	uint32_t maxlen = 0;
	for (int i = 0; i < v->n; i++)
		if ((uint32_t)v->len[i] > maxlen)
			maxlen = (uint32_t)v->len[i];
	fwrite(&maxlen, 4, 1, f);
	for (int i = 0; i < v->n; i++) {
		fwrite(&v->score[i], 4, 1, f);
		fwrite(&v->len[i], 4, 1, f);
		fwrite(v->piece[i], 1, (size_t)v->len[i], f);
	}
	fclose(f);
	gb_l2c_tok *t;
	gb_err err;
	if (gb_l2c_tok_load(path, v->n, &t, &err)) {
		tap_diag("%s", err.msg);
		return NULL;
	}
	return t;
}

/* The reference: run.c's encode, every piece found by a linear search (lowest id first). */
static int ref_find(const vocab *v, const char *s, int n)
{
	for (int i = 0; i < v->n; i++)
		if (v->len[i] == n && !memcmp(v->piece[i], s, (size_t)n))
			return i;
	return -1;
}

static int ref_encode(const vocab *v, const char *text, int *tok)
{
	int m = 0, L = (int)strlen(text);
	tok[m++] = 1;
	if (L)
		tok[m++] = ref_find(v, " ", 1);
	for (int i = 0; i < L;) {
		int j = i + 1;
		while (j < L && ((unsigned char)text[j] & 0xC0) == 0x80 && j - i < 4)
			j++;
		int id = ref_find(v, text + i, j - i);
		if (id >= 0)
			tok[m++] = id;
		else
			for (int k = i; k < j; k++)
				tok[m++] = (unsigned char)text[k] + 3;
		i = j;
	}
	char buf[256];
	for (;;) {
		float best = -1e10f;
		int at = -1, best_id = -1;
		for (int i = 0; i + 1 < m; i++) {
			int la = v->len[tok[i]], lb = v->len[tok[i + 1]];
			memcpy(buf, v->piece[tok[i]], (size_t)la);
			memcpy(buf + la, v->piece[tok[i + 1]], (size_t)lb);
			int id = ref_find(v, buf, la + lb);
			if (id >= 0 && v->score[id] > best) {
				best = v->score[id];
				at = i;
				best_id = id;
			}
		}
		if (at < 0)
			break;
		tok[at] = best_id;
		memmove(tok + at + 1, tok + at + 2, sizeof *tok * (size_t)(m - at - 2));
		m--;
	}
	return m;
}

static int same_ids(const gb_l2c_tok *t, const char *text, size_t len, const int *want, int n_want)
{
	int *ids, n;
	gb_err err;
	if (gb_l2c_tok_encode(t, text, len, 1, 0, &ids, &n, &err)) {
		tap_diag("%s", err.msg);
		return 0;
	}
	int ok = n == n_want && !memcmp(ids, want, sizeof *ids * (size_t)n);
	if (!ok) {
		printf("# got:");
		for (int i = 0; i < n; i++)
			printf(" %d", ids[i]);
		printf("\n# want:");
		for (int i = 0; i < n_want; i++)
			printf(" %d", want[i]);
		printf("\n");
	}
	free(ids);
	return ok;
}

static void by_hand(void)
{
	vocab v;
	v_base(&v);
	v_add(&v, " ", 1, -100);  /* 259 */
	v_add(&v, "a", 1, -100);  /* 260 */
	v_add(&v, "b", 1, -100);  /* 261 */
	v_add(&v, "ab", 2, 1);    /* 262 */
	v_add(&v, " a", 2, 2);    /* 263 */
	v_add(&v, " ab", 3, 0.5f); /* 264 */
	v_add(&v, "ba", 2, 3);    /* 265 */
	v_add(&v, "ab", 2, 9);    /* 266: "ab" again; the lower id (262) is the piece */
	gb_l2c_tok *t = v_load(&v);
	if (!tap_ok(t != NULL, "a small tokenizer.bin loads")) {
		v_free(&v);
		return;
	}
	/* "ab": BOS, " ", a, b; " a" scores 2 > "ab" 1; then " a" + b = " ab". */
	tap_ok(same_ids(t, "ab", 2, (int[]){ 1, 264 }, 2), "\"ab\": \" a\" (2) merges before \"ab\" (1), then \" ab\"");
	tap_ok(same_ids(t, "bab", 3, (int[]){ 1, 259, 265, 261 }, 4), "\"bab\": \"ba\" (3) first, then nothing merges");
	tap_ok(same_ids(t, "abab", 4, (int[]){ 1, 263, 265, 261 }, 4),
	       "\"abab\": \" a\", then \"ba\" (3) over \" ab\" and \"ab\"");
	tap_ok(same_ids(t, "z", 1, (int[]){ 1, 259, 'z' + 3 }, 3), "\"z\" (no piece): byte fallback, id = byte + 3");
	tap_ok(same_ids(t, "\xc3\xa9", 2, (int[]){ 1, 259, 0xc3 + 3, 0xa9 + 3 }, 4), "\"é\" (no piece): both bytes");
	tap_ok(same_ids(t, "\xff", 1, (int[]){ 1, 259, 258 }, 3), "invalid UTF-8 0xFF: its byte piece");
	tap_ok(same_ids(t, "", 0, (int[]){ 1 }, 1), "empty text: BOS only (no dummy prefix)");
	tap_ok(same_ids(t, "a\0b", 3, (int[]){ 1, 263 }, 2), "a NUL ends the text (as a C string in run.c)");
	tap_ok(same_ids(t, " a", 2, (int[]){ 1, 259, 263 }, 3), "a leading space stays (dummy prefix + the text's own)");
	int *ids, n;
	gb_err err;
	gb_l2c_tok_encode(t, "ab", 2, 0, 1, &ids, &n, &err);
	tap_ok(n == 2 && ids[0] == 264 && ids[1] == 2, "without BOS, with EOS: \" ab\" </s>");
	free(ids);
	char *out;
	size_t len;
	gb_l2c_tok_decode(t, (int[]){ 1, 264, 259, 'z' + 3, 0x20 + 3 }, 5, &out, &len, &err);
	tap_ok(len == 5 && !memcmp(out, "ab z ", 5), "decode: BOS gives nothing, the space after it dropped, byte pieces "
	       "as bytes (\"%s\")", out);
	free(out);
	tap_ok(gb_l2c_tok_decode(t, (int[]){ 1, 999 }, 2, &out, &len, &err) == -1 && strstr(err.msg, "999"),
	       "decode of an id outside the vocabulary: refused (%s)", err.msg);
	gb_l2c_tok_free(t);

	/* A vocabulary without the " " piece cannot add the dummy prefix; without byte pieces
	 * an unknown character has nothing to fall back on. */
	vocab w;
	w.n = 0;
	v_add(&w, "<unk>", 5, 0);
	v_add(&w, "<s>", 3, 0);
	v_add(&w, "</s>", 4, 0);
	v_add(&w, "a", 1, 0);
	t = v_load(&w);
	tap_ok(t && gb_l2c_tok_encode(t, "a", 1, 1, 0, &ids, &n, &err) == -1 && strstr(err.msg, "dummy prefix"),
	       "no \" \" piece: refused (%s)", err.msg);
	gb_l2c_tok_free(t);
	v_add(&w, " ", 1, 0);
	t = v_load(&w);
	tap_ok(t && gb_l2c_tok_encode(t, "az", 2, 1, 0, &ids, &n, &err) == -1 && strstr(err.msg, "no byte pieces"),
	       "no byte pieces and an unknown character: refused (%s)", err.msg);
	gb_l2c_tok_free(t);
	v_free(&w);
	v_free(&v);
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void random_cases(void)
{
	static const char *const alpha[] = { "a", "b", "c", " ", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x99\x82", "\t" };
	static const char *const extra[] = { "\xff", "\x80", "\xc3", "\x80\x80\x80\x80\x80", "d", "\n" };
	unsigned s = 2026;
	int mismatches = 0, cases = 0, rt_bad = 0;
	for (int round = 0; round < 20; round++) {
		vocab v;
		v_base(&v);
		for (int i = 0; i < 8; i++)
			if (i != 5 || round % 2) /* half the vocabularies lack 中: it falls back to bytes */
				v_add(&v, alpha[i], (int)strlen(alpha[i]), -1000.0f - (float)i);
		/* Random pieces, built by joining two existing non-byte pieces; scores from a small
		 * set so that ties happen. */
		while (v.n < 259 + 8 + 150) {
			int a = 259 + (int)(rnd(&s) % (unsigned)(v.n - 259)), b = 259 + (int)(rnd(&s) % (unsigned)(v.n - 259));
			if (v.len[a] + v.len[b] > 12)
				continue;
			char buf[32];
			memcpy(buf, v.piece[a], (size_t)v.len[a]);
			memcpy(buf + v.len[a], v.piece[b], (size_t)v.len[b]);
			v_add(&v, buf, v.len[a] + v.len[b], (float)(rnd(&s) % 40) - 20.0f);
		}
		gb_l2c_tok *t = v_load(&v);
		if (!t) {
			mismatches++;
			v_free(&v);
			continue;
		}
		for (int k = 0; k < 100; k++) {
			char text[200];
			int L = 0, parts = (int)(rnd(&s) % 24);
			for (int p = 0; p < parts; p++) {
				const char *x = rnd(&s) % 8 ? alpha[rnd(&s) % 8] : extra[rnd(&s) % 6];
				memcpy(text + L, x, strlen(x));
				L += (int)strlen(x);
			}
			text[L] = 0;
			int want[400], nw = ref_encode(&v, text, want);
			cases++;
			int *ids, n;
			gb_err err;
			if (gb_l2c_tok_encode(t, text, (size_t)L, 1, 0, &ids, &n, &err) || n != nw ||
			    memcmp(ids, want, sizeof *ids * (size_t)n)) {
				if (!mismatches++)
					tap_diag("first mismatch: round %d, text \"%s\"", round, text);
				continue;
			}
			char *back;
			size_t bl;
			if (gb_l2c_tok_decode(t, ids, n, &back, &bl, &err) || bl != (size_t)L || memcmp(back, text, (size_t)L))
				rt_bad++;
			else
				free(back);
			free(ids);
		}
		gb_l2c_tok_free(t);
		v_free(&v);
	}
	tap_ok(mismatches == 0, "%d random texts on 20 random vocabularies (ties, invalid UTF-8, byte fallback): "
	       "ids equal the plain reference's (%d mismatches)", cases, mismatches);
	tap_ok(rt_bad == 0, "decode(encode(x)) == x on every one of them (%d failures)", rt_bad);
}

static float *logits_of(const gb_model *m, const int *ids, int n)
{
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_by_name("ref");
	gb_err err;
	float *out = calloc((size_t)n * m->cfg.vocab, sizeof *out);
	if (!gb_forward(m, ids, n, NULL, 0, &tr, &o, &err))
		memcpy(out, gb_trace_get(&tr, "logits")->data, sizeof *out * (size_t)n * m->cfg.vocab);
	gb_trace_free(&tr);
	return out;
}

/* The writer refuses what llama2.c cannot say, and writes nothing then. */
static void refusals(void)
{
	gb_config c;
	gb_config_defaults(&c, GB_FAM_LLAMA);
	c.d_model = 16, c.n_layer = 1, c.n_head = 2, c.n_kv_head = 1, c.d_head = 8, c.d_ffn = 24, c.vocab = 300;
	c.n_ctx = 8, c.norm_eps = 1e-5f;
	gb_model m;
	gb_err err;
	gb_model_init(&m, &c, 3, 0.1f, &err);
	unlink(path);
	m.cfg.norm_eps = 1e-6f;
	tap_ok(gb_llama2c_write(&m, path, 0, &err) == -1 && strstr(err.msg, "epsilon is not 1e-5") && access(path, F_OK),
	       "RMSNorm eps 1e-6: refused, nothing written (%s)", err.msg);
	m.cfg.norm_eps = 1e-5f;

	/* A rotate-half model (Hugging Face's layout) is written with q and k rows reordered for
	 * adjacent pairs: the llama2.c file computes the same logits. */
	static const int ids[] = { 1, 7, 200, 45, 45, 3, 299, 12 };
	float *want = logits_of(&m, ids, 8), worst = 0, top = 0;
	int wrc = gb_llama2c_write(&m, path, 1, &err);
	if (!tap_ok(wrc == 0, "a rotate-half Llama writes as version 1"))
		tap_diag("%s", err.msg);
	gb_model half;
	if (gb_model_load(&half, path, &err) == 0) {
		float *got = logits_of(&half, ids, 8);
		for (int i = 0; i < 8 * 300; i++) {
			worst = fmaxf(worst, fabsf(got[i] - want[i]));
			top = fmaxf(top, fabsf(want[i]));
		}
		worst /= top;
		const gb_param *q0 = gb_model_param(&m, "model.layers.0.self_attn.q_proj.weight");
		const gb_param *q1 = gb_model_param(&half, "model.layers.0.self_attn.q_proj.weight");
		/* head 1, row 2 of llama2.c's is row 1 of Hugging Face's; row 3 is row 1 + E/2 = 5 */
		int moved = !memcmp(q1->data + 10 * 16, q0->data + 9 * 16, 16 * 4) &&
		            !memcmp(q1->data + 11 * 16, q0->data + 13 * 16, 16 * 4);
		tap_ok(half.cfg.rope_pairs == GB_ROPE_ADJACENT && moved && worst < 1e-5f,
		       "it loads with adjacent pairs, q rows reordered per head, and the same logits (rel %.1e)", worst);
		free(got);
		/* Control: the same file read with the other pairing is another model. */
		half.cfg.rope_pairs = GB_ROPE_HALF;
		got = logits_of(&half, ids, 8);
		float off = 0;
		for (int i = 0; i < 8 * 300; i++)
			off = fmaxf(off, fabsf(got[i] - want[i]) / top);
		tap_ok(off > 1e-3f, "control: with rotate-half pairing the exported weights give other logits (rel %.1e)", off);
		free(got);
		half.cfg.rope_pairs = GB_ROPE_ADJACENT;
		/* Q8_0: the rotate-half model quantized after its rows are reordered is the file of its
		 * adjacent-pair copy (groups lie inside rows, so reordering rows moves whole groups) */
		char p2a[300], p2b[300];
		snprintf(p2a, sizeof p2a, "%s.q8a", path);
		snprintf(p2b, sizeof p2b, "%s.q8b", path);
		size_t na = 0, nb = 0;
		char *a = NULL, *b = NULL;
		if (gb_llama2c_write(&m, p2a, 2, &err) == 0 && gb_llama2c_write(&half, p2b, 2, &err) == 0) {
			a = gb_read_file(p2a, 1 << 24, &na, &err);
			b = gb_read_file(p2b, 1 << 24, &nb, &err);
		}
		tap_ok(a && b && na == nb && !memcmp(a, b, na), "version 2 of the rotate-half model is byte for byte that of "
		       "its adjacent-pair copy (%zu bytes)", na);
		free(a);
		free(b);
		gb_model q8;
		if (gb_model_load(&q8, p2a, &err) == 0) {
			got = logits_of(&q8, ids, 8);
			float qe = 0;
			for (int i = 0; i < 8 * 300; i++)
				qe = fmaxf(qe, fabsf(got[i] - want[i]) / top);
			tap_ok(q8.l2c_group == 16 && qe > 0 && qe < 5e-2f, "and loads back (groups of 16: 64 halved until it "
			       "divides dim 16) with logits near the float model's (rel %.1e)", qe);
			free(got);
			gb_model_free(&q8);
		} else {
			tap_ok(0, "the version 2 file loads (%s)", err.msg);
		}
		unlink(p2a);
		unlink(p2b);
		gb_model_free(&half);
	} else {
		tap_ok(0, "the rotate-half export loads (%s)", err.msg);
	}
	free(want);
	m.cfg.rope_pairs = GB_ROPE_ADJACENT;
	m.cfg.bias = 1;
	tap_ok(gb_llama2c_write(&m, path, 0, &err) == -1 && strstr(err.msg, "biases"), "biases: refused (%s)", err.msg);
	m.cfg.bias = 0;
	m.cfg.qkv_bias = 1;
	tap_ok(gb_llama2c_write(&m, path, 0, &err) == -1 && strstr(err.msg, "biases"), "q, k, v biases (Qwen2): refused "
	       "(%s)", err.msg);
	m.cfg.qkv_bias = 0;
	tap_ok(gb_llama2c_write(&m, path, 3, &err) == -1 && strstr(err.msg, "1 (float32) or 2 (Q8_0), not 3"),
	       "version 3: refused (%s)", err.msg);
	tap_ok(gb_llama2c_write(&m, path, 1, &err) == 0, "an adjacent-pair Llama writes as version 1");
	gb_model back;
	int rc = gb_model_load(&back, path, &err);
	int same = rc == 0 && back.n_params == m.n_params;
	for (int i = 0; same && i < m.n_params; i++)
		same = !memcmp(back.params[i].data, m.params[i].data, m.params[i].n * sizeof(float));
	tap_ok(same && back.cfg.rope_pairs == GB_ROPE_ADJACENT && !back.cfg.tied && back.cfg.n_kv_head == 1,
	       "and loads back with every weight identical, adjacent pairs, untied, 1 kv head");
	if (rc == 0)
		gb_model_free(&back);
	gb_model_free(&m);
	unlink(path);
}

/* Where the weights live after a load: float32 matrices in place in the map, or copied out
 * (GLASSBOX_WEIGHTS=copy) into owned memory with every matrix on a cache line; vectors stay
 * in place; the values are the file's either way. */
static int in_map(const gb_model *m, const void *p)
{
	return (const unsigned char *)p >= m->map.data && (const unsigned char *)p < m->map.data + m->map.len;
}

static void placed(const gb_model *m, const gb_model *want, int copied, const char *what)
{
	int aligned = 1, where = 1, same = m->n_params == want->n_params;
	for (int i = 0; same && i < m->n_params; i++) {
		const gb_param *p = &m->params[i];
		same = !memcmp(p->data, want->params[i].data, p->n * sizeof(float));
		if (p->lin && copied)
			aligned &= ((uintptr_t)p->data & 63) == 0;
		where &= in_map(m, p->data) == !(copied && p->lin);
	}
	tap_ok(same && aligned && where && (strstr(m->load_note, "glassbox's memory (GLASSBOX_WEIGHTS=copy)") != NULL) == copied,
	       "%s, GLASSBOX_WEIGHTS%s: every weight as written, %s (values %s, places %s, aligned %s; %s)", what,
	       copied ? "=copy" : " unset", copied ? "matrices copied out of the map on cache lines, vectors in place" :
	       "all in place", same ? "ok" : "differ", where ? "ok" : "wrong", aligned ? "yes" : "no", m->load_note);
}

/* A BF16 file whose data starts 8 bytes past a cache line (as another writer may pad its
 * header): its 16-bit matrices are copied, each to a cache line, and hold the file's values
 * (against GLASSBOX_WEIGHTS=f32, which widens them from the file directly). */
static void misaligned16(const gb_model *m, const char *dir)
{
	char file[340];
	gb_err err;
	gb_model b16, wide;
	snprintf(file, sizeof file, "%s/model.safetensors", dir);
	if (gb_model_save_as(m, dir, 1, &err)) {
		tap_ok(0, "misaligned BF16: save (%s)", err.msg);
		return;
	}
	FILE *f = fopen(file, "rb");
	unsigned char len8[8], *rest = NULL;
	uint64_t hlen = 0;
	long size = 0;
	int ok = f && fread(len8, 1, 8, f) == 8;
	for (int i = 0; ok && i < 8; i++)
		hlen |= (uint64_t)len8[i] << (8 * i);
	ok = ok && !fseek(f, 0, SEEK_END) && (size = ftell(f)) > 8 && !fseek(f, 8, SEEK_SET) &&
	     (rest = malloc((size_t)size)) && fread(rest, 1, (size_t)size - 8, f) == (size_t)size - 8;
	if (f)
		fclose(f);
	if (ok && (f = fopen(file, "wb"))) {
		uint64_t h2 = hlen + 8;
		for (int i = 0; i < 8; i++)
			len8[i] = (unsigned char)(h2 >> (8 * i));
		ok = fwrite(len8, 1, 8, f) == 8 && fwrite(rest, 1, hlen, f) == hlen && fwrite("        ", 1, 8, f) == 8 &&
		     fwrite(rest + hlen, 1, (size_t)size - 8 - hlen, f) == (size_t)size - 8 - hlen;
		ok &= fclose(f) == 0;
	}
	free(rest);
	if (!ok || gb_model_load(&b16, dir, &err)) {
		tap_ok(0, "misaligned BF16: the file (%s)", ok ? err.msg : "not rewritten");
		return;
	}
	int n16 = 0, where = 1;
	for (int i = 0; i < b16.n_params; i++)
		if (b16.params[i].data16) {
			n16++;
			where &= !in_map(&b16, b16.params[i].data16) && ((uintptr_t)b16.params[i].data16 & 63) == 0;
		}
	setenv("GLASSBOX_WEIGHTS", "f32", 1);
	int same = gb_model_load(&wide, dir, &err) == 0;
	unsetenv("GLASSBOX_WEIGHTS");
	int said = strstr(b16.load_note, "copied") == NULL; /* a placement, not a conversion: info is silent */
	same = same && gb_model_make_writable(&b16, &err) == 0;
	for (int i = 0; same && i < b16.n_params; i++)
		same = !memcmp(b16.params[i].data, wide.params[i].data, b16.params[i].n * sizeof(float));
	tap_ok(n16 > 0 && where && said && same, "a BF16 file whose data starts 8 bytes past a cache line: its %d 16-bit "
	       "matrices copied, each to a cache line (%s), info silent about it (%s), the file's values (%s)", n16,
	       where ? "yes" : "no", said ? "yes" : "no", same ? "yes" : "no");
	gb_model_free(&b16);
	gb_model_free(&wide); /* zeroed when its load failed */
	/* GLASSBOX_WEIGHTS=mapped: every one read in place */
	setenv("GLASSBOX_WEIGHTS", "mapped", 1);
	int rc = gb_model_load(&b16, dir, &err), inplace = rc == 0, m16 = 0;
	unsetenv("GLASSBOX_WEIGHTS");
	for (int i = 0; inplace && i < b16.n_params; i++)
		if (b16.params[i].data16)
			m16++, inplace &= in_map(&b16, b16.params[i].data16);
	tap_ok(inplace && m16 == n16 && !b16.owned16, "and with GLASSBOX_WEIGHTS=mapped, its %d 16-bit matrices read in "
	       "place (%s)", m16, rc ? err.msg : inplace ? "yes" : "no");
	if (rc == 0)
		gb_model_free(&b16);
}

static void copies(void)
{
	gb_config c;
	gb_config_defaults(&c, GB_FAM_LLAMA);
	c.d_model = 32, c.n_layer = 2, c.n_head = 2, c.n_kv_head = 2, c.d_head = 16, c.d_ffn = 40, c.vocab = 70;
	c.n_ctx = 16, c.norm_eps = 1e-5f, c.rope_pairs = GB_ROPE_ADJACENT;
	gb_model m, back;
	gb_err err;
	char dir[300];
	if (gb_model_init(&m, &c, 5, 0.1f, &err)) {
		tap_ok(0, "copies: a model (%s)", err.msg);
		return;
	}
	snprintf(dir, sizeof dir, "%s.st", path);
	for (int copy = 0; copy < 2; copy++) {
		if (copy)
			setenv("GLASSBOX_WEIGHTS", "copy", 1);
		else
			unsetenv("GLASSBOX_WEIGHTS");
		for (int version = 0; version < 2; version++)
			if (gb_llama2c_write(&m, path, version, &err) == 0 && gb_model_load(&back, path, &err) == 0) {
				placed(&back, &m, copy, version ? "llama2.c version 1" : "llama2.c legacy (28-byte header)");
				gb_model_free(&back);
			} else {
				tap_ok(0, "copies: llama2.c version %d (%s)", version, err.msg);
			}
		if (gb_model_save(&m, dir, &err) == 0 && gb_model_load(&back, dir, &err) == 0) {
			placed(&back, &m, copy, "model.safetensors");
			gb_model_free(&back);
		} else {
			tap_ok(0, "copies: safetensors (%s)", err.msg);
		}
		/* matrices stored BF16 stay 16-bit: in the map, or copied */
		gb_model b16, widened;
		if (gb_model_save_as(&m, dir, 1, &err) == 0 && gb_model_load(&b16, dir, &err) == 0) {
			int n16 = 0, where = 1, aligned = 1;
			for (int i = 0; i < b16.n_params; i++)
				if (b16.params[i].data16) {
					n16++;
					where &= in_map(&b16, b16.params[i].data16) == !copy;
					aligned &= !copy || ((uintptr_t)b16.params[i].data16 & 63) == 0;
				}
			unsetenv("GLASSBOX_WEIGHTS"); /* the reference: read in place */
			int same = gb_model_load(&widened, dir, &err) == 0 && gb_model_make_writable(&widened, &err) == 0 &&
			           gb_model_make_writable(&b16, &err) == 0;
			if (copy)
				setenv("GLASSBOX_WEIGHTS", "copy", 1);
			for (int i = 0; same && i < b16.n_params; i++)
				same = !memcmp(b16.params[i].data, widened.params[i].data, b16.params[i].n * sizeof(float));
			tap_ok(n16 > 0 && where && aligned && same, "BF16 model.safetensors, GLASSBOX_WEIGHTS%s: its %d 16-bit "
			       "matrices %s (places %s, aligned %s, values %s)", copy ? "=copy" : " unset", n16,
			       copy ? "copied out of the map on cache lines" : "in the map", where ? "ok" : "wrong",
			       aligned ? "yes" : "no", same ? "the same" : "differ");
			gb_model_free(&widened);
			gb_model_free(&b16);
		} else {
			tap_ok(0, "copies: BF16 safetensors (%s)", err.msg);
		}
	}
	unsetenv("GLASSBOX_WEIGHTS");
	misaligned16(&m, dir);
	char cmd[800];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		tap_ok(0, "removing %s", dir);
	gb_model_free(&m);
	unlink(path);
}

/* Random headers and random bytes: every load ends in a model or a one-line error. */
static void damaged(void)
{
	unsigned s = 99;
	int loaded = 0, refused = 0, clean = 1;
	static unsigned char buf[1 << 14];
	for (int trial = 0; trial < 400; trial++) {
		size_t len = 4 + rnd(&s) % (sizeof buf - 4);
		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)rnd(&s);
		int32_t *h = (int32_t *)buf;
		if (trial % 2) { /* plausible small sizes, so that the size check is what decides */
			int base = trial % 4 == 1 ? 0 : 2;
			if (base) {
				h[0] = 0x616b3432, h[1] = 1 + (int32_t)(rnd(&s) % 2);
			}
			for (int i = 0; i < 7; i++)
				h[base + i] = 1 + (int32_t)(rnd(&s) % 8) * (i == 5 ? 40 : 1) - (rnd(&s) % 16 == 0 ? 20 : 0);
			buf[36] = (unsigned char)(rnd(&s) % 2);
		}
		FILE *f = fopen(path, "wb");
		fwrite(buf, 1, len, f);
		fclose(f);
		gb_model m;
		gb_err err = { "" };
		if (gb_model_load(&m, path, &err) == 0) {
			loaded++;
			gb_model_free(&m);
		} else {
			refused++;
			clean &= err.msg[0] && !strchr(err.msg, '\n');
		}
		gb_l2c_tok *t;
		if (gb_l2c_tok_load(path, 1 + (int)(rnd(&s) % 300), &t, &err) == 0)
			gb_l2c_tok_free(t);
		else
			clean &= err.msg[0] && !strchr(err.msg, '\n');
	}
	tap_ok(clean && loaded + refused == 400, "400 random checkpoints and tokenizer.bin files: %d refused with one line "
	       "each, %d loaded", refused, loaded);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/gb_l2c_tok.XXXXXX", t && *t ? t : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0) {
		printf("1..0 # SKIP cannot make a temporary file\n");
		return 0;
	}
	close(fd);
	by_hand();
	random_cases();
	refusals();
	copies();
	damaged();
	unlink(path);
	return tap_done();
}
