/* t_steps.c — the step figures of issue 14, part 3 (strips of merges, decoding steps with their
 * cut-offs, the beam tree) and the bytes under a token strip, on hand-made figures: what the
 * terminal writes, where the PNG puts the cut-off rule and the marks (by decoded pixels), and
 * that SVG, PDF and CSV are written. With --ink FILE.png or --corr A.png B.png COLS ROWS it is
 * the pixel tool of t_pdf.sh instead (ink of a picture; correlation of two pictures' ink in
 * COLS x ROWS blocks: a downscaled comparison that anti-aliasing does not move). */
#include "tests/cells_test.h"
#include "viz/colormap.h"
#include "viz/export.h"
#include "viz/font.h"
#include "viz/pdf.h"
#include "viz/png.h"
#include "viz/raster.h"
#include "viz/svg.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

/* ---- the pixel tool --------------------------------------------------------------------------- */

static double dark(const gb_canvas *c, int x, int y)
{
	const uint8_t *p = c->rgba + ((size_t)y * c->w + x) * 4;
	return 765 - p[0] - p[1] - p[2];
}

static int tool(int argc, char **argv)
{
	gb_canvas a, b;
	gb_verr err;
	if (argc == 3 && !strcmp(argv[1], "--ink")) {
		if (gb_png_read(argv[2], &a, NULL, NULL, &err))
			return fprintf(stderr, "%s\n", err.msg), 1;
		long n = 0;
		for (int y = 0; y < a.h; y++)
			for (int x = 0; x < a.w; x++)
				n += dark(&a, x, y) > 96;
		gb_canvas_free(&a);
		printf("%ld\n", n);
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "--corr")) {
		int C = atoi(argv[4]), R = atoi(argv[5]);
		if (C < 2 || R < 2 || C > 400 || R > 400)
			return 1;
		if (gb_png_read(argv[2], &a, NULL, NULL, &err))
			return fprintf(stderr, "%s\n", err.msg), 1;
		if (gb_png_read(argv[3], &b, NULL, NULL, &err))
			return gb_canvas_free(&a), fprintf(stderr, "%s\n", err.msg), 1;
		/* block means of each picture, each on its own size: the same layout at two scales
		 * compares block for block */
		double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
		int n = C * R;
		for (int by = 0; by < R; by++)
			for (int bx = 0; bx < C; bx++) {
				double m[2];
				const gb_canvas *cv[2] = { &a, &b };
				for (int k = 0; k < 2; k++) {
					int x0 = bx * cv[k]->w / C, x1 = (bx + 1) * cv[k]->w / C;
					int y0 = by * cv[k]->h / R, y1 = (by + 1) * cv[k]->h / R;
					double s = 0;
					for (int y = y0; y < y1; y++)
						for (int x = x0; x < x1; x++)
							s += dark(cv[k], x, y);
					m[k] = s / ((double)(x1 - x0) * (y1 - y0) + 1e-9);
				}
				sa += m[0], sb += m[1], saa += m[0] * m[0], sbb += m[1] * m[1], sab += m[0] * m[1];
			}
		double r = (n * sab - sa * sb) / sqrt((n * saa - sa * sa) * (n * sbb - sb * sb) + 1e-12);
		gb_canvas_free(&a);
		gb_canvas_free(&b);
		printf("%.4f\n", r);
		return 0;
	}
	fprintf(stderr, "usage: t_steps.t [--ink FILE.png | --corr A.png B.png COLS ROWS]\n");
	return 2;
}

/* ---- figures made by hand ------------------------------------------------------------------- */

/* One decoding step: five candidates, the first chosen, top-k 3 cuts the last two. */
static gb_figure *decode_fig(void)
{
	gb_figure *f = gb_fig_new(GB_FIG_DECODE), *p = gb_fig_new(GB_FIG_BARS);
	const float v[5] = { 0.4f, 0.3f, 0.15f, 0.1f, 0.05f }, ref[5] = { 0.35f, 0.3f, 0.2f, 0.1f, 0.05f };
	const char *lab[5] = { " cat", " dog", " bird", " fish", " cow" };
	const int marks[5] = { GB_MARK_KEPT | GB_MARK_CHOSEN, GB_MARK_KEPT, GB_MARK_KEPT, GB_MARK_CUT, GB_MARK_CUT };
	gb_fig_set_values(p, v, 1, 5);
	gb_fig_set_col_labels(p, lab);
	gb_fig_set_marks(p, marks, ref, NULL);
	gb_fig_add_cut(p, 3, "top-k 3");
	gb_fig_set_title(p, "step 1: cat");
	gb_fig_add_panel(f, p);
	gb_fig_set_title(f, "Decoding");
	f->ref_label = strdup("the model's own p");
	f->colorbar = 0;
	return f;
}

static gb_figure *tree_fig(void)
{
	gb_figure *f = gb_fig_new(GB_FIG_TREE);
	gb_fig_add_node(f, "the prompt", -1, 0, 0, GB_NODE_ROOT);   /* 0 */
	gb_fig_add_node(f, " a", 0, -0.5, -0.5, GB_NODE_BEST);      /* 1 */
	gb_fig_add_node(f, " b", 0, -1.0, -1.0, GB_NODE_PRUNED);    /* 2 */
	gb_fig_add_node(f, " c", 1, -0.25, -0.75, GB_NODE_BEST);    /* 3 */
	gb_fig_add_node(f, " d", 1, -2.0, -2.5, GB_NODE_KEPT);      /* 4 */
	gb_fig_set_title(f, "Beam search");
	f->colorbar = 0;
	return f;
}

static gb_figure *strip(const char *const *lab, const float *ids, const int *marks, int n, const char *title)
{
	gb_figure *p = gb_fig_new(GB_FIG_STRIP);
	gb_fig_set_values(p, ids, 1, n);
	gb_fig_set_col_labels(p, lab);
	gb_fig_set_marks(p, marks, NULL, NULL);
	gb_fig_set_title(p, title);
	return p;
}

static gb_figure *strips_fig(void)
{
	gb_figure *f = gb_fig_new(GB_FIG_STRIPS);
	const char *l0[3] = { "t", "h", "e" }, *l1[2] = { "t", "he" }, *l2[1] = { "the" };
	const float i0[3] = { 116, 104, 101 }, i1[2] = { 116, 256 }, i2[1] = { 300 };
	const int m0[3] = { 0, 0, 0 }, m1[2] = { 0, GB_MARK_CHOSEN }, m2[1] = { GB_MARK_CHOSEN };
	gb_fig_add_panel(f, strip(l0, i0, m0, 3, "bytes"));
	gb_fig_add_panel(f, strip(l1, i1, m1, 2, "1. h + e (rank 0)"));
	gb_fig_add_panel(f, strip(l2, i2, m2, 1, "2. t + he (rank 44)"));
	gb_fig_set_title(f, "Merges");
	f->colorbar = 0;
	return f;
}

/* Row groups of pixels of one colour inside (x, y, w, h): their centres, at most max. */
static int colour_rows(const gb_canvas *c, const uint8_t rgb[3], int x0, int y0, int w, int h, double *mid, int max)
{
	int n = 0, in = 0, start = 0;
	for (int y = y0; y <= y0 + h && y < c->h; y++) {
		int hit = 0, run = 0;
		/* a row holds the colour when 12 pixels in a row have it: a filled box, not a glyph's edge */
		for (int x = x0; y < y0 + h && x < x0 + w && x < c->w && !hit; x++) {
			const uint8_t *p = c->rgba + ((size_t)y * c->w + x) * 4;
			run = p[0] == rgb[0] && p[1] == rgb[1] && p[2] == rgb[2] ? run + 1 : 0;
			hit = run >= 12;
		}
		if (hit && !in)
			start = y, in = 1;
		else if (!hit && in) {
			if (n < max)
				mid[n] = (start + y - 1) / 2.0;
			n++;
			in = 0;
		}
	}
	return n;
}

/* Rows where black covers at least a third of (x, w) in many dashes: the dashed rule (a bar's
 * black frame is one long run). */
static int rule_rows(const gb_canvas *c, int x0, int w, int y0, int h, double *mid)
{
	int n = 0, in = 0, start = 0;
	for (int y = y0; y <= y0 + h && y < c->h; y++) {
		int k = 0, runs = 0, was = 0;
		for (int x = x0; y < y0 + h && x < x0 + w && x < c->w; x++) {
			const uint8_t *p = c->rgba + ((size_t)y * c->w + x) * 4;
			int b = p[0] < 40 && p[1] < 40 && p[2] < 40;
			k += b;
			runs += b && !was;
			was = b;
		}
		int hit = k * 3 >= w && runs >= 20;
		if (hit && !in)
			start = y, in = 1;
		else if (!hit && in) {
			*mid = (start + y - 1) / 2.0;
			n++;
			in = 0;
		}
	}
	return n;
}

static int file_has(const char *path, const char *needle)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return 0;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = 0;
	return strstr(buf, needle) != NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return tool(argc, argv);
	snprintf(dir, sizeof dir, "/tmp/t_steps.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	gb_verr err;
	char path[128], *t;

	/* ---- decoding steps ---- */
	gb_figure *d = decode_fig();
	t = draw(d, 70, 20, 0, 0, 0, NULL);
	{
		const char *cat = t ? strstr(t, "\xC2\xB7" "cat") : NULL, *rule = t ? strstr(t, "---- top-k 3 ----") : NULL;
		const char *bird = t ? strstr(t, "bird") : NULL, *fish = t ? strstr(t, "fish") : NULL;
		const char *eol = cat ? strchr(cat, '\n') : NULL;
		tap_ok(cat && eol && strstr(cat, "<- chosen") && strstr(cat, "<- chosen") < eol,
		       "terminal: the chosen candidate says so on its line");
		tap_ok(bird && rule && fish && bird < rule && rule < fish,
		       "terminal: the top-k rule stands between the 3rd and the 4th candidate");
		const char *fe = fish ? strchr(fish, '\n') : NULL;
		tap_ok(fish && fe && strstr(fish, "(cut)") && strstr(fish, "(cut)") < fe && !strstr(bird, "(cut)\n  ---- top"),
		       "terminal: a cut candidate is marked (cut), a kept one is not");
		if (!tap_ok(t != NULL, "terminal: drawn"))
			tap_diag("no text");
	}
	free(t);
	{
		gb_canvas c;
		gb_raster_info info;
		int rc = gb_raster_render(d, NULL, &c, &info, &err);
		tap_ok(!rc, "decoding steps render as PNG pixels (%s)", rc ? err.msg : "ok");
		if (!rc) {
			const uint8_t blue[3] = { 0x44, 0x77, 0xAA }, orange[3] = { 0xDD, 0x77, 0x11 };
			double mb[4], mo[2], rule = -1;
			gb_rect p = info.plot;
			int nb = colour_rows(&c, blue, p.x, p.y, p.w, p.h, mb, 4);
			int no = colour_rows(&c, orange, p.x, p.y, p.w, p.h, mo, 2);
			int nr = rule_rows(&c, p.x, p.w, p.y, p.h, &rule);
			tap_ok(nb == 2 && no == 1, "kept bars filled blue (2 of them: %d), the chosen one orange (1: %d), "
			       "the cut ones neither", nb, no);
			tap_ok(nr == 1 && nb == 2 && rule > mb[1] && no == 1 && mo[0] < mb[0],
			       "one dashed rule (%d), below the 3rd bar (at y %.0f, the 3rd bar's middle %.0f)", nr, rule,
			       nb == 2 ? mb[1] : -1.0);
			/* the two hatched bars lie under the rule: grey pixels there, none between bars 1-3 */
			const uint8_t grey[3] = { 0x99, 0x99, 0x99 };
			double mg[4];
			int ng = colour_rows(&c, grey, p.x, (int)rule + 4, p.w / 2, p.y + p.h - (int)rule - 4, mg, 4);
			int up = colour_rows(&c, grey, p.x, p.y, p.w / 2, (int)rule - 4 - p.y, mg, 4);
			tap_ok(ng == 4 && up == 0, "the cut bars (hatched, framed in grey: a top and a bottom edge each) are the "
			       "two under the rule (%d edges), none above it (%d)", ng, up);
			tap_ok(info.min_text_px >= 18, "no text under 18 px (smallest %d)", info.min_text_px);
			gb_canvas_free(&c);
		}
	}
	snprintf(path, sizeof path, "%s/d.csv", dir);
	tap_ok(!gb_export_csv(d, path, 1, &err) && file_has(path, "step 1: cat,4,\" fish\",0.100000001,0.100000001,cut\n") &&
	       file_has(path, "step 1: cat,1,\" cat\",0.400000006,0.349999994,chosen\n"),
	       "CSV: each candidate with its probability, the model's, and its fate");
	/* the key names the cut-off style only where a bar is cut (T = 1, no top-k/top-p: none is) */
	{
		gb_export_opts o = { 0 };
		o.force = 1;
		snprintf(path, sizeof path, "%s/cut.svg", dir);
		int with = !gb_svg_write(d, path, &o, &err) && file_has(path, "cut off (never drawn)") &&
		           file_has(path, "kept (may be drawn)");
		gb_figure *u = gb_fig_new(GB_FIG_DECODE), *p = gb_fig_new(GB_FIG_BARS);
		const float v[3] = { 0.5f, 0.3f, 0.2f };
		const char *lab[3] = { " cat", " dog", " bird" };
		const int marks[3] = { GB_MARK_KEPT | GB_MARK_CHOSEN, GB_MARK_KEPT, GB_MARK_KEPT };
		gb_fig_set_values(p, v, 1, 3);
		gb_fig_set_col_labels(p, lab);
		gb_fig_set_marks(p, marks, NULL, NULL);
		gb_fig_set_title(p, "step 1: cat");
		gb_fig_add_panel(u, p);
		gb_fig_set_title(u, "Decoding at T = 1");
		snprintf(path, sizeof path, "%s/nocut.svg", dir);
		int without = !gb_svg_write(u, path, &o, &err) && !file_has(path, "cut off") &&
		              file_has(path, "kept (may be drawn)") && file_has(path, ">chosen<");
		tap_ok(with && without, "the key lists 'cut off (never drawn)' when a bar is cut (%d), not when none is (%d)",
		       with, without);
		gb_fig_free(u);
	}
	snprintf(path, sizeof path, "%s/d.npy", dir);
	tap_ok(gb_export_npy(d, path, 1, &err) && strstr(err.msg, "CSV"), "NPY refuses, naming CSV (%s)", err.msg);

	/* ---- the tree ---- */
	gb_figure *tr = tree_fig();
	tap_ok(gb_fig_add_node(tr, "x", 9, 0, 0, GB_NODE_KEPT) < 0, "a node whose parent does not exist is refused");
	tap_ok(tr->nodes[3].depth == 2 && tr->nodes[4].depth == 2 && tr->nodes[2].depth == 1, "depths follow parents");
	t = draw(tr, 60, 12, 0, 0, 0, NULL);
	tap_ok(t && strstr(t, "\n  \xC2\xB7" "a  -0.50  = -0.50  best\n    \xC2\xB7" "c  -0.25  = -0.75  best\n") &&
	       strstr(t, "\n    \xC2\xB7" "d  -2.00  = -2.50\n  \xC2\xB7" "b  -1.00  = -1.00  (pruned)"),
	       "terminal: depth first, two columns a level, log-probability, score and state");
	if (t && !strstr(t, "best\n"))
		tap_diag("%s", t);
	free(t);
	{
		gb_canvas c;
		gb_raster_info info;
		int rc = gb_raster_render(tr, NULL, &c, &info, &err);
		tap_ok(!rc && info.box.w > 0.5 * 1600 && info.box.h > 0.3 * 900 && info.min_text_px >= 18,
		       "tree as pixels: fills the slide (box %d x %d), text >= 18 px (%d)", info.box.w, info.box.h,
		       info.min_text_px);
		if (!rc) {
			const uint8_t best[3] = { 0x1F, 0x4E, 0x8C }, pale[3] = { 0xEE, 0xEE, 0xEE };
			double m[4];
			/* best boxes (dark) at depths 1 and 2 in one row: the best path; the pruned one pale */
			int nbest = colour_rows(&c, best, 0, 0, 1600, 900, m, 4);
			int npale = colour_rows(&c, pale, 0, 0, 1600, 900, m, 4);
			tap_ok(nbest >= 1 && npale == 1, "the best path drawn dark (%d row groups), one pruned node pale (%d)",
			       nbest, npale);
			gb_canvas_free(&c);
		}
	}
	snprintf(path, sizeof path, "%s/t.csv", dir);
	tap_ok(!gb_export_csv(tr, path, 1, &err) && file_has(path, "3,1,2,\" c\",-0.25,-0.75,best\n") &&
	       file_has(path, "2,0,1,\" b\",-1,-1,pruned\n"), "CSV: node, parent, depth, token, log p, score, state");

	/* ---- merges ---- */
	gb_figure *st = strips_fig();
	t = draw(st, 60, 10, 0, 0, 0, NULL);
	tap_ok(t && strstr(t, "bytes") && strstr(t, "[t][h][e]") && strstr(t, "[t][*he*]") && strstr(t, "[*the*]") &&
	       strstr(t, "2. t + he (rank 44)"), "terminal: a strip per merge, named, the piece it made starred");
	free(t);
	{
		gb_canvas c;
		gb_raster_info info;
		int rc = gb_raster_render(st, NULL, &c, &info, &err);
		tap_ok(!rc && info.labels_cut == 0 && info.min_text_px >= 18 && info.box.h >= 250,
		       "strips as pixels: nothing cut, text >= 18 px, three strips at the largest size (%d px high)",
		       info.box.h);
		if (!rc)
			gb_canvas_free(&c);
	}

	/* ---- token boxes alternate two tints: ids are names, not amounts (a teacher's review) ---- */
	{
		const char *lab[4] = { "a", "b", "c", "d" };
		const float same[4] = { 5, 5, 5, 5 }, other[4] = { 900, 7, 1500, 3 };
		long n[2][2] = { { 0 } }; /* [figure][tint] pixels */
		uint8_t tint[2][3];
		gb_alt_rgb(0, tint[0]);
		gb_alt_rgb(1, tint[1]);
		int ok = 1;
		for (int k = 0; k < 2; k++) {
			gb_figure *sf = gb_fig_new(GB_FIG_STRIP);
			gb_fig_set_values(sf, k ? other : same, 1, 4);
			gb_fig_set_col_labels(sf, lab);
			gb_fig_set_title(sf, "tokens");
			sf->alternate = 1;
			sf->colorbar = 0;
			gb_canvas c;
			gb_raster_info in;
			if (gb_raster_render(sf, NULL, &c, &in, &err)) {
				ok = 0;
				gb_fig_free(sf);
				continue;
			}
			for (long i = 0; i < (long)c.w * c.h; i++)
				for (int q = 0; q < 2; q++)
					n[k][q] += !memcmp(c.rgba + 4 * i, tint[q], 3);
			/* the first box is the first tint, the box after it the other (sampled near their
			 * top edge, clear of the label) */
			size_t row = (size_t)(in.plot.y + 4) * (size_t)c.w;
			const uint8_t *p0 = c.rgba + (row + (size_t)in.plot.x + 4) * 4;
			const uint8_t *p1 = c.rgba + (row + (size_t)(in.plot.x + in.plot.w + in.plot.w / 2)) * 4;
			ok &= !memcmp(p0, tint[0], 3) && !memcmp(p1, tint[1], 3);
			gb_canvas_free(&c);
			gb_fig_free(sf);
		}
		tap_ok(ok && memcmp(tint[0], tint[1], 3) && n[0][0] > 5000 && n[0][1] > 5000 && n[1][0] > 5000 && n[1][1] > 5000,
		       "four tokens of one id alternate two tints by position (%ld and %ld pixels), as four other ids do (%ld, %ld)",
		       n[0][0], n[0][1], n[1][0], n[1][1]);
	}

	/* ---- bytes under a token strip ---- */
	{
		gb_figure *s1 = gb_fig_new(GB_FIG_STRIP);
		const float ids[2] = { 5, 300 };
		const char *lab[2] = { "t", "\xE2\x96" }, *bytes[2] = { "74", "e2 96" };
		gb_fig_set_values(s1, ids, 1, 2);
		gb_fig_set_col_labels(s1, lab);
		gb_fig_set_bytes(s1, bytes);
		gb_fig_set_title(s1, "bytes");
		snprintf(path, sizeof path, "%s/b.svg", dir);
		gb_export_opts o = { 0 };
		o.force = 1;
		tap_ok(!gb_svg_write(s1, path, &o, &err) && file_has(path, ">e2</text>") && file_has(path, ">96</text>") &&
		       file_has(path, ">74</text>"), "a strip's bytes drawn as boxes of hex pairs (in the SVG)");
		gb_canvas c1, c0;
		gb_raster_info i1, i0;
		int r1 = gb_raster_render(s1, NULL, &c1, &i1, &err);
		gb_fig_set_bytes(s1, NULL);
		int r0 = gb_raster_render(s1, NULL, &c0, &i0, &err);
		long d1 = 0, d0 = 0;
		for (int y = 0; !r1 && !r0 && y < 900; y++)
			for (int x = 0; x < 1600; x++)
				d1 += dark(&c1, x, y) > 96, d0 += dark(&c0, x, y) > 96;
		tap_ok(!r1 && !r0 && d1 > d0 && i1.min_text_px >= 18, "the byte boxes add ink (%ld against %ld pixels) at >= 18 px",
		       d1, d0);
		if (!r1)
			gb_canvas_free(&c1);
		if (!r0)
			gb_canvas_free(&c0);
		gb_fig_free(s1);
	}

	/* ---- every backend writes every new kind ---- */
	gb_figure *all[3] = { st, d, tr };
	for (int i = 0; i < 3; i++) {
		gb_export_opts o = { 0 };
		o.force = 1;
		const char *k = gb_fig_kind_name(all[i]->kind);
		snprintf(path, sizeof path, "%s/%s.svg", dir, k);
		tap_ok(!gb_svg_write(all[i], path, &o, &err) && file_has(path, "</svg>"), "%s: SVG written", k);
		snprintf(path, sizeof path, "%s/%s.pdf", dir, k);
		tap_ok(!gb_pdf_write(all[i], path, &o, &err) && file_has(path, "%PDF-"), "%s: PDF written", k);
		snprintf(path, sizeof path, "%s/%s.png", dir, k);
		tap_ok(!gb_png_write_figure(all[i], path, NULL, NULL, 1, &err), "%s: PNG written", k);
		gb_fig_free(all[i]);
	}
	gb_font_release();
	char cmd[160];
	snprintf(cmd, sizeof cmd, getenv("T_STEPS_KEEP") ? "true %s" : "rm -rf %s", dir);
	if (system(cmd))
		tap_diag("could not remove %s", dir);
	return tap_done();
}
