/* safetensors.c — the safetensors container (see safetensors.h): the header parsed and every
 * entry checked against the file before any byte is read, F16 and BF16 converted to F32,
 * F32 used in place from the map when aligned, and the writer. */
#include "model/formats/safetensors.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_entry {
	const char *name;
	int dtype;            /* 0 F32, 1 F16, 2 BF16 */
	int ndim;
	int64_t shape[8];
	size_t begin, end;    /* offsets into the data area */
	int used;
} st_entry;

static int cmp_begin(const void *a, const void *b)
{
	const st_entry *x = *(st_entry *const *)a, *y = *(st_entry *const *)b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023, bits;
	if (exp == 0) {
		if (!man) {
			bits = sign;
		} else { /* subnormal: normalize */
			int e = -1;
			do {
				e++;
				man <<= 1;
			} while (!(man & 1024));
			bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 1023) << 13;
		}
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | man << 13;
	} else {
		bits = sign | (exp - 15 + 127) << 23 | man << 13;
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static float bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

/* Parses and checks the header; entries point into *root's strings. */
static int st_parse(const gb_map *map, const char *path, json_t **root, st_entry **out, int *n_out,
                    size_t *data_start, gb_err *err)
{
	*root = NULL;
	*out = NULL;
	*n_out = 0;
	if (map->len < 8)
		return gb_fail(err, "%s: truncated (%zu bytes; a safetensors file starts with an 8-byte header length)",
		               path, map->len);
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | map->data[i];
	if (hlen > map->len - 8)
		return gb_fail(err, "%s: header length %llu runs past the end of the file (%zu bytes)", path,
		               (unsigned long long)hlen, map->len);
	json_error_t je;
	json_t *h = json_loadb((const char *)map->data + 8, (size_t)hlen, 0, &je);
	if (!h)
		return gb_fail(err, "%s: broken JSON header: %s", path, je.text);
	if (!json_is_object(h)) {
		json_decref(h);
		return gb_fail(err, "%s: the header is not a JSON object", path);
	}
	size_t data_len = map->len - 8 - (size_t)hlen;
	st_entry *e = calloc(json_object_size(h) + 1, sizeof *e);
	if (!e) {
		json_decref(h);
		return gb_fail(err, "%s: out of memory", path);
	}
	int n = 0;
	const char *key;
	json_t *v;
	json_object_foreach(h, key, v) {
		if (!strcmp(key, "__metadata__"))
			continue;
		st_entry *t = &e[n];
		t->name = key;
		json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
		       *off = json_object_get(v, "data_offsets");
		if (!json_is_object(v) || !json_is_string(dt) || !json_is_array(sh) || !json_is_array(off) ||
		    json_array_size(off) != 2 || !json_is_integer(json_array_get(off, 0)) ||
		    !json_is_integer(json_array_get(off, 1))) {
			gb_fail(err, "%s: tensor \"%s\": header entry needs dtype, shape and two data_offsets", path, key);
			goto fail;
		}
		const char *d = json_string_value(dt);
		size_t esz;
		if (!strcmp(d, "F32"))
			t->dtype = 0, esz = 4;
		else if (!strcmp(d, "F16"))
			t->dtype = 1, esz = 2;
		else if (!strcmp(d, "BF16"))
			t->dtype = 2, esz = 2;
		else {
			gb_fail(err, "%s: tensor \"%s\" has dtype %s; glassbox reads F32, F16 and BF16", path, key, d);
			goto fail;
		}
		t->ndim = (int)json_array_size(sh);
		if (t->ndim > 8) {
			gb_fail(err, "%s: tensor \"%s\" has %d dimensions", path, key, t->ndim);
			goto fail;
		}
		uint64_t count = 1;
		for (int i = 0; i < t->ndim; i++) {
			json_t *s = json_array_get(sh, (size_t)i);
			if (!json_is_integer(s) || json_integer_value(s) < 0 || json_integer_value(s) > (1ll << 40)) {
				gb_fail(err, "%s: tensor \"%s\" has a bad shape", path, key);
				goto fail;
			}
			t->shape[i] = json_integer_value(s);
			count *= (uint64_t)t->shape[i];
			if (count > (1ull << 40)) {
				gb_fail(err, "%s: tensor \"%s\" is impossibly large", path, key);
				goto fail;
			}
		}
		json_int_t b = json_integer_value(json_array_get(off, 0)), en = json_integer_value(json_array_get(off, 1));
		if (b < 0 || en < b || (uint64_t)en > data_len) {
			gb_fail(err, "%s: tensor \"%s\" has offsets [%lld, %lld] outside the data (%zu bytes)", path, key,
			        (long long)b, (long long)en, data_len);
			goto fail;
		}
		if ((uint64_t)(en - b) != count * esz) {
			gb_fail(err, "%s: tensor \"%s\": offsets span %lld bytes but shape and dtype need %llu", path, key,
			        (long long)(en - b), (unsigned long long)(count * esz));
			goto fail;
		}
		t->begin = (size_t)b;
		t->end = (size_t)en;
		n++;
	}
	/* Overlap check: sort by start, each must end before the next begins. */
	st_entry **sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
	if (!sorted) {
		gb_fail(err, "%s: out of memory", path);
		goto fail;
	}
	/* Empty tensors occupy no bytes and cannot overlap anything. */
	int m = 0;
	for (int i = 0; i < n; i++)
		if (e[i].end > e[i].begin)
			sorted[m++] = &e[i];
	qsort(sorted, (size_t)m, sizeof *sorted, cmp_begin);
	for (int i = 1; i < m; i++)
		if (sorted[i]->begin < sorted[i - 1]->end) {
			gb_fail(err, "%s: tensors \"%s\" and \"%s\" overlap", path, sorted[i - 1]->name, sorted[i]->name);
			free(sorted);
			goto fail;
		}
	free(sorted);
	*root = h;
	*out = e;
	*n_out = n;
	*data_start = 8 + (size_t)hlen;
	return 0;
fail:
	free(e);
	json_decref(h);
	return -1;
}

static st_entry *st_find(st_entry *e, int n, const char *name, int family)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	/* Some GPT-2 checkpoints prefix every name with "transformer." */
	if (family == GB_FAM_GPT2)
		for (int i = 0; i < n; i++)
			if (!strncmp(e[i].name, "transformer.", 12) && !strcmp(e[i].name + 12, name))
				return &e[i];
	return NULL;
}

static int check_finite(const gb_param *p, const char *path, gb_err *err)
{
	for (size_t i = 0; i < p->n; i++)
		if (!isfinite(p->data[i]))
			return gb_fail(err, "%s: tensor \"%s\" holds %s at element %zu", path, p->name,
			               isnan(p->data[i]) ? "NaN" : "an infinite value", i);
	return 0;
}

int gb_safetensors_load(gb_model *m, const char *path, gb_err *err)
{
	json_t *root;
	st_entry *e;
	int n;
	size_t start = 0;
	if (gb_map_file(&m->map, path, err))
		return -1;
	if (st_parse(&m->map, path, &root, &e, &n, &start, err))
		return -1;
	int rc = -1;
	size_t need = 0; /* floats to own: converted or misaligned tensors */
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		st_entry *t = st_find(e, n, p->name, m->cfg.family);
		if (!t) {
			gb_fail(err, "%s: tensor \"%s\" is missing (the config asks for it)", path, p->name);
			goto out;
		}
		if (t->used) {
			gb_fail(err, "%s: tensor \"%s\" is listed twice", path, t->name);
			goto out;
		}
		t->used = 1;
		int64_t prod = 1;
		for (int d = 0; d < t->ndim; d++)
			prod *= t->shape[d];
		int ok = t->ndim == p->ndim && t->shape[0] == p->shape[0] && (p->ndim == 1 || t->shape[1] == p->shape[1]);
		if (!ok) {
			char have[96] = "", want[64];
			for (int d = 0; d < t->ndim; d++)
				snprintf(have + strlen(have), sizeof have - strlen(have), "%s%lld", d ? ", " : "",
				         (long long)t->shape[d]);
			if (p->ndim == 1)
				snprintf(want, sizeof want, "%d", p->shape[0]);
			else
				snprintf(want, sizeof want, "%d, %d", p->shape[0], p->shape[1]);
			gb_fail(err, "%s: tensor \"%s\" has shape (%s); the config needs (%s)", path, p->name, have, want);
			goto out;
		}
		const unsigned char *src = m->map.data + start + t->begin;
		if (t->dtype == 0 && ((uintptr_t)src & 3) == 0)
			p->data = (float *)src;
		else
			need += p->n;
	}
	for (int i = 0; i < n; i++)
		if (!e[i].used) {
			gb_fail(err, "%s: tensor \"%s\" is not part of this architecture (check config.json)", path, e[i].name);
			goto out;
		}
	if (need) {
		m->owned = malloc(need * sizeof(float));
		if (!m->owned) {
			gb_fail(err, "%s: out of memory", path);
			goto out;
		}
		float *dst = m->owned;
		for (int i = 0; i < m->n_params; i++) {
			gb_param *p = &m->params[i];
			if (p->data)
				continue;
			st_entry *t = st_find(e, n, p->name, m->cfg.family);
			const unsigned char *src = m->map.data + start + t->begin;
			for (size_t k = 0; k < p->n; k++) {
				if (t->dtype == 0) {
					memcpy(&dst[k], src + 4 * k, 4);
				} else {
					uint16_t h = (uint16_t)(src[2 * k] | src[2 * k + 1] << 8);
					dst[k] = t->dtype == 1 ? half_to_float(h) : bf16_to_float(h);
				}
			}
			p->data = dst;
			dst += p->n;
		}
	}
	for (int i = 0; i < m->n_params; i++)
		if (check_finite(&m->params[i], path, err))
			goto out;
	rc = 0;
out:
	free(e);
	json_decref(root);
	return rc;
}

int gb_safetensors_write(const gb_model *m, const char *path, const char *const *prefixes, const float *const *data,
                         int n_blocks, const char *const *meta, int n_meta, gb_err *err)
{
	json_t *h = json_object();
	size_t off = 0;
	char name[256];
	for (int b = 0; b < n_blocks; b++)
		for (int i = 0; i < m->n_params; i++) {
			const gb_param *p = &m->params[i];
			json_t *e = json_object(), *shape = json_array(), *offs = json_array();
			for (int d = 0; d < p->ndim; d++)
				json_array_append_new(shape, json_integer(p->shape[d]));
			json_array_append_new(offs, json_integer((json_int_t)off));
			off += p->n * 4;
			json_array_append_new(offs, json_integer((json_int_t)off));
			json_object_set_new(e, "dtype", json_string("F32"));
			json_object_set_new(e, "shape", shape);
			json_object_set_new(e, "data_offsets", offs);
			snprintf(name, sizeof name, "%s%s", prefixes[b], p->name);
			json_object_set_new(h, name, e);
		}
	json_t *mt = json_object();
	json_object_set_new(mt, "format", json_string("pt"));
	for (int i = 0; i < n_meta; i++)
		json_object_set_new(mt, meta[2 * i], json_string(meta[2 * i + 1]));
	json_object_set_new(h, "__metadata__", mt);
	char *text = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(h);
	if (!text)
		return gb_fail(err, "%s: out of memory", path);
	/* Pad the header with spaces so the data starts 8-byte aligned (as the format advises). */
	size_t hlen = strlen(text), padded = (hlen + 7) & ~(size_t)7;
	unsigned char len8[8];
	for (int i = 0; i < 8; i++)
		len8[i] = (unsigned char)(padded >> (8 * i));
	gb_file w;
	if (gb_file_begin(&w, path, err)) {
		free(text);
		return -1;
	}
	fwrite(len8, 1, 8, w.f);
	fwrite(text, 1, hlen, w.f);
	for (size_t i = hlen; i < padded; i++)
		fputc(' ', w.f);
	free(text);
	for (int b = 0; b < n_blocks; b++)
		for (int i = 0; i < m->n_params; i++) /* the host is little-endian, as the format */
			fwrite(data[(size_t)b * m->n_params + i], sizeof(float), m->params[i].n, w.f);
	return gb_file_commit(&w, err);
}
