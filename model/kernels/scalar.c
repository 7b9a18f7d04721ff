/* scalar.c — the fast table's portable path ("scalar"): plain C loops with float
 * accumulation, no SIMD, behind the same blocking and threading as the SIMD paths (fast.c
 * drives them through isa.h). It runs on any CPU, and its results are held to the reference
 * by the same tests as the SIMD paths. */
#include "model/kernels/isa.h"
#include "model/kernels/kernels.h"
#include "model/config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void pack_generic(float *dst, int nr, const float *b, int b_trans, int K, int N, int k0,
                         int kc, int j0, int nc)
{
	for (int p = 0; p * nr < nc; p++) {
		float *d = dst + (size_t)p * kc * nr;
		int jb = j0 + p * nr, jn = nc - p * nr < nr ? nc - p * nr : nr;
		for (int k = 0; k < kc; k++) {
			float *dk = d + (size_t)k * nr;
			if (!b_trans)
				memcpy(dk, b + (size_t)(k0 + k) * N + jb, (size_t)jn * sizeof *dk);
			else
				for (int j = 0; j < jn; j++)
					dk[j] = b[(size_t)(jb + j) * K + k0 + k];
			for (int j = jn; j < nr; j++)
				dk[j] = 0;
		}
	}
}

enum { S_MR = GB_MR_SCALAR, S_NR = 8 };

static void scalar_pack(float *dst, const float *b, int b_trans, int K, int N, int k0, int kc,
                        int j0, int nc)
{
	pack_generic(dst, S_NR, b, b_trans, K, N, k0, kc, j0, nc);
}

/* One S_MR × S_NR tile; only the stores look at m. B is read in place for at most S_DIRECT_M
 * rows (b_trans == 0: ldb = N), packed and zero-padded otherwise; either way a panel that ends
 * past column n reads only its n columns, so each stored element takes the same operations.
 * (Packing all of B for a few rows, as each 8-row task of a tiny model's batched products did
 * on 2 threads (forward.c, rows_lin), took a fifth of this table's time.) */
enum { S_DIRECT_M = 16 };

static void scalar_block(float *c, long ldc, const float *a, long lda, const float *b, long ldb,
                         long pstride, int m, int n, int kc, const float *bias, int accum)
{
	for (int i0 = 0; i0 < m; i0 += S_MR)
		for (int j0 = 0; j0 < n; j0 += S_NR) {
			const float *bp = b + (j0 / S_NR) * pstride;
			int mm = m - i0 < S_MR ? m - i0 : S_MR, nn = n - j0 < S_NR ? n - j0 : S_NR;
			float acc[S_MR][S_NR] = {{0}};
			const float *ar[S_MR];
			for (int i = 0; i < S_MR; i++)
				ar[i] = a + (i0 + (i < mm ? i : 0)) * lda; /* clamp: rows past m are never stored */
			if (nn == S_NR)
				for (int k = 0; k < kc; k++)
					for (int i = 0; i < S_MR; i++)
						for (int j = 0; j < S_NR; j++)
							acc[i][j] += ar[i][k] * bp[k * ldb + j];
			else
				for (int k = 0; k < kc; k++)
					for (int i = 0; i < S_MR; i++)
						for (int j = 0; j < nn; j++)
							acc[i][j] += ar[i][k] * bp[k * ldb + j];
			for (int i = 0; i < mm; i++)
				for (int j = 0; j < nn; j++) {
					float *cp = c + (i0 + i) * ldc + j0 + j;
					*cp = acc[i][j] + (accum ? *cp : bias ? bias[j0 + j] : 0.0f);
				}
		}
}

static void scalar_dots(float *out, long ldo, const float *a, int m, const float *b,
                        const float *bias, int K, int j0, int j1)
{
	for (int i = 0; i < m; i++)
		for (int j = j0; j < j1; j++) {
			const float *ai = a + (size_t)i * K, *bj = b + (size_t)j * K;
			float s = 0;
			for (int k = 0; k < K; k++)
				s += ai[k] * bj[k];
			out[i * ldo + j - j0] = s + (bias ? bias[j] : 0.0f);
		}
}

/* Column chunks of 64 accumulators keep b_trans == 0 reading rows of b in order. */
static void scalar_gemv(float *out, long ldo, const float *a, long lda, int m, const float *b,
                        int K, int N)
{
	for (int i = 0; i < m; i++)
		for (int jc = 0; jc < N; jc += 64) {
			int nc = N - jc < 64 ? N - jc : 64;
			float acc[64] = {0};
			for (int k = 0; k < K; k++) {
				const float *bk = b + (size_t)k * N + jc;
				for (int j = 0; j < nc; j++)
					acc[j] += a[i * lda + k] * bk[j];
			}
			memcpy(out + i * ldo + jc, acc, (size_t)nc * sizeof *acc);
		}
}

/* The 16-bit weight versions: the same loops on each weight widened. */
static void scalar_dots16(float *out, long ldo, const float *a, int m, const uint16_t *b, int wt,
                          const float *bias, int K, int j0, int j1)
{
	for (int i = 0; i < m; i++)
		for (int j = j0; j < j1; j++) {
			const float *ai = a + (size_t)i * K;
			const uint16_t *bj = b + (size_t)j * K;
			float s = 0;
			for (int k = 0; k < K; k++)
				s += ai[k] * gb_w16_to_float(bj[k], wt);
			out[i * ldo + j - j0] = s + (bias ? bias[j] : 0.0f);
		}
}

static void scalar_gemv16(float *out, long ldo, const float *a, long lda, int m, const uint16_t *b,
                          int wt, int K, int N)
{
	for (int i = 0; i < m; i++)
		for (int jc = 0; jc < N; jc += 64) {
			int nc = N - jc < 64 ? N - jc : 64;
			float acc[64] = {0};
			for (int k = 0; k < K; k++) {
				const uint16_t *bk = b + (size_t)k * N + jc;
				for (int j = 0; j < nc; j++)
					acc[j] += a[i * lda + k] * gb_w16_to_float(bk[j], wt);
			}
			memcpy(out + i * ldo + jc, acc, (size_t)nc * sizeof *acc);
		}
}

static void scalar_softmax(float *x, int rows, int n)
{
	for (int r = 0; r < rows; r++) {
		float *row = x + (size_t)r * n, max = -INFINITY, sum = 0, inv;
		for (int j = 0; j < n; j++)
			max = row[j] > max ? row[j] : max;
		if (max == -INFINITY) {
			memset(row, 0, (size_t)n * sizeof *row);
			continue;
		}
		for (int j = 0; j < n; j++)
			sum += row[j] = expf(row[j] - max);
		inv = 1.0f / sum;
		for (int j = 0; j < n; j++)
			row[j] *= inv;
	}
}

static void scalar_layernorm(float *out, float *mean, float *var, const float *x, const float *g,
                             const float *b, int rows, int d, float eps, int textbook)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		float *yr = out + (size_t)r * d;
		float mu = 0, v = 0, inv;
		for (int j = 0; j < d; j++)
			mu += xr[j];
		mu /= d;
		for (int j = 0; j < d; j++)
			v += (xr[j] - mu) * (xr[j] - mu);
		v /= d;
		inv = 1.0f / (textbook ? sqrtf(v) + eps : sqrtf(v + eps));
		if (mean)
			mean[r] = mu;
		if (var)
			var[r] = v;
		for (int j = 0; j < d; j++)
			yr[j] = (xr[j] - mu) * inv * (g ? g[j] : 1.0f) + (b ? b[j] : 0.0f);
	}
}

static void scalar_rmsnorm(float *out, float *rms, const float *x, const float *g, int rows,
                           int d, float eps)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		float *yr = out + (size_t)r * d;
		float ss = 0, q, inv;
		for (int j = 0; j < d; j++)
			ss += xr[j] * xr[j];
		q = sqrtf(ss / d + eps);
		inv = 1.0f / q;
		if (rms)
			rms[r] = q;
		for (int j = 0; j < d; j++)
			yr[j] = xr[j] * inv * (g ? g[j] : 1.0f);
	}
}

static void scalar_activate(float *out, const float *x, size_t n, int act)
{
	for (size_t i = 0; i < n; i++) {
		float v = x[i];
		switch (act) {
		case GB_ACT_RELU: out[i] = v > 0 ? v : 0; break;
		case GB_ACT_GELU: out[i] = v * 0.5f * erfcf(-v * (float)M_SQRT1_2); break;
		case GB_ACT_GELU_TANH: {
			/* 0.5 x (1 + tanh u) == x / (1 + exp(-2u)), without tanh's cancellation near -1 */
			float u = 0.7978845608f * (v + 0.044715f * v * v * v);
			out[i] = v / (1.0f + expf(-2.0f * u));
			break;
		}
		case GB_ACT_SILU: out[i] = v / (1.0f + expf(-v)); break;
		default: out[i] = NAN;
		}
	}
}

static void scalar_mul(float *out, const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = a[i] * b[i];
}

static void scalar_add(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] += x[i];
}

const gb_isa gb_isa_scalar = {
	.name = "scalar", .mr = S_MR, .nr = S_NR, .kc = 256, .direct_m = S_DIRECT_M, .dots_m = 4,
	.pack = scalar_pack, .block = scalar_block, .gemv = scalar_gemv, .dots = scalar_dots,
	.gemv16 = scalar_gemv16, .dots16 = scalar_dots16,
	.softmax = scalar_softmax, .layernorm = scalar_layernorm, .rmsnorm = scalar_rmsnorm,
	.activate = scalar_activate, .mul = scalar_mul, .add = scalar_add,
};
