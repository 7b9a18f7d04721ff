/* classroom_state.c — the teacher's state as data (classroom_int.h): copying it, the fields
 * that changed as a frame, a frame's fields merged into a follower's copy, the state as one
 * line, and the hashes that say two machines hold the same model and drew the same figure. */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <readline/readline.h>

#include "app/classroom_int.h"
#include "viz/figure.h"

static char *dup0(const char *s) { return strdup(s ? s : ""); }

static int32_t *dupv(const int32_t *v, int n)
{
	int32_t *c = malloc(sizeof *c * (size_t)(n > 0 ? n : 1));
	if (n > 0)
		memcpy(c, v, sizeof *c * (size_t)n);
	return c;
}

void cstate_init(cstate *c)
{
	memset(c, 0, sizeof *c);
	c->model = dup0(NULL);
	c->text = dup0(NULL);
	c->lesson = dup0(NULL);
	c->heading = dup0(NULL);
	c->view = dup0(NULL);
	c->qtext = dup0(NULL);
	c->qopts = dup0(NULL);
	c->ids = dupv(NULL, 0);
	c->tgt = dupv(NULL, 0);
	c->vids = dupv(NULL, 0);
	c->vtgt = dupv(NULL, 0);
}

void cstate_free(cstate *c)
{
	free(c->model);
	free(c->text);
	free(c->lesson);
	free(c->heading);
	free(c->view);
	free(c->qtext);
	free(c->qopts);
	free(c->ids);
	free(c->tgt);
	free(c->vids);
	free(c->vtgt);
	memset(c, 0, sizeof *c);
}

void cstate_copy(cstate *d, const cstate *s)
{
	cstate_free(d);
	*d = *s;
	d->model = dup0(s->model);
	d->text = dup0(s->text);
	d->lesson = dup0(s->lesson);
	d->heading = dup0(s->heading);
	d->view = dup0(s->view);
	d->qtext = dup0(s->qtext);
	d->qopts = dup0(s->qopts);
	d->ids = dupv(s->ids, s->n_ids);
	d->tgt = dupv(s->tgt, s->n_tgt);
	d->vids = dupv(s->vids, s->n_vids);
	d->vtgt = dupv(s->vtgt, s->n_vtgt);
}

static int same_v(const int32_t *a, int na, const int32_t *b, int nb)
{
	return na == nb && (!na || !memcmp(a, b, sizeof *a * (size_t)na));
}

int cstate_delta(const cstate *now, const cstate *old, gbx_msg *m)
{
	int n = 0;
	if (!old || strcmp(now->model, old->model) || now->hash != old->hash) {
		gbx_set_s(m, GBX_F_MODEL, now->model);
		gbx_set_u(m, GBX_F_HASH, now->hash);
		n++;
	}
	if (!old || strcmp(now->text, old->text) || !same_v(now->ids, now->n_ids, old->ids, old->n_ids) ||
	    !same_v(now->tgt, now->n_tgt, old->tgt, old->n_tgt)) {
		gbx_set_s(m, GBX_F_TEXT, now->text);
		gbx_set_v(m, GBX_F_IDS, now->ids, now->n_ids);
		gbx_set_v(m, GBX_F_TGT, now->tgt, now->n_tgt);
		n++;
	}
	if (!old || strcmp(now->lesson, old->lesson) || memcmp(now->step, old->step, sizeof now->step) ||
	    strcmp(now->heading, old->heading)) {
		gbx_set_s(m, GBX_F_LESSON, now->lesson);
		gbx_set_v(m, GBX_F_STEP, now->step, 2);
		gbx_set_s(m, GBX_F_HEADING, now->heading);
		n++;
	}
	/* a view travels whole: the command with the ids and cursor it ran on */
	if (!old || strcmp(now->view, old->view) || !same_v(now->vids, now->n_vids, old->vids, old->n_vids) ||
	    !same_v(now->vtgt, now->n_vtgt, old->vtgt, old->n_vtgt) || memcmp(now->vcur, old->vcur, sizeof now->vcur)) {
		gbx_set_s(m, GBX_F_VIEW, now->view);
		gbx_set_v(m, GBX_F_VIEW_IDS, now->vids, now->n_vids);
		gbx_set_v(m, GBX_F_VIEW_TGT, now->vtgt, now->n_vtgt);
		gbx_set_v(m, GBX_F_VIEW_CUR, now->vcur, 4);
		n++;
	}
	if (!old || memcmp(now->cur, old->cur, sizeof now->cur)) {
		gbx_set_v(m, GBX_F_CURSOR, now->cur, 4);
		n++;
	}
	if (!old || now->qid != old->qid || strcmp(now->qtext, old->qtext) || strcmp(now->qopts, old->qopts)) {
		gbx_set_u(m, GBX_F_QID, now->qid);
		gbx_set_s(m, GBX_F_QTEXT, now->qtext);
		gbx_set_s(m, GBX_F_QOPTS, now->qopts);
		n++;
	}
	return n;
}

static void take_s(char **dst, const gbx_msg *m, int k)
{
	if (gbx_has(m, k)) {
		free(*dst);
		*dst = dup0(m->s[k]);
	}
}

static void take_v(int32_t **dst, int *n, const gbx_msg *m, int k)
{
	if (gbx_has(m, k)) {
		free(*dst);
		*dst = dupv(m->v[k], m->nv[k]);
		*n = m->nv[k];
	}
}

/* A list of a fixed length; a shorter one fills with zeros (a frame is never trusted). */
static void take_fixed(int32_t *dst, int n, const gbx_msg *m, int k)
{
	if (!gbx_has(m, k))
		return;
	for (int i = 0; i < n; i++)
		dst[i] = i < m->nv[k] ? m->v[k][i] : 0;
}

void cstate_merge(cstate *c, const gbx_msg *m)
{
	c->seq = m->u[GBX_F_SEQ];
	take_s(&c->model, m, GBX_F_MODEL);
	if (gbx_has(m, GBX_F_HASH))
		c->hash = m->u[GBX_F_HASH];
	take_s(&c->text, m, GBX_F_TEXT);
	take_v(&c->ids, &c->n_ids, m, GBX_F_IDS);
	take_v(&c->tgt, &c->n_tgt, m, GBX_F_TGT);
	take_s(&c->lesson, m, GBX_F_LESSON);
	take_fixed(c->step, 2, m, GBX_F_STEP);
	take_s(&c->heading, m, GBX_F_HEADING);
	take_s(&c->view, m, GBX_F_VIEW);
	take_v(&c->vids, &c->n_vids, m, GBX_F_VIEW_IDS);
	take_v(&c->vtgt, &c->n_vtgt, m, GBX_F_VIEW_TGT);
	take_fixed(c->vcur, 4, m, GBX_F_VIEW_CUR);
	take_fixed(c->cur, 4, m, GBX_F_CURSOR);
	if (gbx_has(m, GBX_F_QID))
		c->qid = (uint32_t)m->u[GBX_F_QID];
	take_s(&c->qtext, m, GBX_F_QTEXT);
	take_s(&c->qopts, m, GBX_F_QOPTS);
}

/* A string for a one-line record: quotes and backslashes escaped, control bytes as \xNN. */
static void put_q(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void cstate_line(FILE *f, const char *what, const cstate *c, uint64_t fig)
{
	uint64_t ih = gbx_fnv(GBX_FNV0, c->ids, sizeof *c->ids * (size_t)c->n_ids);
	ih = gbx_fnv(ih, c->tgt, sizeof *c->tgt * (size_t)c->n_tgt);
	fprintf(f, "%s model=%s:%016llx lesson=", what, c->model, (unsigned long long)c->hash);
	put_q(f, c->lesson);
	fprintf(f, " step=%d/%d view=", c->step[0], c->step[1]);
	put_q(f, c->view);
	fprintf(f, " cursor=%d,%d,%d,%d ids=%d:%016llx q=%u fig=%016llx text=", c->cur[0], c->cur[1], c->cur[2], c->cur[3],
	        c->n_ids, (unsigned long long)ih, c->qid, (unsigned long long)fig);
	put_q(f, c->text);
}

static uint64_t hash_str(uint64_t h, const char *s) { return s ? gbx_fnv(h, s, strlen(s) + 1) : gbx_fnv(h, "", 1); }

uint64_t fig_hash(const gb_figure *f)
{
	if (!f)
		return 0;
	uint64_t h = GBX_FNV0;
	int dims[3] = { f->kind, f->rows, f->cols };
	h = gbx_fnv(h, dims, sizeof dims);
	h = hash_str(h, f->title);
	if (f->values)
		h = gbx_fnv(h, f->values, sizeof *f->values * (size_t)f->rows * (size_t)f->cols);
	for (int i = 0; f->row_labels && i < f->rows; i++)
		h = hash_str(h, f->row_labels[i]);
	for (int i = 0; f->col_labels && i < f->cols; i++)
		h = hash_str(h, f->col_labels[i]);
	for (int i = 0; i < f->n_series; i++)
		h = gbx_fnv(h, f->series[i].y, sizeof *f->series[i].y * (size_t)f->series[i].n);
	for (int i = 0; i < f->n_panels; i++) {
		uint64_t p = fig_hash(f->panels[i]);
		h = gbx_fnv(h, &p, sizeof p);
	}
	return h;
}

const char *class_model_name(const session *s)
{
	if (!s->loaded)
		return "";
	const char *d = s->model.dir;
	size_t n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		n--;
	static char name[256];
	size_t b = n;
	while (b > 0 && d[b - 1] != '/')
		b--;
	snprintf(name, sizeof name, "%.*s", (int)(n - b), d + b);
	return name;
}

static uint64_t hash_file(uint64_t h, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return h;
	static unsigned char buf[1 << 16];
	size_t k;
	while ((k = fread(buf, 1, sizeof buf, f)) > 0)
		h = gbx_fnv(h, buf, k);
	fclose(f);
	return h;
}

static int weight_file(const char *n)
{
	size_t l = strlen(n);
#define ENDS(x) (l >= sizeof x - 1 && !strcmp(n + l - (sizeof x - 1), x))
	return ENDS(".json") || ENDS(".safetensors") || ENDS(".bin") || ENDS("merges.txt");
#undef ENDS
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

uint64_t model_hash(const session *s)
{
	static char cached[1024];
	static uint64_t h;
	if (!s->loaded)
		return 0;
	if (!strcmp(cached, s->model.dir))
		return h;
	snprintf(cached, sizeof cached, "%s", s->model.dir);
	h = GBX_FNV0;
	struct stat st;
	if (stat(s->model.dir, &st) || !S_ISDIR(st.st_mode))
		return h = hash_file(h, s->model.dir);
	/* the files that define what the model computes, in name order: not its README or curves */
	DIR *d = opendir(s->model.dir);
	char **names = NULL;
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		if (weight_file(e->d_name)) {
			names = realloc(names, sizeof *names * (size_t)(n + 1));
			names[n++] = strdup(e->d_name);
		}
	if (d)
		closedir(d);
	if (n)
		qsort(names, (size_t)n, sizeof *names, by_name);
	for (int i = 0; i < n; i++) {
		char p[1400];
		snprintf(p, sizeof p, "%s/%s", s->model.dir, names[i]);
		h = hash_str(h, names[i]);
		h = hash_file(h, p);
		free(names[i]);
	}
	free(names);
	return h;
}

int class_prompt_on, class_say_stderr, class_fullscreen;

void classroom_fullscreen(int on) { class_fullscreen = on; }

void class_say(const char *fmt, ...)
{
	va_list ap;
	if (class_fullscreen)
		return;
	va_start(ap, fmt);
	if (class_say_stderr) {
		fprintf(stderr, "glassbox: ");
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		return;
	}
	if (class_prompt_on)
		printf("\r\033[K");
	vprintf(fmt, ap);
	va_end(ap);
	if (class_prompt_on) {
		rl_on_new_line();
		rl_redisplay();
	}
	fflush(stdout);
}

void class_redraw(void)
{
	if (class_prompt_on) {
		rl_on_new_line();
		rl_redisplay();
	}
	fflush(stdout);
}
