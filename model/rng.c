/* rng.c — see rng.h. */
#include "model/rng.h"

#include <math.h>

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void gb_rng_seed(gb_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t gb_rng_u64(gb_rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double gb_rng_uniform(gb_rng *r) { return (double)(gb_rng_u64(r) >> 11) * 0x1.0p-53; }

double gb_rng_normal(gb_rng *r)
{
	double u = 1.0 - gb_rng_uniform(r), v = gb_rng_uniform(r);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

int gb_rng_below(gb_rng *r, int n) { return n > 0 ? (int)(gb_rng_uniform(r) * n) : 0; }
