/* bench_long.c — long inputs at GPT-2 small's shape (random weights: the figures depend on the
 * shape only): each run is a fresh child process that builds the model, notes its resident
 * memory, resets the peak (/proc/self/clear_refs), runs the tokens once and reports seconds
 * and the peak above what it held before the run. The same for PyTorch through
 * tools/bench_torch_forward.py, side by side in one run. Prints figures, asserts nothing. */
#include "app/bench_long.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/bench.h"
#include "app/session.h"
#include "app/views.h"
#include "model/forward.h"
#include "viz/cells.h"

/* What a child process is asked to run. */
typedef struct job {
	int T, threads, logits;
	size_t budget;
} job;

typedef struct fig {
	double sec, weights_mb, extra_mb, trace_mb;
	int ok;
} fig;

static double status_mb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t n = strlen(key);
	double kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, n) && line[n] == ':')
			kb = atof(line + n + 1);
	if (f)
		fclose(f);
	return kb / 1024.0;
}

/* Resets VmHWM to the current resident memory (Linux 4.0 on); 0 when it did. */
static int reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return -1;
	int rc = fputs("5", f) < 0;
	return fclose(f) || rc ? -1 : 0;
}

static void gpt2_small(gb_config *c)
{
	gb_config_defaults(c, GB_FAM_GPT2);
	c->d_model = 768;
	c->n_layer = 12;
	c->n_head = c->n_kv_head = 12;
	c->d_head = 64;
	c->d_ffn = 3072;
	c->vocab = 50257;
	c->n_ctx = 1024;
}

/* The child: one run of T tokens with the given trace budget (and then, when logits is set,
 * every row of logits, as PyTorch's forward returns them); writes a fig to fd. */
static void child(int fd, const job *j)
{
	int T = j->T, threads = j->threads, logits = j->logits;
	size_t budget = j->budget;
	fig r = { 0 };
	gb_config c;
	gpt2_small(&c);
	gb_model m;
	gb_err err;
	int *ids = malloc(sizeof(int) * (size_t)T);
	if (ids && !gb_model_init(&m, &c, 1, 0.02f, &err)) {
		for (int i = 0; i < m.n_params; i++)
			r.weights_mb += (double)m.params[i].n * sizeof(float) / 1048576.0;
		for (int i = 0; i < T; i++)
			ids[i] = (7 + 13 * i) % c.vocab;
		gb_kernels_set_threads(threads);
		gb_fwd_opts o = { 0 };
		o.k = gb_kernels_fast();
		gb_trace tr = { 0 };
		tr.budget = budget;
		double base = status_mb("VmRSS");
		reset_peak();
		double t0 = bench_now();
		if (!gb_forward(&m, ids, T, NULL, 0, &tr, &o, &err) && (!logits || gb_trace_get(&tr, "logits"))) {
			r.sec = bench_now() - t0;
			r.extra_mb = status_mb("VmHWM") - base;
			r.trace_mb = (double)gb_trace_bytes(&tr) / 1048576.0;
			r.ok = 1;
		}
	}
	ssize_t w = write(fd, &r, sizeof r);
	(void)w;
	_exit(0);
}

/* Runs fn(fd, j) in a forked child that writes size bytes to fd and exits; 0 when they came. */
static int in_child(void (*fn)(int, const job *), const job *j, void *out, size_t size)
{
	int p[2];
	fflush(NULL);
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		fn(p[1], j);
	}
	close(p[1]);
	int ok = pid > 0 && read(p[0], out, size) == (ssize_t)size;
	if (pid > 0)
		waitpid(pid, NULL, 0);
	close(p[0]);
	return ok ? 0 : -1;
}

static fig run_child(int T, int threads, size_t budget, int logits)
{
	fig r = { 0 };
	job j = { T, threads, logits, budget };
	if (in_child(child, &j, &r, sizeof r))
		r.ok = 0;
	return r;
}

/* Redraws of a long input, as the explorer does one per key: the figure built from the trace
 * (a lazy run computes the head's tensors on first use) and laid out in a 200 x 60 terminal
 * with its window at the last token, the writer included. Best of 5 after a first draw, and
 * that first draw on its own. Run in a child, like the rest: the trace holds its memory. */
typedef struct redraw {
	double first_ms, again_ms, other_ms, grid_ms, attn_ms, layer_ms; /* wall clock */
	double first_cpu, other_cpu, attn_cpu, layer_cpu;                /* the process's CPU time */
	double grid_once_cpu, grid_each_cpu; /* heads L's figure: its sub-layer once, or each head alone */
	int ok;
} redraw;

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double draw_ms(session *s, gb_figure *f)
{
	gb_grid g;
	gb_verr verr;
	gb_cells_opts o;
	char *text = NULL;
	size_t len = 0;
	if (!f || gb_grid_init(&g, 200, 60, &verr))
		return -1;
	gb_cells_opts_default(&o, GB_DEPTH_TRUE);
	o.row0 = o.col0 = f->rows; /* clamped: the window at the end, as the cursor on the last token */
	int rc = gb_cells_render(&g, 0, 0, 200, 60, f, &o, &verr) ||
	         gb_cells_write(&g, GB_DEPTH_TRUE, &text, &len, &verr);
	free(text);
	gb_grid_free(&g);
	(void)s;
	return rc ? -1 : 0;
}

/* what: "grid" the model's 12 x 12 heads, "attn" head h of layer l (that head alone when its
 * layer is not computed), "heads" the same after computing every head of the layer's
 * attention, "layer" after computing its attention and its FFN: what every first view of a
 * layer computed before heads were computed alone. *cpu (may be NULL): the CPU ms it took. */
static double time_view(session *s, const char *what, int l, int h, double *cpu)
{
	double t0 = bench_now(), c0 = cpu_now();
	char name[48];
	if (!strcmp(what, "heads") || !strcmp(what, "layer")) {
		snprintf(name, sizeof name, "L%d.attn.weights", l);
		if (!gb_trace_get(&s->trace, name))
			return -1;
	}
	if (!strcmp(what, "layer")) {
		snprintf(name, sizeof name, "L%d.ffn.hidden", l);
		if (!gb_trace_get(&s->trace, name))
			return -1;
	}
	gb_figure *f = !strcmp(what, "grid") ? view_model(s) : view_attention(s, "weights", l, h);
	double r = f && draw_ms(s, f) == 0 ? (bench_now() - t0) * 1000 : -1;
	if (cpu)
		*cpu = (cpu_now() - c0) * 1000;
	gb_fig_free(f);
	return r;
}

/* CPU ms to build the figures of every head of layer l, not yet computed: heads L (the
 * attention sub-layer once), or (each) one head's view after another, each computed alone. */
static double heads_cpu(session *s, int l, int each)
{
	double c0 = cpu_now();
	int ok = 1;
	if (each)
		for (int h = 1; ok && h <= s->model.cfg.n_head; h++) {
			gb_figure *f = view_attention(s, "weights", l, h);
			ok = f != NULL;
			gb_fig_free(f);
		}
	else {
		gb_figure *f = view_heads(s, l);
		ok = f != NULL;
		gb_fig_free(f);
	}
	return ok ? (cpu_now() - c0) * 1000 : -1;
}

static void redraw_child(int fd, const job *j)
{
	int T = j->T, threads = j->threads;
	redraw r = { 0 };
	session s;
	session_init(&s);
	gb_config c;
	gpt2_small(&c);
	gb_err err;
	int *ids = malloc(sizeof(int) * (size_t)T);
	if (ids && !gb_model_init(&s.model, &c, 1, 0.02f, &err)) {
		s.loaded = 1;
		for (int i = 0; i < T; i++)
			ids[i] = (7 + 13 * i) % c.vocab;
		gb_kernels_set_threads(threads);
		if (!forward(&s, ids, T, NULL, 0)) {
			r.first_ms = time_view(&s, "attn", 6, 3, &r.first_cpu);
			r.again_ms = 1e30;
			for (int k = 0; k < 5; k++) {
				double t = time_view(&s, "attn", 6, 3, NULL);
				r.again_ms = t >= 0 && t < r.again_ms ? t : r.again_ms;
			}
			r.other_ms = time_view(&s, "attn", 6, 4, &r.other_cpu); /* the next head: its own tensors */
			r.grid_ms = time_view(&s, "grid", 0, 0, NULL);
			/* layers not computed yet: every head's attention, then attention and FFN */
			r.attn_ms = time_view(&s, "heads", 8, 3, &r.attn_cpu);
			r.layer_ms = time_view(&s, "layer", 10, 3, &r.layer_cpu);
			r.grid_once_cpu = heads_cpu(&s, 2, 0);
			r.grid_each_cpu = heads_cpu(&s, 4, 1);
			r.ok = r.grid_once_cpu >= 0 && r.grid_each_cpu >= 0 && r.first_ms >= 0 && r.again_ms < 1e30 && r.other_ms >= 0 && r.grid_ms >= 0 && r.attn_ms >= 0 &&
			       r.layer_ms >= 0;
		}
	}
	ssize_t w = write(fd, &r, sizeof r);
	(void)w;
	_exit(0);
}

static redraw run_redraw(int T, int threads)
{
	redraw r = { 0 };
	job j = { T, threads, 0, 0 };
	if (in_child(redraw_child, &j, &r, sizeof r))
		r.ok = 0;
	return r;
}

/* tools/bench_torch_forward.py beside the executable, run with /usr/bin/python3. */
static fig run_torch(int T, int threads)
{
	fig r = { 0 };
	char exe[512], cmd[1200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0 || access("/usr/bin/python3", X_OK))
		return r;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tools/bench_torch_forward.py' %d %d 2>/dev/null", exe, T, threads);
	FILE *f = popen(cmd, "r");
	if (!f)
		return r;
	char line[256] = "";
	if (fgets(line, sizeof line, f) &&
	    sscanf(line, "seconds %lf weights_mb %lf extra_mb %lf", &r.sec, &r.weights_mb, &r.extra_mb) == 3)
		r.ok = 1;
	pclose(f);
	return r;
}

static void row(FILE *out, int T, const char *what, const fig *g, const fig *torch)
{
	if (!g->ok) {
		fprintf(out, "  %5d  %-26s  failed\n", T, what);
		return;
	}
	fprintf(out, "  %5d  %-26s %9.2f %10.1f %10.1f", T, what, g->sec, g->weights_mb, g->extra_mb);
	if (g->trace_mb > 0)
		fprintf(out, " %10.1f", g->trace_mb);
	else
		fprintf(out, " %10s", "-");
	if (torch && torch->ok && torch->sec > 0)
		fprintf(out, "   %5.2fx", g->sec / torch->sec);
	fputc('\n', out);
	fflush(out);
}

int bench_long(FILE *out, int redraws_only)
{
	int threads = gb_kernels_threads();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus > 0 && cpus < threads)
		threads = (int)cpus;
	double load[3] = { 0 };
	FILE *la = fopen("/proc/loadavg", "r");
	if (la) {
		if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
			load[0] = -1;
		fclose(la);
	}
	fprintf(out, "\nlong inputs: GPT-2 small shape, random weights (12 layers, d_model 768, 12 heads, ffn 3072, "
	             "vocabulary 50257), %d thread%s, load %.2f\n",
	        threads, threads == 1 ? "" : "s", load[0]);
	if (!redraws_only)
		fprintf(out, "  each run once in a fresh process; extra = peak resident MB above the process with its weights;\n"
		             "  trace = the trace's own MB after the run; time = seconds / PyTorch's. A lazy run computes the\n"
		             "  last position's logits; '+ then every logit' asks for all of them after it, as PyTorch computes\n");
	if (!redraws_only)
		fprintf(out, "  %5s  %-26s %9s %10s %10s %10s   %s\n", "tokens", "run", "seconds", "weights MB", "extra MB",
		        "trace MB", "time");
	const int Ts[2] = { 512, 1024 };
	for (int i = 0; i < 2 && !redraws_only; i++) {
		int T = Ts[i];
		fig torch = run_torch(T, threads);
		fig lazy = run_child(T, threads, 0, 0);
		fig lazy_all = run_child(T, threads, 0, 1);
		fig full = run_child(T, threads, SIZE_MAX / 2, 0);
		row(out, T, "glassbox, lazy trace", &lazy, &torch);
		row(out, T, "  + then every logit", &lazy_all, &torch);
		row(out, T, "glassbox, full trace", &full, &torch);
		if (torch.ok)
			row(out, T, "PyTorch forward", &torch, &torch);
		else
			fprintf(out, "  %5d  %-26s  not run (needs /usr/bin/python3 with torch and tools/)\n", T,
			        "PyTorch forward");
	}
	fprintf(out, "\n  redraws of the 1024-token run (lazy trace), as the explorer draws per key: the view built\n"
	             "  from the trace and laid out in 200 x 60 cells with its window on the last token, in ms\n");
	redraw rd = run_redraw(1024, threads);
	if (rd.ok)
		fprintf(out, "  first view of a head: attn 6 3 %.1f ms (CPU %.1f ms; that head's tensors computed alone);\n"
		             "  again %.1f ms (best of 5); attn 6 4 %.1f ms (CPU %.1f ms; another head of the layer, alone);\n"
		             "  model (12 x 12 heads' reach) %.1f ms;\n"
		             "  first view after every head of a layer's attention: attn 8 3 %.1f ms (CPU %.1f ms);\n"
		             "  first view of a layer computed whole (attention and FFN, as every first view was before):\n"
		             "  attn 10 3 %.1f ms (CPU %.1f ms). CPU: the process's, all threads (workers spin briefly)\n",
		        rd.first_ms, rd.first_cpu, rd.again_ms, rd.other_ms, rd.other_cpu, rd.grid_ms, rd.attn_ms, rd.attn_cpu,
		        rd.layer_ms, rd.layer_cpu);
	if (rd.ok)
		fprintf(out, "  every head of a layer not computed yet, the figures built (not drawn), CPU: heads 2 (its\n"
		             "  attention sub-layer once) %.0f ms; the 12 heads of layer 4 each computed alone %.0f ms\n",
		        rd.grid_once_cpu, rd.grid_each_cpu);
	else
		fprintf(out, "  redraw: failed\n");
	return 0;
}
