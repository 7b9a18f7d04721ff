/* t_colormap.c — the colormap tables against their published values, their lightness profiles,
 * the coolwarm table regenerated from Moreland's definition, the NaN colour, CIE lightness, and
 * the palette mappings of the terminal writer (xterm 256 and ANSI 16). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests/tap.h"
#include "viz/cells.h"
#include "viz/colormap.h"
#include "viz/figure.h"

static int rgb_is(const uint8_t *c, int r, int g, int b, const char *what)
{
	int ok = c[0] == r && c[1] == g && c[2] == b;
	tap_ok(ok, "%s = (%d,%d,%d)", what, r, g, b);
	if (!ok)
		tap_diag("  got (%d,%d,%d)", c[0], c[1], c[2]);
	return ok;
}

/* ---- Moreland's diverging map, from the definition in his 2009 paper ---------------------
 * sRGB <-> XYZ (D65, white 0.9505, 1, 1.089) <-> CIELAB <-> Msh; interpolation in Msh with a
 * white midpoint of M = 88 and the hue spin for unsaturated points. */
static const double WX = 0.9505, WY = 1.0, WZ = 1.089;

static double lab_f(double t) { return t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116.0; }
static double lab_finv(double t) { return t * t * t > 0.008856 ? t * t * t : (t - 16.0 / 116.0) / 7.787; }
static double to_lin(double c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }
static double to_srgb(double c) { return c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1 / 2.4) - 0.055; }

static void msh_to_rgb(const double m[3], double rgb[3])
{
	double L = m[0] * cos(m[1]), a = m[0] * sin(m[1]) * cos(m[2]), b = m[0] * sin(m[1]) * sin(m[2]);
	double fy = (L + 16) / 116, fx = fy + a / 500, fz = fy - b / 200;
	double x = WX * lab_finv(fx), y = WY * lab_finv(fy), z = WZ * lab_finv(fz);
	rgb[0] = to_srgb(3.2406 * x - 1.5372 * y - 0.4986 * z);
	rgb[1] = to_srgb(-0.9689 * x + 1.8758 * y + 0.0415 * z);
	rgb[2] = to_srgb(0.0557 * x - 0.2040 * y + 1.0570 * z);
}

static void rgb_to_msh(const double c[3], double m[3])
{
	double r = to_lin(c[0]), g = to_lin(c[1]), b = to_lin(c[2]);
	double x = 0.4124 * r + 0.3576 * g + 0.1805 * b, y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
	double z = 0.0193 * r + 0.1192 * g + 0.9505 * b;
	double L = 116 * lab_f(y / WY) - 16, A = 500 * (lab_f(x / WX) - lab_f(y / WY));
	double B = 200 * (lab_f(y / WY) - lab_f(z / WZ));
	m[0] = sqrt(L * L + A * A + B * B);
	m[1] = acos(L / m[0]);
	m[2] = atan2(B, A);
}

static double adjust_hue(const double m[3], double unsat_m)
{
	if (m[0] >= unsat_m - 0.1)
		return m[2];
	double spin = m[1] * sqrt(unsat_m * unsat_m - m[0] * m[0]) / (m[0] * sin(m[1]));
	return m[2] > -M_PI / 3 ? m[2] + spin : m[2] - spin;
}

static void moreland(double t, double rgb[3])
{
	double m1[3] = { 80, 1.08, -1.1 }, m2[3] = { 80, 1.08, 0.5 }, m[3];
	if (m1[1] > 0.05 && m2[1] > 0.05 && fabs(m1[2] - m2[2]) > M_PI / 3) {
		double mid = fmax(fmax(m1[0], m2[0]), 88.0);
		if (t < 0.5) {
			m2[0] = mid; m2[1] = 0; m2[2] = 0;
			t = 2 * t;
		} else {
			m1[0] = mid; m1[1] = 0; m1[2] = 0;
			t = 2 * t - 1;
		}
	}
	if (m1[1] < 0.05 && m2[1] > 0.05)
		m1[2] = adjust_hue(m2, m1[0]);
	else if (m2[1] < 0.05 && m1[1] > 0.05)
		m2[2] = adjust_hue(m1, m2[0]);
	for (int k = 0; k < 3; k++)
		m[k] = (1 - t) * m1[k] + t * m2[k];
	msh_to_rgb(m, rgb);
}

static void test_coolwarm_definition(void)
{
	/* Moreland's published 33-entry float table, three of its rows (t, r, g, b). */
	static const double pub[][4] = {
		{ 0.25, 0.552953156, 0.688929332, 0.995375608 },
		{ 0.50, 0.865395197, 0.865410210, 0.865395561 },
		{ 0.84375, 0.899046170, 0.439559467, 0.343229596 },
	};
	for (int i = 0; i < 3; i++) {
		double c[3];
		moreland(pub[i][0], c);
		double e = fmax(fabs(c[0] - pub[i][1]), fmax(fabs(c[1] - pub[i][2]), fabs(c[2] - pub[i][3])));
		tap_near(e, 0, 1e-6, "the Msh generator reproduces Moreland's published entry at t = %g",
		         pub[i][0]);
	}
	/* his endpoints are the paper's RGB (59,76,192) and (180,4,38) in Msh */
	double blue[3] = { 59 / 255.0, 76 / 255.0, 192 / 255.0 }, m[3];
	rgb_to_msh(blue, m);
	tap_near(m[0], 80, 0.1, "RGB (59,76,192) has M = 80 (Msh endpoint)");
	int bad = 0, first = -1;
	for (int i = 0; i < 256; i++) {
		double c[3];
		moreland(i / 255.0, c);
		const uint8_t *e = gb_cmap_entry(GB_CMAP_COOLWARM, i);
		for (int k = 0; k < 3; k++)
			if ((int)floor(fmin(1, fmax(0, c[k])) * 255 + 0.5) != e[k]) {
				bad++;
				if (first < 0) first = i;
			}
	}
	tap_ok(bad == 0, "all 256 coolwarm entries equal the definition sampled at i/255, rounded");
	if (bad)
		tap_diag("  %d channels differ, first at entry %d", bad, first);
}

static double L_of(int cmap, int i) { return gb_lightness(gb_cmap_entry(cmap, i)); }

static void test_tables(void)
{
	rgb_is(gb_cmap_entry(GB_CMAP_VIRIDIS, 0), 68, 1, 84, "viridis[0]");
	rgb_is(gb_cmap_entry(GB_CMAP_VIRIDIS, 128), 33, 145, 140, "viridis[128] (#21918c)");
	rgb_is(gb_cmap_entry(GB_CMAP_VIRIDIS, 255), 253, 231, 37, "viridis[255]");
	rgb_is(gb_cmap_entry(GB_CMAP_MAGMA, 0), 0, 0, 4, "magma[0]");
	rgb_is(gb_cmap_entry(GB_CMAP_MAGMA, 128), 183, 55, 121, "magma[128]");
	rgb_is(gb_cmap_entry(GB_CMAP_MAGMA, 255), 252, 253, 191, "magma[255]");
	rgb_is(gb_cmap_entry(GB_CMAP_CIVIDIS, 0), 0, 34, 78, "cividis[0]");
	rgb_is(gb_cmap_entry(GB_CMAP_CIVIDIS, 128), 125, 124, 120, "cividis[128]");
	rgb_is(gb_cmap_entry(GB_CMAP_CIVIDIS, 255), 254, 232, 56, "cividis[255]");
	rgb_is(gb_cmap_entry(GB_CMAP_GRAY, 0), 0, 0, 0, "gray[0]");
	rgb_is(gb_cmap_entry(GB_CMAP_GRAY, 77), 77, 77, 77, "gray[77]");
	rgb_is(gb_cmap_entry(GB_CMAP_GRAY, 255), 255, 255, 255, "gray[255]");
	rgb_is(gb_cmap_entry(GB_CMAP_COOLWARM, 0), 59, 76, 192, "coolwarm[0]");
	rgb_is(gb_cmap_entry(GB_CMAP_COOLWARM, 255), 180, 4, 38, "coolwarm[255]");
	const uint8_t *mid = gb_cmap_entry(GB_CMAP_COOLWARM, 127);
	tap_ok(abs(mid[0] - 221) <= 1 && abs(mid[1] - 221) <= 1 && abs(mid[2] - 221) <= 1,
	       "coolwarm[127] is the white-ish midpoint (221,221,221) +- 1, got (%d,%d,%d)", mid[0],
	       mid[1], mid[2]);
	rgb_is(gb_cmap_entry(GB_CMAP_VIRIDIS, -7), 68, 1, 84, "an index below 0 is clamped to entry 0");
	rgb_is(gb_cmap_entry(GB_CMAP_VIRIDIS, 999), 253, 231, 37, "an index above 255 is clamped");

	uint8_t c[3];
	gb_cmap_rgb(GB_CMAP_MAGMA, 0.0, c);
	rgb_is(c, 0, 0, 4, "gb_cmap_rgb(magma, 0)");
	gb_cmap_rgb(GB_CMAP_MAGMA, 1.0, c);
	rgb_is(c, 252, 253, 191, "gb_cmap_rgb(magma, 1)");
	gb_cmap_rgb(GB_CMAP_VIRIDIS, -3.0, c);
	rgb_is(c, 68, 1, 84, "gb_cmap_rgb clamps t < 0");
	gb_cmap_rgb(GB_CMAP_VIRIDIS, 0.5, c);
	rgb_is(c, 33, 145, 140, "gb_cmap_rgb(viridis, 0.5) = entry round(127.5) = 128");
	gb_cmap_rgb(GB_CMAP_VIRIDIS, NAN, c);
	rgb_is(c, gb_bad_rgb[0], gb_bad_rgb[1], gb_bad_rgb[2], "gb_cmap_rgb(NaN) is the NaN colour");
}

static void test_lightness(void)
{
	const uint8_t black[3] = { 0, 0, 0 }, white[3] = { 255, 255, 255 }, g119[3] = { 119, 119, 119 };
	tap_near(gb_lightness(black), 0, 1e-9, "L*(black) = 0");
	tap_near(gb_lightness(white), 100, 1e-9, "L*(white) = 100");
	tap_near(gb_lightness(g119), 50.03, 0.02, "L*(119,119,119) = 50.03 (sRGB mid-gray)");

	static const int seq[] = { GB_CMAP_VIRIDIS, GB_CMAP_MAGMA, GB_CMAP_CIVIDIS, GB_CMAP_GRAY };
	for (int k = 0; k < 4; k++) {
		int m = seq[k], dips = 0, coarse = 1;
		double worst = 0;
		for (int i = 0; i < 255; i++) {
			double d = L_of(m, i + 1) - L_of(m, i);
			if (d < worst)
				worst = d;
			if (d < -0.1)
				dips++;
		}
		for (int i = 0; i + 16 <= 255; i += 16)
			coarse &= L_of(m, i + 16) > L_of(m, i) + 1.0;
		/* 8-bit rounding makes a few neighbours tie or dip by a few hundredths of L* */
		tap_ok(dips == 0, "%s: L* never falls by more than 0.1 between neighbours (worst %.3f)",
		       gb_cmap_name(m), worst);
		tap_ok(coarse, "%s: L* rises by more than 1 every 16 entries", gb_cmap_name(m));
		tap_ok(L_of(m, 255) - L_of(m, 0) > 75, "%s: L* spans more than 75 (%.1f .. %.1f)",
		       gb_cmap_name(m), L_of(m, 0), L_of(m, 255));
	}
	int arg = 0;
	for (int i = 1; i < 256; i++)
		if (L_of(GB_CMAP_COOLWARM, i) > L_of(GB_CMAP_COOLWARM, arg))
			arg = i;
	tap_ok(arg == 127 || arg == 128, "coolwarm is lightest in the middle (entry %d)", arg);
	tap_near(L_of(GB_CMAP_COOLWARM, 0), L_of(GB_CMAP_COOLWARM, 255), 1.0,
	         "coolwarm's two ends have the same lightness");
	int rise = 1, fall = 1;
	for (int i = 0; i + 8 <= 127; i += 8)
		rise &= L_of(GB_CMAP_COOLWARM, i + 8) > L_of(GB_CMAP_COOLWARM, i);
	for (int i = 128; i + 8 <= 255; i += 8)
		fall &= L_of(GB_CMAP_COOLWARM, i + 8) < L_of(GB_CMAP_COOLWARM, i);
	tap_ok(rise && fall, "coolwarm lightens towards the middle from both ends");
}

static void test_names_and_bad(void)
{
	int all = 1;
	for (int m = 0; m < GB_CMAP_N; m++)
		all &= gb_cmap_by_name(gb_cmap_name(m)) == m;
	tap_ok(all, "every map's name gives the map back");
	tap_ok(gb_cmap_by_name("coolwarm") == GB_CMAP_COOLWARM, "\"coolwarm\" is GB_CMAP_COOLWARM");
	tap_ok(gb_cmap_by_name("jet") == -1, "an unknown name gives -1");
	tap_ok(gb_cmap_by_name(NULL) == -1, "NULL gives -1");
	int nearest = 1 << 30;
	for (int m = 0; m < GB_CMAP_N; m++)
		for (int i = 0; i < 256; i++) {
			const uint8_t *e = gb_cmap_entry(m, i);
			int d = 0;
			for (int k = 0; k < 3; k++)
				d += (e[k] - gb_bad_rgb[k]) * (e[k] - gb_bad_rgb[k]);
			if (d < nearest)
				nearest = d;
		}
	tap_ok(sqrt(nearest) > 100, "the NaN colour is far from every table entry (nearest %.0f)",
	       sqrt(nearest));
}

/* The colour of palette entry i (16..255), as xterm defines it. */
static void xterm_rgb(int i, int c[3])
{
	static const int lv[6] = { 0, 95, 135, 175, 215, 255 };
	if (i >= 232) {
		c[0] = c[1] = c[2] = 8 + 10 * (i - 232);
		return;
	}
	i -= 16;
	c[0] = lv[i / 36];
	c[1] = lv[i / 6 % 6];
	c[2] = lv[i % 6];
}

static void test_palettes(void)
{
	static const struct { uint8_t rgb[3]; int want; const char *what; } cases[] = {
		{ { 255, 0, 0 }, 196, "pure red" },
		{ { 0, 255, 0 }, 46, "pure green" },
		{ { 0, 0, 255 }, 21, "pure blue" },
		{ { 255, 255, 0 }, 226, "yellow" },
		{ { 128, 128, 128 }, 244, "(128,128,128), on the gray ramp" },
		{ { 0, 0, 0 }, 16, "black (cube corner)" },
		{ { 255, 255, 255 }, 231, "white (cube corner)" },
		{ { 8, 8, 8 }, 232, "(8,8,8), first gray" },
		{ { 238, 238, 238 }, 255, "(238,238,238), last gray" },
		{ { 100, 100, 100 }, 241, "(100,100,100) -> gray 98" },
		{ { 95, 135, 175 }, 67, "(95,135,175), a cube point" },
		{ { 68, 1, 84 }, 53, "viridis[0] -> (95,0,95)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int got = gb_xterm256(cases[i].rgb);
		tap_ok(got == cases[i].want, "xterm256 %s = %d", cases[i].what, cases[i].want);
		if (got != cases[i].want)
			tap_diag("  got %d", got);
	}
	/* against brute force over the whole 16..255 palette, on a lattice of colours */
	int worse = 0, n = 0;
	for (int r = 0; r < 256; r += 15)
		for (int g = 0; g < 256; g += 17)
			for (int b = 0; b < 256; b += 13, n++) {
				uint8_t q[3] = { (uint8_t)r, (uint8_t)g, (uint8_t)b };
				int c[3], best = 1 << 30;
				for (int i = 16; i < 256; i++) {
					xterm_rgb(i, c);
					int d = (r - c[0]) * (r - c[0]) + (g - c[1]) * (g - c[1]) + (b - c[2]) * (b - c[2]);
					if (d < best)
						best = d;
				}
				xterm_rgb(gb_xterm256(q), c);
				int d = (r - c[0]) * (r - c[0]) + (g - c[1]) * (g - c[1]) + (b - c[2]) * (b - c[2]);
				worse += d > best;
			}
	tap_ok(worse == 0, "xterm256 is never farther than the nearest of 16..255 (%d of %d colours)",
	       worse, n);

	static const struct { uint8_t rgb[3]; int want; } c16[] = {
		{ { 255, 0, 0 }, 9 }, { { 205, 0, 0 }, 1 }, { { 0, 0, 0 }, 0 }, { { 250, 250, 250 }, 15 },
		{ { 127, 127, 127 }, 8 }, { { 229, 229, 229 }, 7 }, { { 0, 0, 200 }, 4 }, { { 255, 0, 255 }, 13 },
	};
	for (size_t i = 0; i < sizeof c16 / sizeof *c16; i++)
		tap_ok(gb_ansi16(c16[i].rgb) == c16[i].want, "ansi16 (%d,%d,%d) = %d", c16[i].rgb[0],
		       c16[i].rgb[1], c16[i].rgb[2], c16[i].want);
}

int main(void)
{
	test_tables();
	test_coolwarm_definition();
	test_lightness();
	test_names_and_bad();
	test_palettes();
	return tap_done();
}
