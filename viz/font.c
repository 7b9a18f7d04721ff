/* font.c — owns the FreeType library handle, the process-wide faces and their glyph caches.
 *
 * Glyphs are cached as 8-bit coverage bitmaps keyed by (code point, pixel size, angle in
 * hundredths of a degree): figures draw the same few dozen glyphs thousands of times (cell
 * numbers, tick values), and FT_Load_Char costs microseconds each. Horizontal text is rendered
 * with light hinting (crisp stems at small sizes); rotated text unhinted, since hinting snaps to
 * a pixel grid the rotated outline no longer lines up with. Glyph origins are rounded to whole
 * pixels, which for a label's few glyphs is invisible and keeps every bitmap reusable.
 *
 * A code point DejaVu lacks (Chinese, Japanese, most emoji) is drawn from whatever installed font
 * fontconfig says covers it, when there is one; otherwise it shows as DejaVu's missing-glyph box. */
#include "viz/font.h"
#include "viz/raster.h"

#include <fontconfig/fontconfig.h>
#include <ft2build.h>
#include FT_FREETYPE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define PKG_HINT "apt-get install fonts-dejavu-core, or set GLASSBOX_FONT to a .ttf file"

typedef struct glyph {
	uint32_t cp;            /* code point; 0 marks an empty slot (NUL is never drawn) */
	int px, ang;            /* pixel size, angle in 1/100 degree */
	int w, h, left, top;    /* bitmap size and its offset from the pen (FreeType: y up) */
	double adv_x, adv_y;    /* pen advance in pixels, FreeType axes (y up) */
	unsigned index;         /* glyph index, for kerning */
	uint8_t *bits;          /* (h, w) coverage 0..255 */
} glyph;

struct gb_font {
	FT_Face face;
	int cur_px, cur_ang;    /* what FT_Set_Pixel_Sizes / FT_Set_Transform last got */
	glyph *tab;             /* (cap) open addressing */
	size_t cap, used;
	double units_to_px;     /* 1 / units_per_EM, for unscaled kerning */
	int kern;
};

static FT_Library ft;
static gb_font *faces[GB_FACE_N];
static char *override_path;
static char *face_file[GB_FACE_N]; /* the file each open face came from */

#define N_FALLBACK 8
static struct {
	char *file;
	FT_Face face;
} fallback[N_FALLBACK];           /* fonts opened for code points DejaVu lacks */
static int n_fallback;

static const struct {
	const char *family;
	int weight;             /* fontconfig weight */
	const char *file;       /* where Debian puts it, used when fontconfig is unavailable */
} wanted[GB_FACE_N] = {
	[GB_FACE_SANS] = { "DejaVu Sans", FC_WEIGHT_REGULAR, "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf" },
	[GB_FACE_BOLD] = { "DejaVu Sans", FC_WEIGHT_BOLD, "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf" },
	[GB_FACE_MONO] = { "DejaVu Sans Mono", FC_WEIGHT_REGULAR, "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf" },
};

static void font_close(gb_font *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->cap; i++)
		free(f->tab[i].bits);
	free(f->tab);
	FT_Done_Face(f->face);
	free(f);
}

void gb_font_release(void)
{
	for (int i = 0; i < GB_FACE_N; i++) {
		font_close(faces[i]);
		faces[i] = NULL;
		free(face_file[i]);
		face_file[i] = NULL;
	}
	for (int i = 0; i < n_fallback; i++) {
		FT_Done_Face(fallback[i].face);
		free(fallback[i].file);
	}
	n_fallback = 0;
	if (ft) {
		FT_Done_FreeType(ft);
		ft = NULL;
	}
}

void gb_font_set_path(const char *path)
{
	gb_font_release();
	free(override_path);
	override_path = path ? strdup(path) : NULL;
}

/* The file fontconfig picks for a face, if it really is the DejaVu family asked for: fontconfig
 * always answers with *some* font, and a silent substitute would change every figure's layout
 * from machine to machine. Returns a malloc'd path or NULL. */
static char *fc_lookup(int which)
{
	FcPattern *pat, *match;
	FcResult res;
	FcChar8 *file = NULL, *family = NULL;
	char *out = NULL;
	pat = FcPatternCreate();
	if (!pat)
		return NULL;
	FcPatternAddString(pat, FC_FAMILY, (const FcChar8 *)wanted[which].family);
	FcPatternAddInteger(pat, FC_WEIGHT, wanted[which].weight);
	FcPatternAddInteger(pat, FC_SLANT, FC_SLANT_ROMAN);
	FcPatternAddBool(pat, FC_SCALABLE, FcTrue);
	FcConfigSubstitute(NULL, pat, FcMatchPattern);
	FcDefaultSubstitute(pat);
	match = FcFontMatch(NULL, pat, &res);
	if (match && FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch &&
	    FcPatternGetString(match, FC_FAMILY, 0, &family) == FcResultMatch &&
	    strcasecmp((const char *)family, wanted[which].family) == 0)
		out = strdup((const char *)file);
	if (match)
		FcPatternDestroy(match);
	FcPatternDestroy(pat);
	return out;
}

gb_font *gb_font_face(int which, gb_verr *err)
{
	const char *env = getenv("GLASSBOX_FONT");
	char *path = NULL;
	const char *from;
	gb_font *f;
	FT_Error e;
	if (which < 0 || which >= GB_FACE_N)
		which = GB_FACE_SANS;
	if (faces[which])
		return faces[which];
	if (!ft && FT_Init_FreeType(&ft)) {
		ft = NULL;
		gb_vfail(err, "cannot start FreeType (out of memory?)");
		return NULL;
	}
	if (override_path) {
		path = strdup(override_path);
		from = "set by the program";
	} else if (env && *env) {
		path = strdup(env);
		from = "from GLASSBOX_FONT";
	} else {
		path = fc_lookup(which);
		if (!path && access(wanted[which].file, R_OK) == 0)
			path = strdup(wanted[which].file);
		from = "found by fontconfig";
		if (!path) {
			gb_vfail(err, "font '%s%s' not found: figures with text need it (%s)",
			         wanted[which].family, which == GB_FACE_BOLD ? " Bold" : "", PKG_HINT);
			return NULL;
		}
	}
	if (!path) {
		gb_vfail(err, "out of memory opening a font");
		return NULL;
	}
	f = calloc(1, sizeof *f);
	if (!f) {
		free(path);
		gb_vfail(err, "out of memory opening a font");
		return NULL;
	}
	e = FT_New_Face(ft, path, 0, &f->face);
	if (e) {
		gb_vfail(err, "cannot load font '%s' (%s; FreeType error %d): %s", path, from, e, PKG_HINT);
		free(path);
		free(f);
		return NULL;
	}
	face_file[which] = path;
	f->units_to_px = f->face->units_per_EM ? 1.0 / f->face->units_per_EM : 1.0 / 2048;
	f->kern = FT_HAS_KERNING(f->face) ? 1 : 0;
	f->cur_px = -1;
	f->cur_ang = -1;
	faces[which] = f;
	return f;
}

const char *gb_font_file(int which)
{
	return which >= 0 && which < GB_FACE_N ? face_file[which] : NULL;
}

/* Next code point of a UTF-8 string; malformed or overlong sequences and surrogates give
 * U+FFFD and consume one byte, so any byte string draws something and terminates. */
static uint32_t next_cp(const unsigned char **ps)
{
	const unsigned char *s = *ps;
	uint32_t c = s[0], min;
	int n;
	if (c < 0x80) {
		*ps = s + 1;
		return c;
	}
	if ((c & 0xE0) == 0xC0) { n = 1; c &= 0x1F; min = 0x80; }
	else if ((c & 0xF0) == 0xE0) { n = 2; c &= 0x0F; min = 0x800; }
	else if ((c & 0xF8) == 0xF0) { n = 3; c &= 0x07; min = 0x10000; }
	else { *ps = s + 1; return 0xFFFD; }
	for (int i = 1; i <= n; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*ps = s + 1;
			return 0xFFFD;
		}
		c = c << 6 | (s[i] & 0x3F);
	}
	*ps = s + n + 1;
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0xFFFD;
	return c;
}

static size_t slot_of(uint32_t cp, int px, int ang, size_t cap)
{
	uint64_t h = (uint64_t)cp * 0x9E3779B97F4A7C15ull ^ (uint64_t)px * 0xC2B2AE3D27D4EB4Full ^
	             (uint64_t)(uint32_t)ang * 0x165667B19E3779F9ull;
	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

static int grow(gb_font *f)
{
	size_t ncap = f->cap ? f->cap * 2 : 256;
	glyph *nt = calloc(ncap, sizeof *nt);
	if (!nt)
		return -1;
	for (size_t i = 0; i < f->cap; i++) {
		glyph *g = &f->tab[i];
		size_t j;
		if (!g->cp)
			continue;
		for (j = slot_of(g->cp, g->px, g->ang, ncap); nt[j].cp; j = (j + 1) & (ncap - 1))
			;
		nt[j] = *g;
	}
	free(f->tab);
	f->tab = nt;
	f->cap = ncap;
	return 0;
}

/* A scalable font that covers cp, from fontconfig, opened once; NULL when none is installed.
 * Only called on a glyph-cache miss, so the fontconfig query runs once per missing character. */
static FT_Face fallback_face(uint32_t cp)
{
	FcPattern *pat = FcPatternCreate(), *match = NULL;
	FcCharSet *cs = FcCharSetCreate(), *have = NULL;
	FcChar8 *file = NULL;
	FcResult res;
	FT_Face face = NULL;
	if (pat && cs && FcCharSetAddChar(cs, cp)) {
		FcPatternAddCharSet(pat, FC_CHARSET, cs);
		FcPatternAddBool(pat, FC_SCALABLE, FcTrue);
		FcConfigSubstitute(NULL, pat, FcMatchPattern);
		FcDefaultSubstitute(pat);
		match = FcFontMatch(NULL, pat, &res);
	}
	/* fontconfig answers with its best font even when none has the character: check */
	if (match && FcPatternGetCharSet(match, FC_CHARSET, 0, &have) == FcResultMatch && FcCharSetHasChar(have, cp) &&
	    FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch) {
		for (int i = 0; i < n_fallback && !face; i++)
			if (!strcmp(fallback[i].file, (const char *)file))
				face = fallback[i].face;
		if (!face && n_fallback < N_FALLBACK && !FT_New_Face(ft, (const char *)file, 0, &face)) {
			fallback[n_fallback].file = strdup((const char *)file);
			if (fallback[n_fallback].file)
				fallback[n_fallback++].face = face;
			else {
				FT_Done_Face(face);
				face = NULL;
			}
		}
	}
	if (match)
		FcPatternDestroy(match);
	if (pat)
		FcPatternDestroy(pat);
	if (cs)
		FcCharSetDestroy(cs);
	return face;
}

/* The cached glyph, rendering it on a miss; NULL only when out of memory or when FreeType
 * fails on this glyph (then the caller skips it). */
static const glyph *get_glyph(gb_font *f, uint32_t cp, int px, int ang)
{
	glyph *g;
	FT_GlyphSlot slot;
	FT_Face face;
	FT_UInt gi;
	FT_Matrix m;
	size_t j;
	int hinted = ang == 0;
	if (!cp)
		cp = 0xFFFD;
	if (f->cap) {
		for (j = slot_of(cp, px, ang, f->cap); f->tab[j].cp; j = (j + 1) & (f->cap - 1))
			if (f->tab[j].cp == cp && f->tab[j].px == px && f->tab[j].ang == ang)
				return &f->tab[j];
	}
	if ((f->used + 1) * 2 > f->cap && grow(f))
		return NULL;
	if (f->cur_px != px) {
		if (FT_Set_Pixel_Sizes(f->face, 0, (FT_UInt)px))
			return NULL;
		f->cur_px = px;
	}
	{
		double a = ang / 100.0 * M_PI / 180.0;
		m.xx = (FT_Fixed)lround(cos(a) * 65536.0);
		m.xy = (FT_Fixed)lround(-sin(a) * 65536.0);
		m.yx = (FT_Fixed)lround(sin(a) * 65536.0);
		m.yy = (FT_Fixed)lround(cos(a) * 65536.0);
	}
	if (f->cur_ang != ang) {
		FT_Set_Transform(f->face, ang ? &m : NULL, NULL);
		f->cur_ang = ang;
	}
	face = f->face;
	gi = FT_Get_Char_Index(face, cp);
	if (!gi && (face = fallback_face(cp)) != NULL) {
		/* a fallback face is shared and rarely used: set its size and angle every time */
		if (FT_Set_Pixel_Sizes(face, 0, (FT_UInt)px))
			face = NULL;
		else {
			FT_Set_Transform(face, ang ? &m : NULL, NULL);
			gi = FT_Get_Char_Index(face, cp);
		}
	}
	if (!face)
		face = f->face; /* gi is 0: DejaVu's missing-glyph box */
	if (FT_Load_Glyph(face, gi, FT_LOAD_RENDER | (hinted ? FT_LOAD_TARGET_LIGHT : FT_LOAD_NO_HINTING)))
		return NULL;
	slot = face->glyph;
	if (slot->bitmap.pixel_mode != FT_PIXEL_MODE_GRAY && slot->bitmap.rows && slot->bitmap.width)
		return NULL;
	for (j = slot_of(cp, px, ang, f->cap); f->tab[j].cp; j = (j + 1) & (f->cap - 1))
		;
	g = &f->tab[j];
	g->w = (int)slot->bitmap.width;
	g->h = (int)slot->bitmap.rows;
	g->bits = NULL;
	if (g->w && g->h) {
		g->bits = malloc((size_t)g->w * g->h);
		if (!g->bits)
			return NULL;
		for (int y = 0; y < g->h; y++)
			memcpy(g->bits + (size_t)y * g->w, slot->bitmap.buffer + (ptrdiff_t)y * slot->bitmap.pitch,
			       (size_t)g->w);
	}
	g->cp = cp;
	g->px = px;
	g->ang = ang;
	g->left = slot->bitmap_left;
	g->top = slot->bitmap_top;
	g->adv_x = slot->advance.x / 64.0;
	g->adv_y = slot->advance.y / 64.0;
	g->index = face == f->face ? gi : 0; /* no kerning across fonts */
	f->used++;
	return g;
}

/* Kerning between two glyph indices along the baseline, in pixels. Unscaled so it does not
 * depend on which size FreeType last had set. */
static double kern_px(gb_font *f, unsigned a, unsigned b, int px)
{
	FT_Vector k;
	if (!f->kern || !a || !b)
		return 0;
	if (FT_Get_Kerning(f->face, a, b, FT_KERNING_UNSCALED, &k))
		return 0;
	return k.x * f->units_to_px * px;
}

static int angle_key(double deg)
{
	long a = lround(fmod(deg, 360.0) * 100.0);
	if (a < 0)
		a += 36000;
	return (int)(a % 36000);
}

double gb_font_width(gb_font *f, int px, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned prev = 0;
	double w = 0;
	if (!f || !s || px <= 0)
		return 0;
	while (*p) {
		const glyph *g = get_glyph(f, next_cp(&p), px, 0);
		if (!g)
			continue;
		w += kern_px(f, prev, g->index, px) + g->adv_x;
		prev = g->index;
	}
	return w;
}

double gb_font_ascent(gb_font *f, int px)
{
	return f ? (double)f->face->ascender / f->face->units_per_EM * px : 0.93 * px;
}

double gb_font_descent(gb_font *f, int px)
{
	return f ? -(double)f->face->descender / f->face->units_per_EM * px : 0.24 * px;
}

static void blit(gb_canvas *c, const glyph *g, int ox, int oy, const uint8_t rgb[3])
{
	int x0 = ox + g->left, y0 = oy - g->top;
	int ys = y0 < 0 ? -y0 : 0, ye = y0 + g->h > c->h ? c->h - y0 : g->h;
	int xs = x0 < 0 ? -x0 : 0, xe = x0 + g->w > c->w ? c->w - x0 : g->w;
	for (int y = ys; y < ye; y++) {
		const uint8_t *src = g->bits + (size_t)y * g->w;
		uint8_t *dst = c->rgba + ((size_t)(y0 + y) * c->w + x0) * 4;
		for (int x = xs; x < xe; x++) {
			unsigned a = src[x];
			uint8_t *d = dst + (size_t)x * 4;
			if (!a)
				continue;
			if (a == 255) {
				d[0] = rgb[0], d[1] = rgb[1], d[2] = rgb[2];
				continue;
			}
			/* (s*a + d*(255-a)) / 255, rounded, without a division */
			for (int k = 0; k < 3; k++) {
				unsigned v = rgb[k] * a + d[k] * (255 - a) + 128;
				d[k] = (uint8_t)((v + (v >> 8)) >> 8);
			}
		}
	}
}

double gb_font_draw(gb_font *f, gb_canvas *c, const char *s, double x, double y, int px,
                    double angle_deg, const uint8_t rgb[3])
{
	const unsigned char *p = (const unsigned char *)s;
	int ang = angle_key(angle_deg);
	double a = ang / 100.0 * M_PI / 180.0, ca = cos(a), sa = sin(a);
	double pen = 0, penx = x, peny = y; /* pen in canvas pixels; FreeType's y is up */
	unsigned prev = 0;
	if (!f || !c || !s || px <= 0)
		return 0;
	while (*p) {
		const glyph *g = get_glyph(f, next_cp(&p), px, ang);
		double k;
		if (!g)
			continue;
		k = kern_px(f, prev, g->index, px);
		penx += k * ca;
		peny -= k * sa;
		pen += k;
		if (g->bits)
			blit(c, g, (int)lround(penx), (int)lround(peny), rgb);
		penx += g->adv_x;
		peny -= g->adv_y;
		pen += ang ? hypot(g->adv_x, g->adv_y) : g->adv_x;
		prev = g->index;
	}
	return pen;
}
