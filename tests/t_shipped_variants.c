/* t_shipped_variants.c — tiny-lm's trained variants as shipped under assets/models (issue 19):
 * each is the architecture its preset describes (tiny-lm with one choice changed), within 10%
 * of tiny-lm's parameters, stored with its matrices as bf16, and its README reports the probes
 * and the best previous-token and induction heads that are measured now on the stored weights.
 * Together the variants take at most 40 MB. A variant not shipped yet is said, not failed: the
 * variants are trained a few per session. Runs from the repository root. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/formats/hf_config.h"
#include "model/heads.h"
#include "model/fileio.h"
#include "model/train/eval.h"
#include "model/train/recipe.h"
#include "tests/tap.h"

#define MODELS "assets/models"

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : (long)st.st_size;
}

/* The README's text, or NULL. */
static char *readme(const char *name)
{
	char path[256];
	gb_err err;
	snprintf(path, sizeof path, MODELS "/%s/README.md", name);
	return gb_read_file(path, 1 << 20, NULL, &err);
}

static void probes(const char *name, const gb_model *m, const char *md)
{
	gb_probe_score rows[8];
	int n;
	gb_err err;
	if (!tap_ok(gb_eval_model(m, gb_kernels_fast(), 300, rows, &n, &err) == 0, "%s: probes run", name)) {
		tap_diag("%s", err.msg);
		return;
	}
	for (int i = 0; i < n; i++) {
		char row[160];
		snprintf(row, sizeof row, "| %s | %.1f%% |", rows[i].name, 100 * rows[i].acc);
		tap_ok(md && strstr(md, row), "%s: README says what is measured now: %s", name, row);
	}
}

/* The best previous-token (on random runs) and induction heads, as README's head table rows. */
static void heads(const char *name, const gb_model *m, const char *md)
{
	int L = m->cfg.n_layer, H = m->cfg.n_head;
	gb_head_score *sc = malloc(sizeof *sc * (size_t)L * H);
	gb_err err;
	if (!sc || !tap_ok(gb_eval_heads(m, gb_kernels_fast(), sc, &err) == 0, "%s: head scores computed", name)) {
		free(sc);
		return;
	}
	int bp = 0, bi = 0;
	for (int i = 1; i < L * H; i++) {
		if (sc[i].prev_rand > sc[bp].prev_rand)
			bp = i;
		if (sc[i].induction > sc[bi].induction)
			bi = i;
	}
	const int pick[2] = { bp, bi };
	for (int k = 0; k < 2; k++) {
		const gb_head_score *h = &sc[pick[k]];
		char row[200];
		snprintf(row, sizeof row, "| %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f |", pick[k] / H + 1, pick[k] % H + 1,
		         h->prev, h->first, h->self, h->prev_rand, h->induction);
		tap_ok(md && strstr(md, row), "%s: README's row of the best %s head: %s", name,
		       k ? "induction" : "previous-token", row);
	}
	free(sc);
}

int main(void)
{
	gb_err err;
	gb_model base;
	size_t base_weights = 0;
	if (tap_ok(gb_model_load(&base, MODELS "/tiny-lm", &err) == 0, "tiny-lm loads")) {
		base_weights = base.n_weights;
		gb_model_free(&base);
	}
	long total = 0;
	int shipped = 0, missing = 0;
	for (int i = 0; gb_recipe_variant_info(i, NULL, NULL); i++) {
		const char *name = gb_recipe_variant_info(i, NULL, NULL);
		char dir[256], path[300];
		snprintf(dir, sizeof dir, MODELS "/%s", name);
		snprintf(path, sizeof path, "%s/model.safetensors", dir);
		if (file_size(path) < 0) {
			missing++;
			tap_diag("%s: not shipped yet (train --preset %s)", name, name);
			continue;
		}
		shipped++;
		static const char *const files[] = { "config.json", "model.safetensors", "tokenizer.json", "README.md",
			                             "loss.csv", "loss.png" };
		for (int f = 0; f < 6; f++) {
			snprintf(path, sizeof path, "%s/%s", dir, files[f]);
			long sz = file_size(path);
			tap_ok(sz > 0, "%s: has %s", name, files[f]);
			total += sz > 0 ? sz : 0;
		}
		gb_model m;
		gb_recipe r;
		if (!tap_ok(gb_model_load(&m, dir, &err) == 0, "%s loads", name)) {
			tap_diag("%s", err.msg);
			continue;
		}
		if (tap_ok(gb_recipe_preset(&r, name, &err) == 0, "%s: its preset exists", name)) {
			/* the configuration as config.json holds it: what the preset writes, field for field */
			char *want = gb_config_to_json(&r.cfg), *got = gb_config_to_json(&m.cfg);
			if (!tap_ok(want && got && !strcmp(want, got), "%s: config.json is the preset's architecture", name))
				tap_diag("preset: %s\nshipped: %s", want ? want : "-", got ? got : "-");
			free(want);
			free(got);
		}
		double rel = base_weights ? (double)m.n_weights / (double)base_weights - 1 : 1;
		tap_ok(fabs(rel) <= 0.10, "%s: %zu parameters, %+.1f%% of tiny-lm's %zu (within 10%%)", name, m.n_weights,
		       100 * rel, base_weights);
		snprintf(path, sizeof path, "%s/model.safetensors", dir);
		long bytes = file_size(path);
		tap_ok(bytes < (long)(2.5 * (double)m.n_weights) + 65536, "%s: stored as bf16 (%ld bytes for %zu weights)",
		       name, bytes, m.n_weights);
		char *md = readme(name);
		probes(name, &m, md);
		heads(name, &m, md);
		free(md);
		gb_model_free(&m);
	}
	tap_ok(total <= 40L << 20, "the %d shipped variants take %.1f MB together (at most 40 MB)", shipped,
	       total / 1048576.0);
	if (missing)
		tap_diag("%d of the variants are not shipped yet", missing);
	return tap_done();
}
