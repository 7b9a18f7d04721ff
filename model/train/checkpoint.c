/* checkpoint.c — see train.h. Owns a checkpoint's files beside the model's own: writing the
 * optimizer state (optimizer.safetensors, with the schedule, the step and the training time in
 * its metadata, tied to the weights by a hash), reading its summary, and resuming a trainer
 * from it. The trainer itself (backward, AdamW, schedules) is train.c's. */
#include "model/train/train.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fileio.h"
#include "model/formats/hf_config.h"
#include "model/formats/safetensors.h"

/* FNV-1a over the weights' bytes, 64-bit words at a time: ties an optimizer file to the
 * weights it was saved with (a save interrupted between the two files leaves them apart). */
static uint64_t weights_hash(const gb_model *m)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *p = (const unsigned char *)m->owned;
	size_t n = m->n_weights * sizeof(float), i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static const char *sched_name(int s)
{
	return s == GB_SCHED_NOAM ? "noam" : s == GB_SCHED_COSINE ? "cosine" : "constant";
}

int gb_train_save(const gb_trainer *t, const char *dir, gb_err *err)
{
	const gb_model *m = t->m;
	char path[1200];
	if (gb_model_save(m, dir, err))
		return -1;
	snprintf(path, sizeof path, "%s/optimizer.safetensors", dir);
	char step[32], rng[80], hash[32], opts[200];
	snprintf(step, sizeof step, "%ld", t->step);
	snprintf(rng, sizeof rng, "%016llx%016llx%016llx%016llx", (unsigned long long)t->rng.s[0],
	         (unsigned long long)t->rng.s[1], (unsigned long long)t->rng.s[2], (unsigned long long)t->rng.s[3]);
	snprintf(hash, sizeof hash, "%016llx", (unsigned long long)weights_hash(m));
	snprintf(opts, sizeof opts,
	         "lr=%.9g schedule=%s warmup=%d total=%d lr_min=%.9g betas=%g,%g eps=%g wd=%g clip=%g smoothing=%g",
	         t->o.lr, sched_name(t->o.schedule), t->o.warmup, t->o.total_steps, t->o.lr_min, t->o.beta1, t->o.beta2,
	         t->o.eps, t->o.weight_decay, t->o.clip, t->o.label_smoothing);
	char secs[32];
	snprintf(secs, sizeof secs, "%011.1f", t->seconds); /* fixed width: runs differ only in these digits */
	const char *meta[] = { "format", "glassbox-adamw", "step",        step, "rng",     rng,
		               "weights_hash", hash, "options", opts, "seconds", secs };
	/* The moments are laid out as the parameter list in one block each. */
	const float **data = malloc(sizeof *data * 2 * (size_t)m->n_params);
	if (!data)
		return gb_fail(err, "%s: out of memory", path);
	size_t off = 0;
	for (int i = 0; i < m->n_params; i++) {
		data[i] = t->mom + off;
		data[m->n_params + i] = t->vel + off;
		off += m->params[i].n;
	}
	const char *prefixes[2] = { "exp_avg.", "exp_avg_sq." };
	int rc = gb_safetensors_write(m, path, prefixes, data, 2, meta, 6, 0, err);
	free(data);
	return rc;
}

/* The first field where two configurations differ, described for a message; NULL if none. */
static const char *config_diff(const gb_config *a, const gb_config *b, char *buf, size_t n)
{
	static const struct { const char *name; size_t off; } ints[] = {
#define F(x) { #x, offsetof(gb_config, x) }
		F(family), F(encdec), F(n_layer), F(n_enc_layer), F(d_model), F(n_head), F(n_kv_head), F(d_head),
		F(d_ffn), F(vocab), F(n_ctx), F(prenorm), F(norm), F(final_norm), F(pos), F(act), F(ffn), F(bias),
		F(qkv_bias), F(ffn_bias), F(norm_bias), F(tied), F(scale_embed), F(window), F(textbook_ln), F(bos_id),
		F(eos_id), F(pad_id), F(dec_start_id),
#undef F
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		int x = *(const int *)((const char *)a + ints[i].off), y = *(const int *)((const char *)b + ints[i].off);
		if (x != y) {
			snprintf(buf, n, "%s is %d there, %d here", ints[i].name, x, y);
			return buf;
		}
	}
	if (a->norm_eps != b->norm_eps || a->rope_theta != b->rope_theta) {
		snprintf(buf, n, "norm_eps/rope_theta are %g/%g there, %g/%g here", a->norm_eps, a->rope_theta, b->norm_eps,
		         b->rope_theta);
		return buf;
	}
	return NULL;
}

static int parse_hex64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < 16; i++) {
		int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* The JSON header of a mapped safetensors file (NULL if it has none); *hlen its length. */
static json_t *st_header(const gb_map *map, uint64_t *hlen)
{
	uint64_t n = 0;
	if (map->len < 8)
		return NULL;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | map->data[i];
	if (n > map->len - 8)
		return NULL;
	json_error_t je;
	*hlen = n;
	return json_loadb((const char *)map->data + 8, (size_t)n, 0, &je);
}

/* The number after " key=" (or at the start) in an options string; 0 when absent. */
static int opt_num(const char *op, const char *key, double *out)
{
	size_t k = strlen(key);
	for (const char *o = op; o && (o = strstr(o, key)); o++)
		if ((o == op || o[-1] == ' ') && o[k] == '=') {
			char *end;
			errno = 0;
			double v = strtod(o + k + 1, &end);
			if (end == o + k + 1 || (*end != ' ' && *end) || errno || !isfinite(v))
				return 0;
			*out = v;
			return 1;
		}
	return 0;
}

/* The step and the schedule's total (-1 when the options do not record it) of an optimizer
 * file's metadata; -1 if it is not glassbox's. */
static int meta_info(json_t *meta, gb_checkpoint_info *info)
{
	const char *fmt = json_string_value(json_object_get(meta, "format"));
	const char *st = json_string_value(json_object_get(meta, "step"));
	const char *op = json_string_value(json_object_get(meta, "options"));
	if (!fmt || strcmp(fmt, "glassbox-adamw") || !st)
		return -1;
	char *end;
	errno = 0;
	long step = strtol(st, &end, 10);
	if (*end || end == st || step < 0 || errno)
		return -1;
	info->step = step;
	info->total_steps = -1;
	const char *sec = json_string_value(json_object_get(meta, "seconds"));
	double v = sec ? strtod(sec, &end) : 0;
	info->seconds = sec && end > sec && !*end && v >= 0 && v < 1e9 ? v : 0;
	info->lr = info->lr_min = -1;
	info->warmup = info->schedule = -1;
	/* "lr=0.001 schedule=cosine warmup=200 total=3000 lr_min=5e-05 betas=..." (gb_train_save;
	 * files before lr_min was recorded lack it) */
	if (opt_num(op, "total", &v) && v == (int)v && v >= 0)
		info->total_steps = (int)v;
	if (opt_num(op, "warmup", &v) && v == (int)v && v >= 0)
		info->warmup = (int)v;
	if (opt_num(op, "lr", &v) && v > 0)
		info->lr = v;
	if (opt_num(op, "lr_min", &v) && v >= 0)
		info->lr_min = v;
	for (const char *o = op; o && (o = strstr(o, "schedule=")); o++)
		if (o == op || o[-1] == ' ') {
			for (int k = GB_SCHED_CONSTANT; k <= GB_SCHED_COSINE; k++) {
				size_t n = strlen(sched_name(k));
				if (!strncmp(o + 9, sched_name(k), n) && (o[9 + n] == ' ' || !o[9 + n]))
					info->schedule = k;
			}
			break;
		}
	return 0;
}

int gb_train_checkpoint_info(const char *dir, gb_checkpoint_info *info, gb_err *err)
{
	char path[1200];
	gb_map map = { 0 };
	uint64_t hlen;
	snprintf(path, sizeof path, "%s/optimizer.safetensors", dir);
	if (gb_map_file(&map, path, err))
		return -1;
	json_t *h = st_header(&map, &hlen);
	int rc = meta_info(json_object_get(h, "__metadata__"), info);
	json_decref(h);
	gb_unmap(&map);
	return rc ? gb_fail(err, "%s: not a glassbox optimizer file (or damaged)", path) : 0;
}

/* Reads optimizer.safetensors into mom, vel (n_weights each); step, schedule total, rng and
 * the weights hash from its metadata. */
static int read_optimizer(const gb_model *m, const char *path, float *mom, float *vel, gb_checkpoint_info *info,
                          gb_rng *rng, uint64_t *hash, gb_err *err)
{
	gb_map map = { 0 };
	json_t *h = NULL;
	int rc = -1;
	char name[160];
	if (gb_map_file(&map, path, err))
		return -1;
	uint64_t hlen = 0;
	if (!(h = st_header(&map, &hlen)))
		goto bad;
	json_t *meta = json_object_get(h, "__metadata__");
	const char *rs = json_string_value(json_object_get(meta, "rng"));
	const char *hs = json_string_value(json_object_get(meta, "weights_hash"));
	if (meta_info(meta, info) || !rs || strlen(rs) != 64 || !hs || strlen(hs) != 16)
		goto bad;
	for (int i = 0; i < 4; i++)
		if (parse_hex64(rs + 16 * i, &rng->s[i]))
			goto bad;
	if (parse_hex64(hs, hash))
		goto bad;
	size_t data_len = map.len - 8 - (size_t)hlen;
	const unsigned char *data = map.data + 8 + hlen;
	for (int pass = 0; pass < 2; pass++) {
		float *dst = pass ? vel : mom;
		for (int i = 0; i < m->n_params; i++) {
			const gb_param *p = &m->params[i];
			snprintf(name, sizeof name, "%s.%s", pass ? "exp_avg_sq" : "exp_avg", p->name);
			json_t *e = json_object_get(h, name), *offs = json_object_get(e, "data_offsets");
			const char *dt = json_string_value(json_object_get(e, "dtype"));
			json_int_t b0 = json_integer_value(json_array_get(offs, 0)), b1 = json_integer_value(json_array_get(offs, 1));
			if (!e || !dt || strcmp(dt, "F32") || b0 < 0 || b1 < b0 || (uint64_t)b1 > data_len ||
			    (size_t)(b1 - b0) != p->n * sizeof(float)) {
				gb_fail(err, "%s: tensor \"%s\" is missing or has the wrong size", path, name);
				goto out;
			}
			memcpy(dst, data + b0, p->n * sizeof(float));
			dst += p->n;
		}
	}
	rc = 0;
	goto out;
bad:
	gb_fail(err, "%s: not a glassbox optimizer file (or damaged)", path);
out:
	json_decref(h);
	gb_unmap(&map);
	return rc;
}

int gb_train_resume(gb_trainer *t, const char *dir, gb_err *err)
{
	gb_model *m = t->m;
	gb_config c;
	char path[1200], why[160];
	snprintf(path, sizeof path, "%s/config.json", dir);
	if (gb_config_load(&c, path, err))
		return -1;
	if (config_diff(&c, &m->cfg, why, sizeof why))
		return gb_fail(err, "%s: the checkpoint is another model's configuration (%s); resume with the "
		               "configuration it was trained with, or start a new run", dir, why);
	gb_model cp;
	if (gb_model_load(&cp, dir, err))
		return -1;
	float *mom = malloc(m->n_weights * sizeof *mom), *vel = malloc(m->n_weights * sizeof *vel);
	int rc = -1;
	gb_checkpoint_info info;
	gb_rng rng;
	uint64_t hash;
	if (!mom || !vel) {
		gb_fail(err, "out of memory");
		goto out;
	}
	if (cp.n_weights != m->n_weights || cp.n_params != m->n_params) {
		gb_fail(err, "%s: the checkpoint's parameters do not match this model", dir);
		goto out;
	}
	snprintf(path, sizeof path, "%s/optimizer.safetensors", dir);
	if (read_optimizer(m, path, mom, vel, &info, &rng, &hash, err))
		goto out;
	/* Copy the weights in, then check they are the ones the optimizer state was saved with. */
	float *save = malloc(m->n_weights * sizeof *save);
	if (!save) {
		gb_fail(err, "out of memory");
		goto out;
	}
	memcpy(save, m->owned, m->n_weights * sizeof *save);
	for (int i = 0; i < m->n_params; i++)
		memcpy(m->params[i].data, cp.params[i].data, m->params[i].n * sizeof(float));
	if (weights_hash(m) != hash) {
		memcpy(m->owned, save, m->n_weights * sizeof *save);
		free(save);
		gb_fail(err, "%s: optimizer.safetensors was saved with other weights than model.safetensors "
		        "(an interrupted save?); resume from another checkpoint", dir);
		goto out;
	}
	free(save);
	memcpy(t->mom, mom, m->n_weights * sizeof *mom);
	memcpy(t->vel, vel, m->n_weights * sizeof *vel);
	t->step = info.step;
	t->rng = rng;
	t->seconds = info.seconds;
	/* the schedule is the checkpoint's: its kind, peak, warm-up, total and floor (each one the
	 * file records; older files lack lr_min) */
	if (info.total_steps >= 0)
		t->o.total_steps = info.total_steps;
	if (info.schedule >= 0)
		t->o.schedule = info.schedule;
	if (info.warmup >= 0)
		t->o.warmup = info.warmup;
	if (info.lr > 0)
		t->o.lr = (float)info.lr;
	if (info.lr_min >= 0)
		t->o.lr_min = (float)info.lr_min;
	rc = 0;
out:
	free(mom);
	free(vel);
	gb_model_free(&cp);
	return rc;
}
