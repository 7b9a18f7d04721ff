/* vizerr.c — filling a gb_verr: viz/ reports failure through it and never prints. */
#include "viz/vizerr.h"

#include <stdarg.h>
#include <stdio.h>

int gb_vfail(gb_verr *err, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}
