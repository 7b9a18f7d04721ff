/* grad_f.c — grad_ops.h's operations in float, matrix products through the kernel table: what
 * training runs. The code is model/grad_impl.h's; this file adds what exists once whatever
 * the precision (the workspace, the attention mask rule). */
#include "model/train/grad_ops.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define R float
#define S _f
#define GB_FLOAT 1
#define GB_FAST_ACT_BWD
#define GB_FAST_SWIGLU_BWD
#include "model/train/grad_impl.h"

/* ---- transposes ---- */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GB_AVX2_TRANSPOSE 1

/* One 8 × 8 tile: dst (8 rows of ldd) = transpose of src (8 rows of lds), or added to dst. The
 * classic unpack / shuffle / lane-permute network: 24 shuffles instead of 64 strided moves. */
__attribute__((target("avx2"))) static void tile8(float *dst, long ldd, const float *src, long lds, int add)
{
	__m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + lds), r2 = _mm256_loadu_ps(src + 2 * lds),
	       r3 = _mm256_loadu_ps(src + 3 * lds), r4 = _mm256_loadu_ps(src + 4 * lds),
	       r5 = _mm256_loadu_ps(src + 5 * lds), r6 = _mm256_loadu_ps(src + 6 * lds),
	       r7 = _mm256_loadu_ps(src + 7 * lds);
	__m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
	       t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
	       t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
	__m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee),
	       s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee),
	       s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee),
	       s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
	__m256 o[8] = { _mm256_permute2f128_ps(s0, s4, 0x20), _mm256_permute2f128_ps(s1, s5, 0x20),
	                _mm256_permute2f128_ps(s2, s6, 0x20), _mm256_permute2f128_ps(s3, s7, 0x20),
	                _mm256_permute2f128_ps(s0, s4, 0x31), _mm256_permute2f128_ps(s1, s5, 0x31),
	                _mm256_permute2f128_ps(s2, s6, 0x31), _mm256_permute2f128_ps(s3, s7, 0x31) };
	for (int i = 0; i < 8; i++) {
		float *d = dst + i * ldd;
		_mm256_storeu_ps(d, add ? _mm256_add_ps(_mm256_loadu_ps(d), o[i]) : o[i]);
	}
}

static int have_avx2(void)
{
	__builtin_cpu_init(); /* idempotent; libgcc has usually run it already */
	return __builtin_cpu_supports("avx2");
}
#else
#define GB_AVX2_TRANSPOSE 0
#endif

/* dst (N, M) = src (M, N)ᵀ (add 0), or dst += it (add 1). Tiles of 8 × 8 through the SIMD
 * network where the CPU has one, the edges one element at a time; either way each element is
 * moved (or added) once, so the result does not depend on the path. */
static void transpose_into(float *dst, const float *src, int M, int N, int add)
{
	int i0 = 0, j0 = 0;
#if GB_AVX2_TRANSPOSE
	if (have_avx2()) {
		for (i0 = 0; i0 + 8 <= M; i0 += 8)
			for (j0 = 0; j0 + 8 <= N; j0 += 8)
				tile8(dst + (size_t)j0 * M + i0, M, src + (size_t)i0 * N + j0, N, add);
		i0 = M / 8 * 8;
		j0 = N / 8 * 8;
	}
#endif
	/* the edges: rows past i0 (all columns), and columns past j0 of the rows before i0 */
	for (int i = 0; i < M; i++)
		for (int j = i < i0 ? j0 : 0; j < N; j++) {
			float v = src[(size_t)i * N + j];
			float *d = dst + (size_t)j * M + i;
			*d = add ? *d + v : v;
		}
}

static void transpose(float *dst, const float *src, int M, int N) { transpose_into(dst, src, M, N, 0); }

/* c (M, N) += t (N, M)ᵀ. */
static void add_transposed(float *c, const float *t, int M, int N) { transpose_into(c, t, N, M, 1); }

/* ---- activation gradients in float, vectorizable ---- */

/* e^x with relative error ~2e-7 (Cephes expf: x = n ln2 + r, |r| <= ln2/2, a degree-6
 * polynomial, 2^n built in the exponent bits), written without calls or branches so the loops
 * around it vectorize; x is clamped to [-87, 88], where e^x stays a normal float. NaN becomes
 * -87: callers carry x itself into their result, so NaN still propagates. */
static inline float vexp(float x)
{
	x = x > -87.0f ? x : -87.0f;
	x = x < 88.0f ? x : 88.0f;
	float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f; /* round to nearest */
	float r = x - n * 0.693359375f + n * 2.12194440e-4f;
	float p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * r * r + r + 1.0f;
	union { float f; int32_t i; } u;
	u.i = ((int32_t)n + 127) << 23;
	return p * u.f;
}

static inline float vsigmoid(float x) { return 1.0f / (1.0f + vexp(-x)); }

/* Φ(x) = erfc(-x/√2)/2 with Numerical Recipes' erfcc (relative error < 1.2e-7) on z = |x|/√2,
 * and erfc(-z) = 2 - erfc(z) for the other side. */
static inline float vphi(float x)
{
	float z = (x < 0 ? -x : x) * 0.70710678f, t = 1.0f / (1.0f + 0.5f * z);
	float p = 0.17087277f;
	p = p * t - 0.82215223f;
	p = p * t + 1.48851587f;
	p = p * t - 1.13520398f;
	p = p * t + 0.27886807f;
	p = p * t - 0.18628806f;
	p = p * t + 0.09678418f;
	p = p * t + 0.37409196f;
	p = p * t + 1.00002368f;
	p = p * t - 1.26551223f;
	float half = 0.5f * t * vexp(p - z * z);
	return x < 0 ? half : 1.0f - half;
}

/* The derivatives of gb_act_ref's functions; see act_grad in grad_impl.h for the forms. */
GB_VECTORIZE static void gelu_tanh_bwd(float *dx, const float *dy, const float *restrict x, size_t n)
{
	const float c = 0.7978845608f, a = 0.044715f;
	GB_IVDEP
	for (size_t i = 0; i < n; i++) {
		float v = x[i], s = vsigmoid(2.0f * c * (v + a * v * v * v));
		dx[i] = dy[i] * (s + 2.0f * v * s * (1.0f - s) * c * (1.0f + 3.0f * a * v * v));
	}
}

GB_VECTORIZE static void gelu_bwd(float *dx, const float *dy, const float *restrict x, size_t n)
{
	GB_IVDEP
	for (size_t i = 0; i < n; i++) {
		float v = x[i];
		dx[i] = dy[i] * (vphi(v) + v * 0.39894228f * vexp(-0.5f * v * v));
	}
}

GB_VECTORIZE static void silu_bwd(float *dx, const float *dy, const float *restrict x, size_t n)
{
	GB_IVDEP
	for (size_t i = 0; i < n; i++) {
		float v = x[i], s = vsigmoid(v);
		dx[i] = dy[i] * (s * (1.0f + v * (1.0f - s)));
	}
}

GB_VECTORIZE static void relu_bwd(float *dx, const float *dy, const float *restrict x, size_t n)
{
	GB_IVDEP
	for (size_t i = 0; i < n; i++)
		dx[i] = x[i] > 0 ? dy[i] : 0.0f;
}

void gb_act_bwd_f(float *dx, const float *dy, const float *x, size_t n, int act)
{
	switch (act) {
	case GB_ACT_GELU_TANH: gelu_tanh_bwd(dx, dy, x, n); break;
	case GB_ACT_GELU: gelu_bwd(dx, dy, x, n); break;
	case GB_ACT_SILU: silu_bwd(dx, dy, x, n); break;
	case GB_ACT_RELU: relu_bwd(dx, dy, x, n); break;
	default:
		for (size_t i = 0; i < n; i++)
			dx[i] = NAN;
	}
}

GB_VECTORIZE static void swiglu_bwd(float *restrict dgate, float *restrict dup, const float *dh,
                                    const float *restrict gate, const float *restrict up, size_t n)
{
	if (!dgate || !dup) { /* one side only: the rare case, kept simple */
		for (size_t i = 0; i < n; i++) {
			float g = gate[i], s = vsigmoid(g);
			if (dup)
				dup[i] = dh[i] * g * s;
			if (dgate)
				dgate[i] = dh[i] * up[i] * (s * (1.0f + g * (1.0f - s)));
		}
		return;
	}
	GB_IVDEP
	for (size_t i = 0; i < n; i++) {
		float g = gate[i], s = vsigmoid(g), d = dh[i];
		dup[i] = d * g * s;
		dgate[i] = d * up[i] * (s * (1.0f + g * (1.0f - s)));
	}
}

void gb_swiglu_bwd_f(float *dgate, float *dup, const float *dh, const float *gate, const float *up, size_t n)
{
	swiglu_bwd(dgate, dup, dh, gate, up, n);
}

/* ---- the workspace ---- */

enum { WS_ALIGN = 64 };

static void ws_oom(gb_ws *ws)
{
	if (ws->oom)
		longjmp(*ws->oom, 1);
	abort(); /* a caller that set no handler has no way to continue */
}

void *gb_ws_alloc(gb_ws *ws, size_t n)
{
	size_t r = (n + WS_ALIGN - 1) & ~(size_t)(WS_ALIGN - 1);
	if (ws->used + r > ws->peak)
		ws->peak = ws->used + r;
	if (ws->used + r <= ws->size) {
		void *p = ws->block + ws->used;
		ws->used += r;
		return p;
	}
	/* Past the block: a separate allocation for this run, and the next reset grows the block
	 * to the peak, so a steady training loop allocates nothing. */
	if (ws->n_spill == ws->cap_spill) {
		int cap = ws->cap_spill ? 2 * ws->cap_spill : 16;
		void **s = realloc(ws->spill, (size_t)cap * sizeof *s);
		if (!s)
			ws_oom(ws);
		ws->spill = s;
		ws->cap_spill = cap;
	}
	void *p = aligned_alloc(WS_ALIGN, r);
	if (!p)
		ws_oom(ws);
	ws->spill[ws->n_spill++] = p;
	ws->used += r;
	return p;
}

size_t gb_ws_mark(const gb_ws *ws) { return ws->used; }

void gb_ws_release(gb_ws *ws, size_t mark)
{
	if (mark < ws->used)
		ws->used = mark;
}

void gb_ws_reset(gb_ws *ws)
{
	for (int i = 0; i < ws->n_spill; i++)
		free(ws->spill[i]);
	ws->n_spill = 0;
	ws->used = 0;
	if (ws->peak > ws->size) {
		free(ws->block);
		ws->size = ws->peak + ws->peak / 8;
		ws->size = (ws->size + WS_ALIGN - 1) & ~(size_t)(WS_ALIGN - 1);
		ws->block = aligned_alloc(WS_ALIGN, ws->size);
		if (!ws->block)
			ws->size = 0; /* the next run spills, and fails there if memory is really short */
	}
}

void gb_ws_free(gb_ws *ws)
{
	for (int i = 0; i < ws->n_spill; i++)
		free(ws->spill[i]);
	free(ws->spill);
	free(ws->block);
	memset(ws, 0, sizeof *ws);
}

int gb_attn_allowed(const gb_attn_spec *s, int i, int j)
{
	if (s->causal && j > i)
		return 0;
	if (s->window && (j <= i - s->window || j >= i + s->window))
		return 0;
	return !(s->key_masked && s->key_masked[j]);
}
