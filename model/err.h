/* err.h — how model/ and viz/ report failure: a status and a one-line message, never a print.
 * Functions return 0 on success and -1 on failure after filling *err (err may be NULL). */
#ifndef GLASSBOX_ERR_H
#define GLASSBOX_ERR_H

typedef struct gb_err {
	char msg[512];
} gb_err;

/* Formats the message into err and returns -1, so callers can `return gb_fail(err, ...)`. */
int gb_fail(gb_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
