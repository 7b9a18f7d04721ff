/* t_svg.c — every figure kind as SVG is well-formed XML, whatever its tokens hold.
 *
 * Two judges: xmllint (libxml2's parser; libxml2 is not a build dependency of glassbox, so the
 * test calls the tool, and skips that half when it is missing) and the well-formedness check
 * below, which holds the document to the XML 1.0 rules a figure can break: characters XML
 * cannot carry, '<' and '&' outside markup, quoted and unique attributes, names, and tags that
 * nest and close. */
#include "tests/tap.h"
#include "viz/export.h"
#include "viz/figure.h"
#include "viz/font.h"
#include "viz/svg.h"

#include <ctype.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static char why[200];

/* ---- a careful XML 1.0 well-formedness check -------------------------------------------- */

static int bad(const char *doc, const char *p, const char *what)
{
	snprintf(why, sizeof why, "%s at byte %ld", what, (long)(p - doc));
	return 0;
}

static int name_start(int c)
{
	return isalpha(c) || c == '_' || c == ':' || c >= 0x80;
}

static int name_char(int c)
{
	return name_start(c) || isdigit(c) || c == '-' || c == '.';
}

static const char *name(const char *p)
{
	if (!name_start((unsigned char)*p))
		return NULL;
	while (name_char((unsigned char)*p))
		p++;
	return p;
}

/* An entity or character reference at p ('&'); returns the byte after it, or NULL. */
static const char *reference(const char *p)
{
	static const char *ents[] = { "&lt;", "&gt;", "&amp;", "&quot;", "&apos;" };
	for (int i = 0; i < 5; i++)
		if (!strncmp(p, ents[i], strlen(ents[i])))
			return p + strlen(ents[i]);
	if (p[1] == '#') {
		const char *q = p + 2;
		int hex = *q == 'x';
		q += hex;
		if (!(hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q)))
			return NULL;
		while (hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q))
			q++;
		return *q == ';' ? q + 1 : NULL;
	}
	return NULL;
}

/* Every byte forms valid UTF-8 of a character XML 1.0 allows. */
static int chars_ok(const char *doc, long n)
{
	const unsigned char *p = (const unsigned char *)doc, *e = p + n;
	while (p < e) {
		unsigned c = *p;
		int len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		unsigned cp = c;
		if (!len || p + len > e)
			return bad(doc, (const char *)p, "invalid UTF-8");
		if (len > 1) {
			cp = c & (0x7F >> len);
			for (int k = 1; k < len; k++) {
				if ((p[k] & 0xC0) != 0x80)
					return bad(doc, (const char *)p, "invalid UTF-8");
				cp = cp << 6 | (p[k] & 0x3F);
			}
			if (cp < (len == 2 ? 0x80u : len == 3 ? 0x800u : 0x10000u))
				return bad(doc, (const char *)p, "overlong UTF-8");
		}
		if ((cp < 0x20 && cp != 9 && cp != 10 && cp != 13) || (cp >= 0xD800 && cp <= 0xDFFF) ||
		    cp == 0xFFFE || cp == 0xFFFF || cp > 0x10FFFF)
			return bad(doc, (const char *)p, "a character XML cannot hold");
		p += len;
	}
	return 1;
}

static int well_formed(const char *doc)
{
	const char *p = doc, *stack[256];
	size_t stack_len[256];
	int depth = 0, roots = 0;
	if (!chars_ok(doc, (long)strlen(doc)))
		return 0;
	if (!strncmp(p, "<?xml", 5)) {
		p = strstr(p, "?>");
		if (!p)
			return bad(doc, doc, "unterminated XML declaration");
		p += 2;
	}
	while (*p) {
		if (*p != '<') {
			/* character data */
			if (depth == 0 && !isspace((unsigned char)*p))
				return bad(doc, p, "text outside the root element");
			if (*p == '&') {
				const char *q = reference(p);
				if (!q)
					return bad(doc, p, "'&' that is not a reference");
				p = q;
				continue;
			}
			if (*p == '>' && p >= doc + 2 && p[-1] == ']' && p[-2] == ']')
				return bad(doc, p, "']]>' in text");
			p++;
			continue;
		}
		if (!strncmp(p, "<!--", 4)) {
			const char *q = strstr(p + 4, "--");
			if (!q || q[2] != '>')
				return bad(doc, p, "bad comment");
			p = q + 3;
			continue;
		}
		if (!strncmp(p, "<?", 2)) {
			const char *q = strstr(p, "?>");
			if (!q)
				return bad(doc, p, "unterminated processing instruction");
			p = q + 2;
			continue;
		}
		if (p[1] == '/') {
			const char *e = name(p + 2);
			if (!e || depth == 0)
				return bad(doc, p, "stray end tag");
			if ((size_t)(e - (p + 2)) != stack_len[depth - 1] || strncmp(p + 2, stack[depth - 1], stack_len[depth - 1]))
				return bad(doc, p, "end tag does not match");
			while (isspace((unsigned char)*e))
				e++;
			if (*e != '>')
				return bad(doc, e, "end tag not closed");
			depth--;
			p = e + 1;
			continue;
		}
		{
			const char *n0 = p + 1, *e = name(n0), *attrs[64];
			size_t alen[64];
			int na = 0;
			if (!e)
				return bad(doc, p, "bad element name");
			if (depth == 0 && roots++)
				return bad(doc, p, "a second root element");
			p = e;
			for (;;) {
				const char *an, *ae;
				char q;
				int sp = 0;
				while (isspace((unsigned char)*p))
					p++, sp = 1;
				if (*p == '>' || !strncmp(p, "/>", 2))
					break;
				if (!sp)
					return bad(doc, p, "attributes must be separated by space");
				an = p;
				ae = name(p);
				if (!ae)
					return bad(doc, p, "bad attribute name");
				for (int i = 0; i < na; i++)
					if (alen[i] == (size_t)(ae - an) && !strncmp(attrs[i], an, alen[i]))
						return bad(doc, p, "duplicate attribute");
				if (na < 64) {
					attrs[na] = an;
					alen[na++] = (size_t)(ae - an);
				}
				p = ae;
				while (isspace((unsigned char)*p))
					p++;
				if (*p++ != '=')
					return bad(doc, p, "attribute without '='");
				while (isspace((unsigned char)*p))
					p++;
				q = *p++;
				if (q != '"' && q != '\'')
					return bad(doc, p, "unquoted attribute value");
				while (*p && *p != q) {
					if (*p == '<')
						return bad(doc, p, "'<' in an attribute value");
					if (*p == '&') {
						const char *r = reference(p);
						if (!r)
							return bad(doc, p, "'&' in an attribute that is not a reference");
						p = r;
						continue;
					}
					p++;
				}
				if (*p != q)
					return bad(doc, p, "unterminated attribute value");
				p++;
			}
			if (*p == '>') {
				if (depth >= 256)
					return bad(doc, p, "nesting too deep");
				stack[depth] = n0;
				stack_len[depth++] = (size_t)(e - n0);
				p++;
			} else
				p += 2; /* empty element */
		}
	}
	if (depth)
		return bad(doc, p, "unclosed element");
	if (roots != 1)
		return bad(doc, p, "no root element");
	return 1;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static int have_xmllint;

/* xmllint's verdict on the document (1 = parses), or -1 when it is not installed. */
static int xmllint_ok(const char *doc, const char *name)
{
	char file[256], cmd[512];
	FILE *fp;
	if (!have_xmllint)
		return -1;
	snprintf(file, sizeof file, "%s/%s.svg", dir, name);
	fp = fopen(file, "w");
	if (!fp)
		return 0;
	fputs(doc, fp);
	fclose(fp);
	snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", file);
	return system(cmd) == 0;
}

static void judge(const char *doc, const char *kind)
{
	int x;
	tap_ok(doc != NULL, "%s: SVG rendered", kind);
	if (!doc) {
		tap_ok(0, "%s: well-formed", kind);
		return;
	}
	why[0] = 0;
	tap_ok(well_formed(doc), "%s: well-formed XML by the test's own check %s", kind, why);
	x = xmllint_ok(doc, kind);
	if (x < 0)
		printf("ok %d - # SKIP %s: xmllint not installed (apt-get install libxml2-utils)\n", ++tap_n, kind);
	else
		tap_ok(x == 1, "%s: xmllint parses it", kind);
}

/* Tokens XML would choke on: markup characters, quotes, a control byte, invalid UTF-8. */
static const char *nasty[6] = { "<b>", " &amp", "\"q\"", "it's", "a\x01z", "\xff\xfe" };

static gb_figure *heatmap(int numbers)
{
	float v[36];
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	for (int i = 0; i < 36; i++)
		v[i] = (float)i / 35.0f;
	v[7] = NAN;
	gb_fig_set_values(f, v, 6, 6);
	gb_fig_set_row_labels(f, nasty);
	gb_fig_set_col_labels(f, nasty);
	gb_fig_set_title(f, "Attention <L1 H2> & \"friends\"\x02");
	gb_fig_set_caption(f, "softmax(q k^T / sqrt(d_head)) < 1 & > 0");
	gb_fig_set_axes(f, "query <i>", "key & value");
	gb_fig_add_meta(f, "Text", "the <cat> & \"dog\" \xff");
	gb_fig_add_meta(f, "Model", "tiny-lm");
	f->numbers = numbers;
	return f;
}

int main(void)
{
	gb_verr err = { "" };
	char *doc;
	gb_figure *f;
	snprintf(dir, sizeof dir, "/tmp/gb-t_svg-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a temporary folder\n");
		return 1;
	}
	have_xmllint = system("command -v xmllint >/dev/null 2>&1") == 0;

	/* the checker itself must reject what it is there to catch */
	tap_ok(!well_formed("<a><b></a></b>"), "checker rejects crossed tags (%s)", why);
	tap_ok(!well_formed("<a>x & y</a>"), "checker rejects a bare '&' (%s)", why);
	tap_ok(!well_formed("<a t=\"<\"/>"), "checker rejects '<' in an attribute (%s)", why);
	tap_ok(!well_formed("<a>\x01</a>"), "checker rejects a control byte (%s)", why);
	tap_ok(!well_formed("<a>\xff</a>"), "checker rejects invalid UTF-8 (%s)", why);
	tap_ok(!well_formed("<a x=\"1\" x=\"2\"/>"), "checker rejects a duplicate attribute (%s)", why);
	tap_ok(well_formed("<?xml version=\"1.0\"?>\n<a x='1'>&lt;&#60;&#x3c;<b/><!-- c --></a>\n"),
	       "checker accepts references, comments, empty elements %s", why);

	/* heatmap */
	f = heatmap(1);
	doc = gb_svg_render(f, 0, 0, 0, "0.1.0", &err);
	judge(doc, "heatmap");
	if (doc) {
		tap_ok(strstr(doc, "&lt;b&gt;") != NULL, "token <b> escaped as &lt;b&gt;");
		tap_ok(strstr(doc, "&amp;amp") != NULL, "token ' &amp' escaped as &amp;amp");
		tap_ok(strstr(doc, "&quot;q&quot;") != NULL, "token \"q\" escaped with &quot;");
		tap_ok(strstr(doc, "it&apos;s") != NULL, "apostrophe escaped");
		tap_ok(strstr(doc, "a\\x01z") != NULL, "control byte shown as \\x01");
		tap_ok(strstr(doc, "<b>") == NULL && strchr(doc, '\x01') == NULL && strchr(doc, '\x02') == NULL,
		       "no raw markup or control bytes leak");
		tap_ok(strstr(doc, "<title>Attention &lt;L1 H2&gt; &amp; &quot;friends&quot;\\x02</title>") != NULL,
		       "title escaped in <title>");
		tap_ok(strstr(doc, "<desc>softmax(q k^T / sqrt(d_head)) &lt; 1 &amp; &gt; 0</desc>") != NULL,
		       "caption in <desc>");
		tap_ok(strstr(doc, "<gb:item key=\"Text\">the &lt;cat&gt; &amp; &quot;dog&quot; \\xFF</gb:item>") != NULL,
		       "meta value escaped in <metadata>, invalid byte made visible");
		tap_ok(strstr(doc, "<gb:item key=\"Software\">glassbox 0.1.0</gb:item>") != NULL, "Software in metadata");
		tap_ok(strstr(doc, "<gb:item key=\"Colormap\">viridis</gb:item>") != NULL &&
		       strstr(doc, "<gb:item key=\"Range\">0 .. 1</gb:item>") != NULL, "Colormap and Range in metadata");
		{
			const char *cells = strstr(doc, "<g class=\"cells\"");
			const char *end = cells ? strstr(cells, "</g>") : NULL;
			int n = 0;
			for (const char *p = cells; p && end && (p = strstr(p, "<rect")) && p < end; p++)
				n++;
			tap_ok(n == 36, "one <rect> per cell (%d)", n);
			tap_ok(cells && strstr(cells, "fill=\"#ff00ff\"") && strstr(cells, "fill=\"#ff00ff\"") < end,
			       "the NaN cell is magenta");
		}
		tap_ok(count(doc, "<g class=\"numbers\"") == 1 && strstr(doc, ">NaN</text>") != NULL, "numbers drawn, NaN spelled out");
		tap_ok(strstr(doc, "linearGradient") != NULL, "colorbar is a gradient");
		tap_ok(strstr(doc, "width=\"1600\" height=\"900\"") != NULL, "1600 x 900 by default");
	}
	free(doc);
	doc = gb_svg_render(f, 0, 0, 2, "0.1.0", &err);
	tap_ok(doc && strstr(doc, "width=\"3200\" height=\"1800\""), "scale 2 doubles the size");
	free(doc);

	/* the file rules */
	{
		char p[256];
		gb_export_opts o = { .version = "0.1.0" };
		struct stat st;
		snprintf(p, sizeof p, "%s/fig.svg", dir);
		tap_ok(gb_svg_write(f, p, &o, &err) == 0 && stat(p, &st) == 0 && st.st_size > 1000, "SVG written (%s)", err.msg);
		tap_ok(gb_svg_write(f, p, &o, &err) == -1 && strstr(err.msg, "already exists"), "existing file: %s", err.msg);
		o.force = 1;
		err.msg[0] = 0;
		tap_ok(gb_svg_write(f, p, &o, &err) == 0, "force overwrites (%s)", err.msg);
		tap_ok(gb_svg_write(f, "/nonexistent-glassbox-dir/f.svg", &o, &err) == -1 && strstr(err.msg, "does not exist"),
		       "missing folder: %s", err.msg);
	}
	gb_fig_free(f);

	/* a 64 x 64 heatmap: many cells, thinned labels */
	{
		float v[64 * 64];
		const char *labs[64];
		for (int i = 0; i < 64 * 64; i++)
			v[i] = (float)((i * 37) % 101);
		for (int i = 0; i < 64; i++)
			labs[i] = nasty[i % 6];
		f = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(f, v, 64, 64);
		gb_fig_set_row_labels(f, labs);
		gb_fig_set_col_labels(f, labs);
		doc = gb_svg_render(f, 0, 0, 0, "0.1.0", &err);
		judge(doc, "heatmap64");
		tap_ok(doc && count(doc, "<rect") >= 64 * 64, "64 x 64 cells as rects");
		free(doc);
		gb_fig_free(f);
	}

	/* no fonts at all: the SVG is still written, its layout from average glyph widths */
	{
		f = heatmap(0);
		gb_font_set_path("/nonexistent/NoFont.ttf");
		doc = gb_svg_render(f, 0, 0, 0, "0.1.0", &err);
		tap_ok(doc && well_formed(doc) && count(doc, "<text") > 10, "without fonts the SVG is still drawn (%s)",
		       doc ? "ok" : err.msg);
		free(doc);
		gb_font_set_path(NULL);
		gb_fig_free(f);
	}
	/* bars */
	{
		static const float v[6] = { 0.4f, -0.2f, 0.15f, NAN, 0.1f, 0.05f };
		f = gb_fig_new(GB_FIG_BARS);
		gb_fig_set_values(f, v, 1, 6);
		gb_fig_set_col_labels(f, nasty);
		gb_fig_set_title(f, "Next token <after> \"x\"");
		doc = gb_svg_render(f, 0, 0, 0, "0.1.0", &err);
		judge(doc, "bars");
		tap_ok(doc && strstr(doc, "<g class=\"bars\"") && strstr(doc, "&lt;b&gt;"), "bars and escaped labels");
		free(doc);
		gb_fig_free(f);
	}
	/* lines */
	{
		float a[20], b[20];
		for (int i = 0; i < 20; i++) {
			a[i] = sinf(i * 0.3f);
			b[i] = i == 10 ? NAN : cosf(i * 0.3f);
		}
		f = gb_fig_new(GB_FIG_LINES);
		gb_fig_add_series(f, "sin <dim 0>", a, 20);
		gb_fig_add_series(f, "cos & co", b, 20);
		f->x_title = strdup("position \"i\"");
		doc = gb_svg_render(f, 0, 0, 0, "0.1.0", &err);
		judge(doc, "lines");
		tap_ok(doc && count(doc, "<polyline") == 3 + 2, "one polyline for sin, two for cos (split at NaN), two legend swatches (%d)",
		       doc ? count(doc, "<polyline") : -1);
		tap_ok(doc && strstr(doc, ">sin &lt;dim 0&gt;</text>") && strstr(doc, ">cos &amp; co</text>"), "legend escaped");
		free(doc);
		gb_fig_free(f);
	}
	/* strip */
	{
		static const float v[6] = { 0, 0.2f, 0.4f, 0.6f, 0.8f, 1 };
		f = gb_fig_new(GB_FIG_STRIP);
		gb_fig_set_values(f, v, 1, 6);
		gb_fig_set_col_labels(f, nasty);
		doc = gb_svg_render(f, 0, 0, 0, "0.1.0", &err);
		judge(doc, "strip");
		free(doc);
		gb_fig_free(f);
	}
	/* grid */
	{
		gb_figure *g = gb_fig_new(GB_FIG_GRID);
		for (int p = 0; p < 4; p++) {
			gb_figure *q = gb_fig_new(GB_FIG_HEATMAP);
			float v[36];
			char t[32];
			for (int i = 0; i < 36; i++)
				v[i] = (float)(p + i);
			gb_fig_set_values(q, v, 6, 6);
			gb_fig_set_row_labels(q, nasty);
			gb_fig_set_col_labels(q, nasty);
			snprintf(t, sizeof t, "head <%d> & \"co\"", p);
			gb_fig_set_title(q, t);
			gb_fig_add_panel(g, q);
		}
		doc = gb_svg_render(g, 0, 0, 0, "0.1.0", &err);
		judge(doc, "grid");
		tap_ok(doc && count(doc, "<g class=\"cells\"") == 4 && count(doc, "linearGradient id=") == 1,
		       "four panels of cells, one shared colorbar");
		tap_ok(doc && count(doc, "<g class=\"outline\"") == 4 && count(doc, "fill=\"#999999\"") == 4 * 4,
		       "each panel outlined by 4 gray rects (%d groups)", doc ? count(doc, "<g class=\"outline\"") : -1);
		tap_ok(doc && strstr(doc, ">head &lt;2&gt; &amp; &quot;co&quot;</text>"), "panel titles escaped");
		free(doc);
		gb_fig_free(g);
	}
	/* masked scores: the -inf cells are masked (gray, counted as such), the NaN still bad; every
	 * heatmap has its outline just outside the cells */
	{
		static const float v[9] = { 0.5f, -INFINITY, -INFINITY, 0.2f, -0.3f, -INFINITY, NAN, 0.1f, 0.4f };
		double cx = -1, cy = -1, ox = -1, oy = -1;
		const char *cells, *outline;
		f = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(f, v, 3, 3);
		gb_fig_set_caption(f, "q_i . k_j / sqrt(d_head);  -inf where masked (j > i)");
		f->cmap = GB_CMAP_COOLWARM;
		f->range = GB_RANGE_SYMMETRIC;
		f->masked = 1;
		doc = gb_svg_render(f, 0, 0, 0, "0.1.0", &err);
		judge(doc, "masked");
		tap_ok(doc && strstr(doc, ">3 masked cells (-inf), shown in gray</text>"), "caption: 3 masked (-inf) cells");
		tap_ok(doc && strstr(doc, ">1 value is NaN (shown in magenta)</text>"), "caption: 1 value is NaN, apart");
		tap_ok(doc && !strstr(doc, "not finite") && !strstr(doc, "-inf (shown in magenta)"),
		       "the masked -inf are not called bad values");
		tap_ok(doc && count(doc, "fill=\"#606060\"") == 3 && count(doc, "fill=\"#ff00ff\"") == 1,
		       "3 cells in the mask gray, 1 in magenta (%d, %d)", doc ? count(doc, "fill=\"#606060\"") : -1,
		       doc ? count(doc, "fill=\"#ff00ff\"") : -1);
		cells = doc ? strstr(doc, "<g class=\"cells\"") : NULL;
		outline = doc ? strstr(doc, "<g class=\"outline\" shape-rendering=\"crispEdges\">") : NULL;
		if (cells && (cells = strstr(cells, "<rect x=\"")))
			sscanf(cells, "<rect x=\"%lf\" y=\"%lf\"", &cx, &cy);
		if (outline && (outline = strstr(outline, "<rect x=\"")))
			sscanf(outline, "<rect x=\"%lf\" y=\"%lf\"", &ox, &oy);
		tap_ok(outline && cx > 0 && ox == cx - 1 && oy == cy - 1 && strstr(outline, "fill=\"#999999\"") &&
		       strstr(outline, "fill=\"#999999\"") < strstr(outline, "</g>"),
		       "a crisp #999999 outline starts 1 px above and left of the first cell (%g,%g vs %g,%g)", ox, oy, cx, cy);
		free(doc);
		gb_fig_free(f);
	}
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			tap_diag("could not remove %s", dir);
	}
	gb_font_release();
	return tap_done();
}
