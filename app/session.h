/* session.h — what one glassbox session holds: the loaded model, the current text and its
 * trace, the engine in use. Every command reads and changes a session. */
#ifndef GLASSBOX_SESSION_H
#define GLASSBOX_SESSION_H

#include "model/forward.h"
#include "model/kernels/kernels.h"
#include "model/model.h"
#include "model/trace.h"
#include "viz/figure.h"

typedef struct session {
	gb_model model;
	int loaded;
	gb_trace trace;
	int have_run;
	char *text;               /* the current text (decoder-only) or source (encoder-decoder) */
	char *target;             /* encoder-decoder: the decoder's input text, or NULL */
	const gb_kernels *k;      /* the engine in use */
	int interactive;          /* a person at a terminal: prompts, banners, history */
	gb_figure *fig;           /* the current figure: what export writes and the window shows */
	int depth;                /* terminal colour depth (enum gb_depth), -1 to detect */
	int stage, layer, head;   /* the view on show (enum stage in views.h; layer, head from 1) */
	struct gb_window *win;    /* the SDL window, when open */
	int tour;                 /* the guided tour's next stop (step), reset by run */
	int palette;              /* colormap for unsigned figures (enum gb_cmap), -1: the view's */
	int textbook;             /* layer norm in the textbook's form (sigma + eps) */
} session;

#endif
