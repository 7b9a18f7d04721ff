/* tour.h — `step` and `step back`: the guided tour of the current sentence through the
 * pipeline, one stage at a time, each with a plain explanation, its formula and its figure. */
#ifndef GLASSBOX_TOUR_H
#define GLASSBOX_TOUR_H

#include "app/session.h"

/* The number of stops for the loaded model, and a stop's figure (NULL after an error) with
 * its heading and explanation (static strings or session-owned). */
int tour_length(session *s);
struct gb_figure *tour_stop(session *s, int i, char *heading, size_t cap, const char **text);

#endif
