/* ref.c — the reference kernel table ("ref") and the activation definitions.
 *
 * Contract: every result is computed the obvious way, in double, with sums taken in a fixed
 * order (k = 0..K-1, i = 0..n-1) on the calling thread, then rounded once to float. This table
 * is the oracle the tests hold every other table to, so it stays plain: no blocking, no SIMD,
 * no threads, and it leaves the floating-point environment alone (denormals stay denormal,
 * which the lesson on kernels shows next to the fast table). */
#include "model/kernels/kernels.h"
#include "model/config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double gb_act_ref(double x, int act)
{
	switch (act) {
	case GB_ACT_RELU:
		return x > 0 ? x : 0;
	case GB_ACT_GELU:
		/* x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2 = erfc(-x / sqrt 2) / 2: the erfc
		 * form keeps full relative precision in the far negative tail, where 1 + erf cancels. */
		return x * 0.5 * erfc(-x / sqrt(2.0));
	case GB_ACT_GELU_TANH: {
		/* 0.5 x (1 + tanh u), written as x / (1 + e^(-2u)): the same function (1 + tanh u =
		 * 2 / (1 + e^(-2u))), but 1 + tanh u cancels to 0 in double once u < -19. */
		double u = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
		return x / (1.0 + exp(-2.0 * u));
	}
	case GB_ACT_SILU:
		return x / (1.0 + exp(-x));
	}
	return NAN; /* an unknown act is a caller bug; NaN makes it visible in every figure */
}

/* out (M,N) = a (M,K) · B + bias (N); B (K,N) is b, or b (N,K) transposed when b_trans. */
static void ref_matmul(float *out, const float *a, const float *b, const float *bias,
                       int M, int K, int N, int b_trans)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < K; k++) {
				double bkj = b_trans ? b[(size_t)j * K + k] : b[(size_t)k * N + j];
				s += (double)a[(size_t)i * K + k] * bkj;
			}
			if (bias)
				s += bias[j];
			out[(size_t)i * N + j] = (float)s;
		}
}

float gb_w16_to_float(uint16_t v, int wtype)
{
	if (wtype == GB_W_BF16) { /* the top half of a float */
		uint32_t u = (uint32_t)v << 16;
		float f;
		memcpy(&f, &u, sizeof f);
		return f;
	}
	if (wtype == GB_W_F16) { /* sign, 5 exponent bits (bias 15), 10 fraction bits */
		int e = (v >> 10) & 31, f = v & 1023;
		float mag = e == 0 ? ldexpf((float)f, -24)                 /* zero and subnormals */
		          : e == 31 ? (f ? NAN : INFINITY)
		          : ldexpf((float)(f | 1024), e - 25);
		return v & 0x8000 ? -mag : mag;
	}
	return NAN;
}

/* matmul on b widened element by element. */
static void ref_matmul_w16(float *out, const float *a, const uint16_t *b, int wtype,
                           const float *bias, int M, int K, int N, int b_trans)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < K; k++) {
				uint16_t w = b_trans ? b[(size_t)j * K + k] : b[(size_t)k * N + j];
				s += (double)a[(size_t)i * K + k] * gb_w16_to_float(w, wtype);
			}
			if (bias)
				s += bias[j];
			out[(size_t)i * N + j] = (float)s;
		}
}

/* x (rows, n), in place. */
static void ref_softmax(float *x, int rows, int n)
{
	for (int r = 0; r < rows; r++) {
		float *row = x + (size_t)r * n;
		double max = -INFINITY, sum = 0;
		for (int j = 0; j < n; j++)
			if (row[j] > max)
				max = row[j];
		if (max == -INFINITY) {
			/* Fully masked: nothing to attend to. exp(-inf - -inf) would be NaN. */
			for (int j = 0; j < n; j++)
				row[j] = 0;
			continue;
		}
		for (int j = 0; j < n; j++)
			sum += exp(row[j] - max); /* exp(-inf) is exactly 0 */
		for (int j = 0; j < n; j++)
			row[j] = (float)(exp(row[j] - max) / sum);
	}
}

/* out, x (rows, d); mean, var (rows); g, b (d) or NULL. */
static void ref_layernorm(float *out, float *mean, float *var, const float *x, const float *g,
                          const float *b, int rows, int d, float eps, int textbook)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		float *yr = out + (size_t)r * d;
		double mu = 0, v = 0, denom;
		for (int j = 0; j < d; j++)
			mu += xr[j];
		mu /= d;
		for (int j = 0; j < d; j++)
			v += (xr[j] - mu) * (xr[j] - mu);
		v /= d; /* population variance, as PyTorch's LayerNorm */
		denom = textbook ? sqrt(v) + eps : sqrt(v + eps);
		if (mean)
			mean[r] = (float)mu;
		if (var)
			var[r] = (float)v;
		for (int j = 0; j < d; j++) {
			double y = (xr[j] - mu) / denom;
			if (g)
				y *= g[j];
			if (b)
				y += b[j];
			yr[j] = (float)y; /* after every read of xr[j]: out may alias x */
		}
	}
}

/* out, x (rows, d); rms (rows); g (d) or NULL. */
static void ref_rmsnorm(float *out, float *rms, const float *x, const float *g, int rows, int d,
                        float eps)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		float *yr = out + (size_t)r * d;
		double ss = 0, q;
		for (int j = 0; j < d; j++)
			ss += (double)xr[j] * xr[j];
		q = sqrt(ss / d + eps);
		if (rms)
			rms[r] = (float)q;
		for (int j = 0; j < d; j++)
			yr[j] = (float)(g ? g[j] * (xr[j] / q) : xr[j] / q);
	}
}

/* out, x (n). */
static void ref_activate(float *out, const float *x, size_t n, int act)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (float)gb_act_ref(x[i], act);
}

/* out, a, b (n). */
static void ref_mul(float *out, const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (float)((double)a[i] * b[i]);
}

/* y, x (n). */
static void ref_add(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = (float)((double)y[i] + x[i]);
}

/* The quadratic form: every a_ij, then the normalised sum, in double. */
static void ref_linear_attn(float *out, const float *fq, const float *fk, const float *v, int Tq, int Tk, int E,
                            int pos0, int causal, const unsigned char *key_ok)
{
	double *acc = malloc(sizeof(double) * (size_t)(E > 0 ? E : 1));
	for (int i = 0; i < Tq; i++) {
		int hi = causal ? pos0 + i + 1 : Tk;
		double z = 0;
		for (int e = 0; acc && e < E; e++)
			acc[e] = 0;
		for (int j = 0; j < hi && j < Tk; j++) {
			if (key_ok && !key_ok[j])
				continue;
			double a = 0;
			for (int e = 0; e < E; e++)
				a += (double)fq[(size_t)i * E + e] * fk[(size_t)j * E + e];
			z += a;
			for (int e = 0; acc && e < E; e++)
				acc[e] += a * v[(size_t)j * E + e];
		}
		for (int e = 0; e < E; e++)
			out[(size_t)i * E + e] = acc && z > 0 ? (float)(acc[e] / z) : 0.0f;
	}
	free(acc);
}

static const gb_kernels ref_table = {
	.name = "ref",
	.matmul = ref_matmul,
	.matmul_w16 = ref_matmul_w16,
	.softmax = ref_softmax,
	.layernorm = ref_layernorm,
	.rmsnorm = ref_rmsnorm,
	.activate = ref_activate,
	.mul = ref_mul,
	.add = ref_add,
	.linear_attn = ref_linear_attn,
};

const gb_kernels *gb_kernels_ref(void)
{
	return &ref_table;
}
