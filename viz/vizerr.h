/* vizerr.h — how viz/ reports failure: a status and a one-line message, never a print.
 * (viz/ knows nothing of model/, so it has its own small error type; app/ shows either.) */
#ifndef GLASSBOX_VIZERR_H
#define GLASSBOX_VIZERR_H

typedef struct gb_verr {
	char msg[512];
} gb_verr;

/* Formats the message into err (may be NULL) and returns -1. */
int gb_vfail(gb_verr *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
