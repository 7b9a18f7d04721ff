/* commands.c — the command table and its dispatcher: a command found by its name or a unique
 * prefix (or a "did you mean"), a line split into words, a line or a script run, `help` from
 * the table, and the argument helpers every handler uses (cmd.h). The handlers live in the
 * cmd_*.c files, one file per family of commands. */
#include "app/commands.h"
#include "app/cmd.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/classroom.h"
#include "app/lesson.h"
#include "app/textout.h"

/* Edit distance (insertions, deletions, substitutions) between two short strings, for
 * "did you mean" suggestions. */
static int edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), row[64];
	if (la > 63 || lb > 63)
		return 99;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int prev = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int cur = row[j], sub = prev + (a[i - 1] != b[j - 1]);
			int best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
			row[j] = sub < best ? sub : best;
			prev = cur;
		}
	}
	return row[lb];
}

/* The closest of names (n of them) to word, when it is close enough to be a likely typo. */
static const char *closest(const char *word, const char *const *names, int n)
{
	const char *best = NULL;
	int bd = 99, lw = (int)strlen(word);
	for (int i = 0; i < n; i++) {
		int d = edit_distance(word, names[i]);
		if (d < bd) {
			bd = d;
			best = names[i];
		}
	}
	return bd <= (lw < 5 ? 1 : lw < 10 ? 2 : 3) ? best : NULL;
}

int parse_int(const char *a, int lo, int hi, int *out, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(a, &end, 10);
	if (!*a || *end || errno || v < lo || v > hi) {
		errorf("%s must be a whole number from %d to %d (got '%s')", what, lo, hi, a);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int parse_range(const char *a, int lo, int hi, int *first, int *last, const char *what)
{
	char *end, *dash;
	errno = 0;
	long x = strtol(a, &dash, 10), y = x;
	if (dash != a && *dash == '-' && dash[1])
		y = strtol(dash + 1, &end, 10);
	else
		end = dash;
	if (dash == a || *end || errno || x < lo || y > hi || x > y) {
		errorf("%s takes a range from %d to %d, such as %d-%d or %d (got '%s')", what, lo, hi, lo,
		       hi > lo ? lo + 1 : lo, lo, a);
		return -1;
	}
	*first = (int)x;
	*last = (int)y;
	return 0;
}

const char *command_name(const char *word) { return command_find(word)->name; }

int usage(const char *name)
{
	const command *c = command_find(name);
	if (!*c->usage)
		errorf("%s takes no arguments", c->name);
	else
		errorf("usage: %s %s", c->name, c->usage);
	return -1;
}

/* Reads "L H" (or just "L") as 1-based numbers; the view checks the ranges. */
int layer_head(int argc, char **argv, int need, int *l, int *h)
{
	if (argc != 1 + need)
		return usage(argv[0]);
	const char *what[2] = { "layer", "head" };
	int *out[2] = { l, h };
	for (int i = 0; i < need; i++) {
		char *end;
		errno = 0;
		long v = strtol(argv[1 + i], &end, 10);
		if (!*argv[1 + i] || *end || errno || v < -1000000 || v > 1000000) {
			errorf("the %s must be a whole number, counted from 1 (got '%s')", what[i], argv[1 + i]);
			return -1;
		}
		*out[i] = (int)v;
	}
	return 0;
}

const gb_ttensor *find_tensor(session *s, const char *name)
{
	const gb_ttensor *t = gb_trace_get(&s->trace, name);
	if (!t) {
		const char **names = malloc(sizeof(char *) * (size_t)(s->trace.n ? s->trace.n : 1));
		for (int i = 0; i < s->trace.n; i++)
			names[i] = s->trace.t[i].name;
		const char *near = closest(name, (const char *const *)names, s->trace.n);
		if (near)
			errorf("no trace tensor '%s': did you mean '%s'? ('trace' lists the names)", name, near);
		else
			errorf("no trace tensor '%s': 'trace' lists the names", name);
		free(names);
	}
	return t;
}

/* help's families, in the order a newcomer meets them. A command of the table that no
 * family names (a new one) is listed under "more", so help never hides a command. */
static const struct {
	const char *name, *commands;
} families[] = {
	{ "the text", "run tokenize step" },
	{ "views of the current run (figures)", "embed pe qkv scores attn model ln ffn resid next cross show heads lens arch pair" },
	{ "what each architecture choice does", "loss positions norms experts linear receptive cost compare-models" },
	{ "generation", "generate beam translate" },
	{ "probes", "ablate near compare" },
	{ "numbers and files", "trace print dump export calc masks" },
	{ "models", "models load info init export-model train eval curves bench" },
	{ "lessons, screens and settings", "lesson tui window set doctor help quit" },
	{ "a class on the local network", "teach tally follow answer" },
};

static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

/* One line of the list: "  NAME USAGE" in a column of `col`, then the one-line help wrapped
 * under itself; a usage too long for the column puts the help on the next line. */
static void help_entry(const command *c, int width, int col)
{
	char head[512];
	snprintf(head, sizeof head, "  %s%s%s", c->name, *c->usage ? " " : "", c->usage);
	int hw = gb_utf8_width(head);
	if (hw + 1 > col) {
		/* the usage wrapped on its own, under the name */
		printf("  %s", c->name);
		if (*c->usage) {
			putchar(' ');
			text_wrap(stdout, c->usage, width, 3 + (int)strlen(c->name), 4 + (int)strlen(c->name));
		} else
			putchar('\n');
		printf("%*s", col, "");
	} else
		printf("%s%*s", head, col - hw, "");
	text_wrap(stdout, c->help, width, col, col);
}

/* A long help, its lines joined into paragraphs at the terminal's width; a line that starts
 * with "word:" (a setting, an option) or "- " starts a paragraph of its own. */
static void help_more(const char *more, int width)
{
	char *copy = strdup(more), *save = NULL, para[4096] = "";
	int item = 0;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t k = strspn(l, "abcdefghijklmnopqrstuvwxyz-");
		int starts = (k > 0 && l[k] == ':' && l[k + 1] == ' ') || !strncmp(l, "- ", 2);
		if (starts && para[0]) {
			text_wrap(stdout, para, width, 0, item ? 2 : 0);
			para[0] = 0;
		}
		if (!para[0])
			item = starts;
		snprintf(para + strlen(para), sizeof para - strlen(para), "%s%s", para[0] ? " " : "", l);
	}
	if (para[0])
		text_wrap(stdout, para, width, 0, item ? 2 : 0);
	free(copy);
}

int cmd_help(session *s, int argc, char **argv, const char *rest)
{
	int width = text_width();
	if (argc > 1) {
		const command *c = command_find(argv[1]);
		if (!c)
			return -1;
		printf("%s", c->name);
		if (*c->usage) {
			putchar(' ');
			text_wrap(stdout, c->usage, width, (int)strlen(c->name) + 1, (int)strlen(c->name) + 1);
		} else
			putchar('\n');
		printf("  ");
		text_wrap(stdout, c->help, width, 2, 2);
		if (c->more && *c->more) {
			putchar('\n');
			help_more(c->more, width);
		}
		return 0;
	}
	/* the column of the one-line helps: narrower on a narrow terminal */
	int col = width >= 100 ? 34 : width >= 80 ? 26 : 20;
	printf("Start here:\n");
	static const char *start[][2] = {
		{ "run When Mary and John went to the park, John gave a ball to", "a text to look at" },
		{ "step", "a guided tour of it, one stage at a time" },
		{ "attn 1 1", "where each token looks, in layer 1, head 1" },
		{ "next", "what the model expects to come next" },
		{ "lesson", "lessons: tokens to decoding, then the variants" },
	};
	for (size_t i = 0; i < sizeof start / sizeof *start; i++) {
		int w = 2 + gb_utf8_width(start[i][0]);
		printf("  %s", start[i][0]);
		if (w + 1 > col) {
			printf("\n%*s", col, "");
		} else
			printf("%*s", col - w, "");
		text_wrap(stdout, start[i][1], width, col, col);
	}
	printf("\nCommands by family (a unique prefix is enough; 'help CMD' says more):\n");
	int nf = (int)(sizeof families / sizeof *families);
	for (int k = 0; k < nf; k++) { /* each family in its own order */
		printf("\n%s\n", families[k].name);
		char *names = strdup(families[k].commands), *save = NULL;
		for (char *nm = strtok_r(names, " ", &save); nm; nm = strtok_r(NULL, " ", &save))
			for (const command *c = commands; c->name; c++)
				if (!strcmp(c->name, nm))
					help_entry(c, width, col);
		free(names);
	}
	int more = 0;
	for (const command *c = commands; c->name; c++) {
		int listed = 0;
		for (int j = 0; j < nf && !listed; j++)
			listed = in_list(families[j].commands, c->name);
		if (!listed) {
			if (!more++)
				printf("\nmore\n");
			help_entry(c, width, col);
		}
	}
	return 0;
}

int cmd_quit(session *s, int argc, char **argv, const char *rest) { return 1; }

/* The wide views' window of columns (cmd_view.c takes it apart). */
#define UNITS_HELP \
	"--units A-B shows columns A to B (counted from 1) of a wide table, e.g. --units 65-128;\n" \
	"the first 64 by default, --units all for every column. The subtitle names the window.\n" \
	RANGE_HELP

/* The fixed colour scale of a heatmap (the value axis of a bar chart), kept for the stage. */
#define AT_HELP \
	"--at T: on a long input, when the query x key map is wider than the terminal, the map is\n" \
	"a square window ending on token T (default: the last), so the diagonal shows.\n"
#define RANGE_HELP \
	"--range LO HI fixes the colour scale (the bars' axis) at LO..HI, so two figures compare on\n" \
	"one scale (raw and scaled scores, two temperatures); the window's keys keep it."

const command commands[] = {
	{ "help", "[COMMAND]", "list the commands, or explain one", "", cmd_help, NO_REPLAY },
	{ "load", "DIR|NAME|FILE.bin [--tokenizer FILE]", "load a model folder, a shipped model by name (tiny-lm, tiny-mt), or a llama2.c checkpoint",
	  "A folder holds config.json, model.safetensors (or shards named by\n"
	  "model.safetensors.index.json) and tokenizer.json. A llama2.c checkpoint (stories15M.bin)\n"
	  "takes tokenizer.bin from beside it, or --tokenizer FILE. The files are checked before use:\n"
	  "a broken file is named with what is wrong, and the model loaded before stays loaded.", cmd_load, NO_REPLAY },
	{ "models", "", "the shipped models", "", cmd_models, NO_REPLAY },
	{ "info", "[model|params|cost]", "the loaded model's architecture and sizes",
	  "With no argument, everything: the model's description (family, sizes, norm, positions,\n"
	  "output, parameters, the KV cache's bytes per token), then the textbook's table of its\n"
	  "sub-layers with their parameters and their multiply-adds for the current text. `info model`\n"
	  "prints the description alone, `info params` the table's parameter columns, `info cost` its\n"
	  "multiply-adds (narrower listings, for a slide or a small terminal).", cmd_info, REPLAY },
	{ "export-model", "DIR|FILE.bin --llama2c OUT.bin [--version 0|1|2] | --safetensors OUTDIR [--dtype f32|bf16] [--force]",
	  "write a model as a llama2.c checkpoint, or as a model folder",
	  "--safetensors writes a model folder (config.json, model.safetensors, tokenizer.json) as\n"
	  "glassbox's own models are stored; --dtype bf16 stores the weight matrices as bfloat16 (half\n"
	  "the bytes, each weight rounded to nearest even with 8 significant bits; vectors stay\n"
	  "float32), which is how the shipped variants are kept small. An existing folder's files are\n"
	  "replaced only with --force.\n"
	  "llama2.c: version 0 is the legacy layout run.c reads (the default), 1 the versioned float32 one, 2\n"
	  "the int8 one runq.c reads (Q8_0 as export.py writes it: groups of 64 values, halved until\n"
	  "they divide dim, each an int8 per value and a float32 scale, max |w| / 127; the norms stay\n"
	  "float32). The model must be one llama2.c can run: a Llama with RMSNorm (eps 1e-5), SwiGLU,\n"
	  "no biases and RoPE with theta 10000. llama2.c rotates adjacent pairs: a Hugging Face Llama\n"
	  "(rotating halves) is written with each head's q and k rows reordered to match. Loading\n"
	  "versions 0 and 1 back gives the same weights bit for bit; a version 2 file written back as\n"
	  "version 2 is the same file (its groups and scales kept as loaded).", cmd_export_model, NO_REPLAY },
	{ "init", "DIR [--preset gpt2|llama|encdec] [--seed N] [--force] [--dim D --layers L --heads H --kv-heads K --hidden F --vocab V --context C] [--set FIELD=VALUE]...",
	  "write a small randomly initialized model folder",
	  "A random model shows how the engine works, not what a trained model learned. The sizes make\n"
	  "one of a real model's shape for benchmarks: init /tmp/gpt2s --dim 768 --layers 12 --heads 12\n"
	  "--vocab 50257 --context 1024 (GPT-2 small; --hidden defaults to 4 x dim). --set changes one\n"
	  "field of the architecture as train --set does (position=alibi, num_local_experts=4, ...).", cmd_init, NO_REPLAY },
	{ "tokenize", "[--steps|--merges] [--tokenizer DIR] TEXT | --compare DIR1 DIR2 TEXT",
	  "show the tokens (pieces and ids) of TEXT; --steps replays every step and BPE merge",
	  "Byte-level BPE starts from the bytes of each word and merges neighbouring pieces, the\n"
	  "merge learned earliest (lowest rank) first, until no learned merge applies. A word the\n"
	  "training text never had stays in several pieces. --steps also shows the tokenizer's\n"
	  "normalizer and pre-tokenizer (Llama 2's \"\u2581\" for spaces, Llama 3's regex) and the\n"
	  "characters that fell back to bytes. --special matches added tokens such as <s>;\n"
	  "--template adds the ones the tokenizer puts around a text. --tokenizer DIR uses another\n"
	  "folder's tokenizer; --compare shows two side by side; --file prints the ids of each\n"
	  "line (or NUL-separated record) of FILE, one line each. --merges draws the replay as token\n"
	  "strips, one per merge (per group of merges beyond 11); --steps makes the same figure the\n"
	  "one the window shows and export writes.", cmd_tokenize, REPLAY },
	{ "run", "TEXT | --file FILE | --ids N... [--target-ids N...]", "run TEXT through the model; it becomes the current text",
	  "Everything the trace holds comes from the last run. A text longer than the context keeps\n"
	  "its last tokens (and says so). --file runs a UTF-8 file as the text, newlines and ';'\n"
	  "included. An encoder-decoder runs TEXT through the encoder and the decoder start token\n"
	  "through the decoder, or --target-ids as the decoder input. A run longer than half a second\n"
	  "shows its progress; Ctrl-C stops it.", cmd_run, REPLAY },
	{ "step", "[back|N]", "walk the current text through the pipeline, one stage at a time",
	  "Each step shows the next stop of the tour, from the tokens through every layer's norm,\n"
	  "queries and keys, scores, weights, heads and feed-forward to the next token, with a\n"
	  "plain explanation and the figure. 'step back' goes back; 'step N' jumps to stop N.", cmd_step, REPLAY },
	{ "embed", "[--units A-B] [--range LO HI]", "the token embeddings of the current text (token x feature)",
	  UNITS_HELP, cmd_embed, REPLAY },
	{ "pe", "[FEATURE ...] [--units A-B] [--range LO HI]", "the positional encoding (position x feature), or a line plot of chosen features",
	  "Sinusoidal: PE(i, 2k) = sin(i / 10000^(2k/d)), PE(i, 2k+1) = cos(i / 10000^(2k/d)).\n"
	  "For RoPE it shows the rotation angles, for ALiBi the bias of each head.\n"
	  "Positions and features are labelled from 0, as the formula counts them; --units counts\n"
	  "columns from 1 (column 1 is feature 0). The line plot of a sinusoid is drawn smooth.\n" UNITS_HELP, cmd_pe, REPLAY },
	{ "qkv", "L H [--units A-B] [--range LO HI]", "queries, keys and values of head H in layer L", UNITS_HELP, cmd_qkv, REPLAY },
	{ "scores", "L H [raw|masked] [--at T] [--range LO HI]", "attention scores of head H in layer L: raw q.k, or scaled and masked",
	  "masked (the default) is q.k / sqrt(d_head) with -inf where the causal mask hides a key:\n"
	  "exactly what enters the softmax.\n" AT_HELP RANGE_HELP, cmd_scores, REPLAY },
	{ "attn", "L H [--lines] [--at T] [--range LO HI]", "attention weights of head H in layer L (query x key; rows sum to 1)",
	  "--lines draws the head as lines, as BertViz's head view does: the queries on the left, the\n"
	  "keys on the right, a line from each query to each key, wider and darker with its weight.\n"
	  AT_HELP RANGE_HELP, cmd_head_stage, REPLAY },
	{ "model", "[--layers A-B]", "every layer and head's attention weights at once",
	  "At the prompt the grid shows the layers that fit the terminal, and a line names the\n"
	  "command for the others: model --layers 3-4.", cmd_model, REPLAY },
	{ "ln", "L [K] [--units A-B] [--range LO HI]", "layer norm K (1, 2 or 3) of layer L: statistics of its input and its output",
	  UNITS_HELP, cmd_ln, REPLAY },
	{ "ffn", "L [--units A-B] [--range LO HI]", "the feed-forward network's hidden units in layer L", UNITS_HELP, cmd_ffn, REPLAY },
	{ "resid", "", "the residual stream's length per token after every sub-layer", "", cmd_resid, REPLAY },
	{ "next", "[K] [--temp T] [--range LO HI]", "the K most probable next tokens (default 10)", RANGE_HELP, cmd_next, REPLAY },
	{ "cross", "L H [--lines]", "cross-attention of head H in decoder layer L (encoder-decoder models)", "", cmd_head_stage, REPLAY },
	{ "arch", "", "the loaded model's architecture as a block diagram, the stage on show highlighted",
	  "Embedding, positions, one layer (attention with its heads x d_head, the feed-forward\n"
	  "d_model -> d_ffn -> d_model, the norms where this model puts them, the residual adds), the\n"
	  "final norm and the output; an encoder-decoder shows both stacks and the cross-attention.\n"
	  "The block of the view on show (attn, ffn, ln, ... in the explorer and the window too) is\n"
	  "highlighted. Export it for the slide on d_model, d_head and d_ffn.", cmd_arch, REPLAY },
	{ "show", "NAME [I] [--units A-B] [--range LO HI]", "any trace tensor as a figure; I picks one slice of a 3-D tensor",
	  UNITS_HELP, cmd_show, REPLAY },
	{ "pair", "[TITLE [| LEFT | RIGHT]]", "the last two heatmaps or bar charts side by side, on one scale, as one slide",
	  "Show one figure, then another, then pair: e.g. show enc.L2.attn.weights 1, show\n"
	  "dec.L2.attn.weights 1, pair Encoder and decoder. Maps take the union of their ranges (maps\n"
	  "much wider than tall go one over the other); bar charts one length scale, their common axis\n"
	  "where they share one (next 6 --temp 0.5 --range 0 0.1, next 6 --temp 2 --range 0 0.1, pair).\n"
	  "Each panel is named by what its title says apart from the other's, or by LEFT and RIGHT.", cmd_pair, REPLAY },
	{ "loss", "[--curve]", "the loss of each token of the current text: -log p(token | the tokens before it)",
	  "A token strip, each token coloured by how surprised the model was by it (the first token is\n"
	  "predicted by nothing); --curve draws the losses along the positions with their running mean.\n"
	  "After 'set context N' a run may be longer than the context the model was trained on (for\n"
	  "every kind of positions but learned ones); the curve draws the part past it as its own line.", cmd_loss, REPLAY },
	{ "norms", "[--grad [--check]]", "the residual stream's norm layer by layer; --grad the loss's gradient norm per layer",
	  "Without --grad: the mean over the tokens of ||x|| after the embedding and after each layer.\n"
	  "--grad: a backward pass through the trainer's code of the current text's next-token loss,\n"
	  "and the norm of its gradient with respect to each layer's weights. Pre- and post-norm side\n"
	  "by side: compare-models tiny-lm tiny-lm-postnorm norms --grad. --check prints each layer's\n"
	  "gradient norm beside the loss's slope along that gradient by central differences of the\n"
	  "forward pass alone (they agree when the backward pass is right).", cmd_norms, REPLAY },
	{ "experts", "L [--load | --tokens [N]]", "a mixture of experts: where the router sends each token of the current text",
	  "The tokens x experts map of the router's probabilities in layer L, the chosen experts of each\n"
	  "token in brackets; --load the share of the text's choices each expert got (even is 1/E);\n"
	  "--tokens each expert's N most frequent tokens on the text (default 6), with their counts.", cmd_experts, REPLAY },
	{ "linear", "L H [--state [N]]", "linear attention: the n x n weights it implies, and the d x d state that replaces them",
	  "Prints both orders of computation of head H in layer L (the implied weights times the\n"
	  "values; the running state phi(k) v^T read by phi(q)) and their largest difference, and\n"
	  "draws the implied weights beside the state (each divided by its largest value). --state:\n"
	  "the state after 1/N, 2/N, ... of the keys (default 4),\n"
	  "on one scale: it fills in, and never grows.", cmd_linear, REPLAY },
	{ "receptive", "[N]", "which tokens each position can reach after 1, 2, ... layers under the mask in force",
	  "One panel per layer for N positions (default the current text's, at most 64), under the\n"
	  "pattern 'set mask' put on the runs (or the causal mask): position i has read token j after l\n"
	  "layers when l allowed pairs chain them. A window of w reaches l(w - 1) + 1 tokens.", cmd_receptive, REPLAY },
	{ "cost", "[--memory] [--max N]", "attention's time (or memory) against the length, measured: softmax, window, linear",
	  "One head (d_head 64, causal) of 64, 128, ... up to N tokens (4096) through the engine in use:\n"
	  "softmax attention, a sliding window of 64 and linear attention, each timed (the best of three\n"
	  "means), drawn on log2-log2 axes where a power law is a straight line: its measured slope is\n"
	  "in the legend (2: quadratic, 1: linear). --memory: the bytes each form allocates or keeps.\n"
	  "A few seconds; 'bench attention' prints the same table.", cmd_cost, NO_REPLAY },
	{ "compare-models", "A B VIEW [ARGS]", "the same view on two models as one figure of two panels",
	  "Each model (a folder or a shipped model's name) runs the current text through its own\n"
	  "tokenizer and makes VIEW as the command would: compare-models tiny-lm tiny-lm-rope attn 3 2.\n"
	  "Two heatmaps share one colour scale; two grids (heads L) become a row of panels per model;\n"
	  "two token strips (loss) two rows on one scale; two line plots (loss --curve, positions\n"
	  "offset) one plot with each series named by its model. The session's model stays loaded.", cmd_compare_models, NO_REPLAY },
	{ "positions", "offset [L] | shift [L] [H] [--by K] | rope [PAIR ...] | alibi | buckets [L]",
	  "what the model's kind of positions does to attention",
	  "offset: each head's score or bias by how far back the key is (ALiBi's and T5's bias exactly;\n"
	  "other models: the mean scaled score at each offset of the current text). shift: the text\n"
	  "run alone and after K copies of its first token (default 8): layer L's scores among its\n"
	  "words are equal under RoPE, ALiBi and T5's bias, and differ under learned or sinusoidal\n"
	  "positions; the numbers per head, and head H's two maps side by side. rope: cos(i theta_k),\n"
	  "how each pair of features turns along the positions. alibi: the slopes. buckets: T5's\n"
	  "learned table, head x bucket, each bucket labelled with the offsets it covers.", cmd_positions, REPLAY },
	{ "export", "FILE.png|FILE.svg|FILE.pdf|FILE.csv|FILE.npy [--scale S] [--size WxH] [--force]",
	  "write the current figure for slides (PNG, SVG, PDF) or as numbers (CSV, NPY)",
	  "PNG, SVG and PDF default to 1600x900 (16:9; a PDF page of 1600 x 900 points, vectors, fonts\n"
	  "embedded); --scale 2 doubles everything for high-DPI.\n"
	  "An existing file is kept unless --force. The PNG records the model, the text, the\n"
	  "tensor, layer, head, colormap and range in its text chunks.", cmd_export, NO_REPLAY },
	{ "window", "[--full]", "open (or close) the projector window: it always shows the current figure",
	  "In the window: Left/Right change the head, Up/Down the layer, Tab the stage; F11 or f full\n"
	  "screen (--full opens it so), + and - the text size; pointing at a cell shows its value and\n"
	  "tokens, a click on a head of 'model' or 'heads L' opens it, l shows a head as lines, [ and ]\n"
	  "change the temperature of 'next'; a command without a figure leaves a card of its text.\n"
	  "q closes it. The prompt keeps working while it is open.", cmd_window, NO_REPLAY },
	{ "trace", "", "list every tensor of the last run with its shape", "", cmd_trace, REPLAY },
	{ "print", "NAME [I] [--row R]", "print a trace tensor's numbers",
	  "I picks one slice of a 3-D tensor (a head); --row R one row of it (from 1, -1 the last),\n"
	  "one number per line beside its token: print L1.attn.weights 2 --row -1.", cmd_print, REPLAY },
	{ "dump", "NAME FILE.npy|FILE.csv [--force]", "write a trace tensor as NumPy .npy or .csv",
	  "The format follows the file's extension; the file is written to a temporary name and\n"
	  "renamed. An existing file is kept unless --force is given.", cmd_dump, NO_REPLAY },
	{ "compare", "", "run the current input on the ref and fast engines and show their differences",
	  "For every trace tensor: the largest absolute difference and the largest relative\n"
	  "difference, max|fast - ref| / max|ref|.", cmd_compare, REPLAY },
	{ "set", "engine ref|fast|scalar|avx2|avx512 | threads N | palette auto|viridis|magma|cividis|gray|coolwarm | colors auto|plain|16|256|truecolor | textbook on|off | context N|trained | mask none|window W|blocks B|strided S|dilated W [D]|global G W",
	  "change a setting",
	  "engine: the full-precision reference or the optimized kernels (the text runs again).\n"
	  "palette: the colormap of unsigned figures (signed ones keep the diverging map).\n"
	  "colors: the terminal's colour depth (auto follows COLORTERM, TERM and NO_COLOR).\n"
	  "textbook: layer norm divides by (sigma + eps) as the textbook does (the text runs again).\n"
	  "context: the longest run this session accepts, past the trained one for any positions but\n"
	  "learned ones ('trained' goes back).\n"
	  "mask: a sparse pattern (as 'masks' draws them) on top of the causal mask for every run of\n"
	  "softmax self-attention; the text runs again and the change in its loss and predictions is\n"
	  "printed and drawn ('receptive' shows how far it reaches with depth); 'set mask none' takes it\n"
	  "off and prints the change back.\n"
	  "palette and colors are display settings: every figure follows them at once, at the prompt,\n"
	  "in the explorer, in the window and in a lesson, and so do its exports.", cmd_set, NO_REPLAY },
	{ "generate", "N [--temp T] [--top-k K] [--top-p P] [--seed S]", "extend the current text by N tokens, one step at a time",
	  "Each step samples the next token from the model's distribution at the last position:\n"
	  "softmax(logits / T), keeping the K most probable and then the smallest set reaching P.\n"
	  "--temp 0 is greedy. The text grows, so every view afterwards shows the longer text.\n"
	  "After each token: the earlier tokens the new one attends to most (last layer, mean of heads).\n"
	  "Ctrl-C stops it and keeps what was generated. The figure (for the window and export):\n"
	  "each step's most probable tokens as bars, the cut-offs drawn, the chosen token framed.", cmd_generate, REPLAY },
	{ "beam", "K N", "beam search of width K for N tokens after the current text, step by step",
	  "At every step each kept sequence is extended by its K most probable next tokens, and the\n"
	  "K best of all the extensions (by the sum of their log-probabilities) are kept. The figure\n"
	  "(for the window and export) is the tree of kept beams with their scores.", cmd_beam, REPLAY },
	{ "translate", "TEXT", "translate TEXT with an encoder-decoder model (greedy decoding)",
	  "The encoder reads TEXT; the decoder writes one token at a time until the end token.\n"
	  "Afterwards the trace holds the whole translation: 'cross L H' shows the alignment.", cmd_translate, REPLAY },
	{ "heads", "[L]", "all heads of layer L side by side; without L, what each head does (the head detector)",
	  "Scores are mean attention weights read from the trace: on the current text for the\n"
	  "previous, first and self scores, and on random runs of tokens seen twice for induction\n"
	  "(a head that looks from a token to what followed it last time). For an encoder-decoder\n"
	  "it scores how monotone each cross-attention head's alignment is.", cmd_heads, REPLAY },
	{ "train", "--preset NAME | --corpus FILE [--set FIELD=VALUE]... [--out DIR] [--steps N] [--force] [--resume]",
	  "train a model: a shipped recipe, or a small language model on your own text",
	  "The data is generated (presets) or read (--corpus, plain UTF-8 text: a BPE vocabulary\n"
	  "is learned on it first). The model folder is checkpointed as training goes; --resume\n"
	  "continues a stopped run. At the end the probes are measured and written, with the\n"
	  "command and the loss curves, into the folder's README.md and loss.csv.\n"
	  "Presets: tiny-lm, tiny-mt, and tiny-lm's variants, each tiny-lm with one choice changed:\n"
	  "tiny-lm-sinusoidal, tiny-lm-rope, tiny-lm-alibi, tiny-lm-t5 (T5's learned relative bias),\n"
	  "tiny-lm-nopos, tiny-lm-postnorm, tiny-lm-rmsnorm, tiny-lm-mqa (1 key/value head, FFN 544),\n"
	  "tiny-lm-gqa (2), tiny-lm-window (8), tiny-lm-swiglu (FFN 344), tiny-lm-moe (4 experts of\n"
	  "128, top-2), tiny-lm-switch (4 experts, top-1), tiny-lm-linear (linear attention).\n"
	  "--set FIELD=VALUE changes one field of the recipe (repeat it for more): position,\n"
	  "norm, norm_position, final_norm, activation, attention, window, n_kv_head, n_head,\n"
	  "head_dim, d_model, n_layer, d_ffn, context, bias, qkv_bias, ffn_bias, norm_bias,\n"
	  "tie_word_embeddings, scale_embedding, norm_eps, rope_theta,\n"
	  "relative_attention_num_buckets, relative_attention_max_distance, num_local_experts,\n"
	  "num_experts_per_tok, norm_topk_prob, router_aux_loss_coef; and the training's vocab,\n"
	  "steps, batch, seq, lr, warmup, lr_min, weight_decay, clip, label_smoothing, seed,\n"
	  "eval_every, save_every, induction_frac. E.g. train --preset tiny-lm --set position=alibi.", cmd_train, NO_REPLAY },
	{ "eval", "DIR [--preset NAME]", "measure a trained model's probes on held-out data",
	  "With --preset NAME, also the held-out loss on the batches training NAME measured it on (the\n"
	  "preset's generated text): the loss of the weights as stored, bf16 ones included.", cmd_eval, NO_REPLAY },
	{ "curves", "DIR", "a trained model's loss curves (its loss.csv) as a figure", "", cmd_curves, NO_REPLAY },
	{ "calc", "softmax|layernorm ROW, ROW, ... [--causal] [--eps E] [--textbook|--compare] | EXPR",
	  "compute a softmax or a layer norm of numbers you give, exactly (the textbook's examples), or a number",
	  "Rows are separated by commas: calc softmax 2 0.1 1 1, 0 0.9 0.9 0.9 --causal.\n"
	  "layernorm prints each row's mean, variance and sigma; --textbook divides by (sigma + eps)\n"
	  "as the textbook does, otherwise by sqrt(variance + eps) as libraries do; --compare shows\n"
	  "the library form minus the textbook's (the two differ in the second decimal). calc EXPR\n"
	  "computes a number as lessons do: + - * / ^, sqrt, exp, ln ..., t(NAME, i, j) an entry of\n"
	  "a trace tensor, cosine(NAME, i, j) of two of its rows, cfg(d_model) (lessons/README.md):\n"
	  "calc cosine(embed.sum, 3, 8), calc t(L1.attn.weights, 1, -1, 1).", cmd_calc, REPLAY },
	{ "near", "TEXT [K]", "the K tokens whose embeddings are closest to TEXT's first token (cosine)", "", cmd_near, REPLAY },
	{ "masks", "[N] [--window W]", "the sparse attention patterns of efficient Transformers, as masks for N tokens",
	  "Causal, local window, chunked blocks, strided, dilated, global tokens, random, and the\n"
	  "window + global + random hybrid (the Longformer/BigBird idea), each with its count of\n"
	  "query-key pairs against full attention's n(n+1)/2.", cmd_masks, REPLAY },
	{ "lens", "", "the logit lens: the top next token if the model stopped after each layer", "", cmd_lens, REPLAY },
	{ "ablate", "L H [L H]...", "zero head H of layer L (or several heads) and compare the next-token distribution (then restore it)",
	  "The head's output is multiplied by 0 before the heads are merged, the text is run again,\n"
	  "and the five most probable next tokens are shown with and without it. Name more heads\n"
	  "(ablate 4 3 4 4) to zero them together: copies of a head can stand in for each other.\n"
	  "The session's trace is unchanged afterwards.", cmd_ablate, REPLAY },
	{ "lesson", "[N|NAME|FILE] [--export DIR [--force]] [--answers] [--check] [--interactive]",
	  "list the lessons, or start one (step by step at a terminal)",
	  "A lesson is a text file in lessons/ (lessons/README.md has the format): prose, commands\n"
	  "run as if typed here, pauses and questions. At a terminal: Enter or n goes on, b back,\n"
	  "j N jumps, r repeats, q leaves; anything else runs as a command. In a script or a pipe\n"
	  "the lesson runs straight through and questions show their answers. --export DIR writes\n"
	  "every figure as DIR/01-NAME.png ..., DIR/lesson.md (a Markdown handout), DIR/slides.pdf\n"
	  "(16:9, a page a step, figures as vectors) and DIR/handout.pdf (A4; a DIR that is\n"
	  "not empty needs --force); --answers prints the answer key; --check runs it quietly and checks\n"
	  "its answers and the claims of its prose (expect:), as FILE:LINE errors.", cmd_lesson, NO_REPLAY },
	{ "bench", "[kernels|matvec|forward|attention|decode ...]", "measure the kernels, the forward pass and decoding",
	  "With no argument, everything. bench decode [DIR] [--shape llama110m|gpt2small] [--threads N]\n"
	  "[--tokens N]: tokens per second of greedy decoding of the model in DIR (or a random Llama-110M-\n"
	  "or GPT-2-small-shaped one) on 1 and N threads, against the bound set by reading every weight\n"
	  "once per token at the memory bandwidth the bench measures; with python3-torch, PyTorch beside\n"
	  "it (the same matrix-vector chain and, for GPT-2, its cached forward, with the ratio to glassbox's);\n"
	  "a folder kept 16-bit is timed against the same weights widened to fp32. bench forward: a\n"
	  "64-token forward pass with the full trace on tiny-lm's shape (every table) and on GPT-2\n"
	  "small's (the fast table), 1 and N threads alternating. bench long: 512 and 1024 tokens\n"
	  "on GPT-2 small's shape against PyTorch, then how fast the views of the long run redraw\n"
	  "(the first view of a head, of a whole layer); bench long redraw: those redraws alone.", cmd_bench, NO_REPLAY },
	{ "tui", "", "the full-screen explorer: every stage, layer and head under the keys, a cursor on the figure",
	  "Tab and Shift-Tab change the stage, [ and ] the layer, < and > the head; the arrows move\n"
	  "the cursor and the status line shows the value under it with its query and key; e exports\n"
	  "a PNG; : runs any command; ? lists the keys; q comes back to the prompt.", cmd_tui, NO_REPLAY },
	{ "teach", "[--port N] [--code C] | --wait N | end | --state", "teach a class: students follow your screen over the network",
	  "Prints the join line, e.g. glassbox --follow 192.168.1.20:7341 --code 4-7-2-9 (port 7341;\n"
	  "--port 0 picks a free one). Followers run their own copy of the model: only your commands\n"
	  "and view state travel. A lesson's questions are counted as students answer ('tally').\n"
	  "'teach' again shows who follows; 'teach end' ends the class; --state prints the state line;\n"
	  "--wait N waits until N students follow (for scripts; Ctrl-C stops it).", cmd_teach, NO_REPLAY },
	{ "tally", "[--names]", "the class's answers to the last question, as a bar chart (export saves it)",
	  "Right, each wrong choice, and no answer yet. Names (optional for students) stay here.", cmd_tally, NO_REPLAY },
	{ "follow", "[HOST:PORT --code C [--name N]]", "follow a teacher's class; alone: come back after exploring",
	  "Any command of your own leaves the teacher's view; 'follow' catches up at once.", cmd_follow, NO_REPLAY },
	{ "answer", "X", "answer the question the teacher asks (a letter, a number or a word)", "", cmd_answer, NO_REPLAY },
	{ "doctor", "", "before a class: what this machine can show",
	  "One line per check, marked as passed or failed, with the fix under each failure. The\n"
	  "lessons, the shipped models, the fonts and the kernels are what a lesson needs: a failure\n"
	  "there is an error (exit status 1 from 'glassbox doctor'); the colours, the terminal's\n"
	  "size, UTF-8 and the window make a class better, and a lesson runs without them.", cmd_doctor, NO_REPLAY },
	{ "quit", "", "leave glassbox", "", cmd_quit, NO_REPLAY },
	{ NULL, NULL, NULL, NULL, NULL, REPLAY_UNSET },
};

/* The command of an exact name or a unique prefix, and how many the prefix matched. */
static const command *lookup(const char *name, int *n)
{
	const command *hit = NULL;
	size_t len = strlen(name);
	*n = 0;
	for (const command *c = commands; c->name; c++) {
		if (!strcmp(c->name, name)) {
			*n = 1;
			return c;
		}
		if (!strncmp(c->name, name, len)) {
			hit = c;
			(*n)++;
		}
	}
	return *n == 1 ? hit : NULL;
}

const command *command_lookup(const char *name)
{
	int n;
	return *name ? lookup(name, &n) : NULL;
}

const command *command_find(const char *name)
{
	int n;
	size_t len = strlen(name);
	const command *hit = lookup(name, &n);
	if (hit)
		return hit;
	if (n > 1) {
		char list[256] = "";
		for (const command *c = commands; c->name; c++)
			if (!strncmp(c->name, name, len))
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", c->name);
		errorf("'%s' is ambiguous: %s", name, list);
		return NULL;
	}
	const char *names[128];
	int nn = 0;
	for (const command *c = commands; c->name && nn < 128; c++)
		names[nn++] = c->name;
	const char *near = closest(name, names, nn);
	if (near)
		errorf("unknown command '%s': did you mean '%s'? ('help' lists the commands)", name, near);
	else
		errorf("unknown command '%s': 'help' lists the commands", name);
	return NULL;
}

/* Splits a line into words: whitespace separates, "double" and 'single' quotes group. */
static int split_words(const char *line, char ***argv_out)
{
	int cap = 8, n = 0;
	char **argv = malloc((size_t)cap * sizeof *argv);
	const char *p = line;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		char *w = malloc(strlen(p) + 1), *o = w;
		const char *word = p;
		while (*p && !isspace((unsigned char)*p)) {
			/* A quote groups only when it opens a word: "John's" stays one word. */
			if ((*p == '"' || *p == '\'') && p == word && strchr(p + 1, *p)) {
				char q = *p++;
				while (*p && *p != q)
					*o++ = *p++;
				if (*p)
					p++;
			} else
				*o++ = *p++;
		}
		*o = 0;
		if (n + 1 >= cap)
			argv = realloc(argv, (size_t)(cap *= 2) * sizeof *argv);
		argv[n++] = w;
	}
	argv[n] = NULL;
	*argv_out = argv;
	return n;
}

int command_line(session *s, const char *line)
{
	while (isspace((unsigned char)*line))
		line++;
	if (!*line || *line == '#')
		return 0;
	/* The raw text after the command word, for commands that take free text. */
	const char *rest = line;
	while (*rest && !isspace((unsigned char)*rest))
		rest++;
	while (isspace((unsigned char)*rest))
		rest++;
	char *raw = strdup(rest);
	size_t rl = strlen(raw);
	while (rl && isspace((unsigned char)raw[rl - 1]))
		raw[--rl] = 0;
	if (rl >= 2 && (raw[0] == '"' || raw[0] == '\'') && raw[rl - 1] == raw[0]) {
		memmove(raw, raw + 1, rl - 2);
		raw[rl - 2] = 0;
	}
	char **argv;
	int argc = split_words(line, &argv), rc = -1;
	const command *c = command_find(argv[0]);
	if (c) {
		window_command_begin(s, c->name); /* the window's text card after a command without a figure */
		classroom_before(s);              /* a class follows the figures commands make */
		rc = c->run(s, argc, argv, raw);
		classroom_after(s, line, rc);
		window_command_end(s, line, rc);
	}
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(raw);
	return rc;
}

int command_script(session *s, const char *text, const char *where)
{
	/* Commands end at a newline or at a ';' outside quotes. */
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	int lineno = 1, index = 0;
	const char *p = text;
	/* A -c string is usually one line: there, commands are named by their position. */
	int by_index = !strcmp(where, "-c");
	char at[160]; /* where the command came from, for its error lines */
	while (*p) {
		char *o = buf, q = 0;
		int start = lineno;
		/* A command ends at a newline, or at a ';' outside quotes; a quote opens only at the
		 * start of a word (an apostrophe inside "John's" is text) and never spans lines. */
		while (*p && *p != '\n' && (q || *p != ';')) {
			int word_start = o == buf || isspace((unsigned char)o[-1]);
			if (!q && (*p == '"' || *p == '\'') && word_start)
				q = *p;
			else if (q && *p == q)
				q = 0;
			*o++ = *p++;
		}
		*o = 0;
		if (q) {
			index++;
			if (by_index)
				snprintf(at, sizeof at, "%s command %d", where, index);
			else
				snprintf(at, sizeof at, "%s line %d", where, start);
			errorf_where(at);
			errorf("a quote (%c) is not closed on this line", q);
			errorf_where("");
			free(buf);
			return -1;
		}
		if (*p == '\n')
			lineno++;
		if (*p)
			p++;
		index++;
		if (by_index)
			snprintf(at, sizeof at, "%s command %d", where, index);
		else
			snprintf(at, sizeof at, "%s line %d", where, start);
		errorf_where(at);
		int rc = command_line(s, buf);
		errorf_where("");
		if (rc < 0) {
			free(buf);
			return -1;
		}
		if (rc > 0)
			break; /* quit */
	}
	free(buf);
	return 0;
}
