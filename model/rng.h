/* rng.h — a small seeded generator (splitmix64 seeding xoshiro256**), so random models,
 * sampling and training are reproducible from a seed on every machine. */
#ifndef GLASSBOX_RNG_H
#define GLASSBOX_RNG_H

#include <stdint.h>

typedef struct gb_rng {
	uint64_t s[4];
} gb_rng;

void gb_rng_seed(gb_rng *r, uint64_t seed);
uint64_t gb_rng_u64(gb_rng *r);
double gb_rng_uniform(gb_rng *r);         /* [0, 1) with 53 random bits */
double gb_rng_normal(gb_rng *r);          /* standard normal (Box-Muller, no cached pair) */
int gb_rng_below(gb_rng *r, int n);       /* uniform integer in [0, n) */

#endif
