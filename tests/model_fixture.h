/* model_fixture.h — the small random models the engine's tests run on (t_forward, t_kvcache,
 * t_longtrace, t_variants): a family's defaults at a size that runs in milliseconds, and weights
 * whose norm gains and biases are moved away from 1 and 0 so that they matter; or, for a test
 * that trains, the weights a recipe's training starts from. */
#ifndef GLASSBOX_TESTS_MODEL_FIXTURE_H
#define GLASSBOX_TESTS_MODEL_FIXTURE_H

#include "model/config.h"
#include "model/model.h"
#include "model/rng.h"
#include "tests/tap.h"

static inline gb_config base(int family)
{
	gb_config c;
	gb_config_defaults(&c, family);
	c.d_model = 24;
	c.n_layer = 2;
	c.n_enc_layer = family == GB_FAM_ENCDEC ? 2 : 0;
	c.n_head = 4;
	c.n_kv_head = 4;
	c.d_head = 6;
	c.d_ffn = 40;
	c.vocab = 37;
	c.n_ctx = 32;
	c.bos_id = c.dec_start_id = 1;
	return c;
}

/* Random weights, and norm gains and biases away from 1 and 0 so they matter. */
static inline int make(gb_model *m, const gb_config *c, uint64_t seed)
{
	gb_err err;
	if (gb_model_init(m, c, seed, 0.25f, &err)) {
		tap_diag("init: %s", err.msg);
		return -1;
	}
	gb_rng r;
	gb_rng_seed(&r, seed + 99);
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		if (p->init)
			for (size_t k = 0; k < p->n; k++)
				p->data[k] = (p->init == 1 ? 1.0f : 0.0f) + 0.1f * (float)gb_rng_normal(&r);
	}
	return 0;
}

/* The weights a recipe's training starts from instead (gb_model_init's scale 0.02, norm gains
 * 1 and biases 0): for a test that trains the model and expects it to learn as tiny-lm does. */
static inline int make_untrained(gb_model *m, const gb_config *c, uint64_t seed)
{
	gb_err err;
	if (gb_model_init(m, c, seed, 0.02f, &err)) {
		tap_diag("init: %s", err.msg);
		return -1;
	}
	return 0;
}

#endif
