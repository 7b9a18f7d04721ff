/* view_arch.h — the architecture at a glance: the loaded model as a block diagram (`arch`). */
#ifndef GLASSBOX_VIEW_ARCH_H
#define GLASSBOX_VIEW_ARCH_H

#include "app/session.h"
#include "viz/figure.h"

/* The loaded model (the default one when none was) as a GB_FIG_DIAGRAM, from its config
 * alone, with the block of the session's stage highlighted. NULL after an error line. */
gb_figure *view_arch(session *s);

#endif
