/* tap.h — the Test Anything Protocol for glassbox's C tests: prove reads what these print.
 * Header-only; each test program includes it once. */
#ifndef GLASSBOX_TAP_H
#define GLASSBOX_TAP_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_planned;

__attribute__((unused)) static void tap_plan(int n) { tap_planned = n; printf("1..%d\n", n); fflush(stdout); }

/* A description ending in "# TODO reason" marks a known gap: prove reports it, and it does
 * not fail the program (as TAP says). */
static int tap_ok(int cond, const char *fmt, ...) {
	char desc[1024];
	va_list ap;
	va_start(ap, fmt); vsnprintf(desc, sizeof desc, fmt, ap); va_end(ap);
	tap_n++;
	if (!cond && !strstr(desc, "# TODO"))
		tap_failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tap_n, desc);
	fflush(stdout);
	return cond;
}

__attribute__((unused)) static void tap_diag(const char *fmt, ...) {
	va_list ap;
	printf("# ");
	va_start(ap, fmt); vprintf(fmt, ap); va_end(ap);
	printf("\n");
}

/* |got - want| <= tol, reported with both values. */
#define tap_near(got, want, tol, ...) do { \
	double tap_g_ = (got), tap_w_ = (want); \
	if (!tap_ok(fabs(tap_g_ - tap_w_) <= (tol), __VA_ARGS__)) \
		tap_diag("  got %.9g, want %.9g (tol %g)", tap_g_, tap_w_, (double)(tol)); \
} while (0)

/* Plan at the end when the count is only known after running. */
__attribute__((unused)) static int tap_done(void) {
	if (!tap_planned) printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
#endif
