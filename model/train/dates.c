/* dates.c — the date translation data of corpus.h: the twelve surface forms, the calendar
 * arithmetic behind them, and the held-out split by date. */
#include "model/train/corpus_impl.h"

#include <stdio.h>
#include <stdlib.h>

#include "model/rng.h"

/* ---- dates --------------------------------------------------------------------------- */

static const char *const MONTH[] = {"January", "February", "March", "April", "May", "June",
                                    "July", "August", "September", "October", "November",
                                    "December"};
static const char *const MONTH_LC[] = {"january", "february", "march", "april", "may", "june",
                                       "july", "august", "september", "october", "november",
                                       "december"};
static const char *const MON[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
static const char *const MON_LC[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                     "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const WEEKDAY[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                                      "Saturday", "Sunday"};

/* days since 1970-01-01 (H. Hinnant's days_from_civil), valid for any Gregorian date */
static long days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	long era = (y >= 0 ? y : y - 399) / 400;
	long yoe = y - era * 400;
	long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(long z, int *y, int *m, int *d)
{
	z += 719468;
	long era = (z >= 0 ? z : z - 146096) / 146097;
	long doe = z - era * 146097;
	long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	long mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

static int leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int gb_date_valid(int y, int m, int d)
{
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (y < GB_DATE_YEAR_MIN || y > GB_DATE_YEAR_MAX || m < 1 || m > 12 || d < 1)
		return 0;
	return d <= mdays[m - 1] + (m == 2 && leap(y));
}

int gb_date_weekday(int y, int m, int d)
{
	long z = days_from_civil(y, m, d);
	return (int)(((z % 7) + 7 + 3) % 7); /* 1970-01-01 was a Thursday */
}

int gb_date_heldout(int y, int m, int d)
{
	return mix64(0xda7e5eed00000000ull ^ (uint64_t)(y * 10000 + m * 100 + d)) % 1000 <
	       HELD_PER_MILLE;
}

static const char *ordinal(int d)
{
	if (d >= 11 && d <= 13)
		return "th";
	return d % 10 == 1 ? "st" : d % 10 == 2 ? "nd" : d % 10 == 3 ? "rd" : "th";
}

int gb_date_format(int form, int y, int m, int d, char *buf, size_t cap, gb_err *err)
{
	if (!gb_date_valid(y, m, d))
		return gb_fail(err, "date: %04d-%02d-%02d is not a date in %d..%d", y, m, d,
		               GB_DATE_YEAR_MIN, GB_DATE_YEAR_MAX);
	const int i = m - 1, yy = y % 100;
	int k;
	switch (form) {
	case 0: k = snprintf(buf, cap, "%d %s %d", d, MONTH[i], y); break;
	case 1: k = snprintf(buf, cap, "%s %d%s, %02d", MONTH_LC[i], d, ordinal(d), yy); break;
	case 2: k = snprintf(buf, cap, "%02d/%02d/%d", d, m, y); break;
	case 3: k = snprintf(buf, cap, "%s, %s %d %d", WEEKDAY[gb_date_weekday(y, m, d)], MON[i], d, y); break;
	case 4: k = snprintf(buf, cap, "%d.%02d.%02d", y, m, d); break;
	case 5: k = snprintf(buf, cap, "%d%s of %s, %d", d, ordinal(d), MONTH[i], y); break;
	case 6: k = snprintf(buf, cap, "%s %d, %d", MON[i], d, y); break;
	case 7: k = snprintf(buf, cap, "%d %s %02d", d, MON_LC[i], yy); break;
	case 8: k = snprintf(buf, cap, "%s %d, %d", MONTH[i], d, y); break;
	case 9: k = snprintf(buf, cap, "%02d-%s-%d", d, MON[i], y); break;
	case 10:
		k = snprintf(buf, cap, "%.3s, %d %s %d", WEEKDAY[gb_date_weekday(y, m, d)], d, MONTH[i], y);
		break;
	case 11: k = snprintf(buf, cap, "%d.%d.%d", d, m, y); break;
	default: return gb_fail(err, "date: unknown form %d (0..%d)", form, GB_DATE_N_FORMS - 1);
	}
	if (k < 0 || (size_t)k >= cap)
		return gb_fail(err, "date: buffer of %zu bytes too small for form %d", cap, form);
	return 0;
}

/* "YYYY-MM-DD" by hand: snprintf cannot be shown to fit in 11 bytes */
static void iso(char *s, int y, int m, int d)
{
	s[0] = (char)('0' + y / 1000), s[1] = (char)('0' + y / 100 % 10);
	s[2] = (char)('0' + y / 10 % 10), s[3] = (char)('0' + y % 10), s[4] = '-';
	s[5] = (char)('0' + m / 10), s[6] = (char)('0' + m % 10), s[7] = '-';
	s[8] = (char)('0' + d / 10), s[9] = (char)('0' + d % 10), s[10] = 0;
}

int gb_corpus_dates(int n, uint64_t seed, int heldout, gb_date_pair **out, gb_err *err)
{
	if (!out)
		return gb_fail(err, "dates: no output");
	*out = NULL;
	if (n < 0)
		return gb_fail(err, "dates: negative count %d", n);
	gb_date_pair *v = calloc(n ? (size_t)n : 1, sizeof *v);
	if (!v)
		return gb_fail(err, "dates: out of memory");
	gb_rng r;
	gb_rng_seed(&r, mix64(seed ^ 0xda7e0000ull ^ (heldout != 0)));
	long lo = days_from_civil(GB_DATE_YEAR_MIN, 1, 1);
	int span = (int)(days_from_civil(GB_DATE_YEAR_MAX, 12, 31) - lo + 1);
	for (int i = 0; i < n; i++) {
		int y, m, d;
		do
			civil_from_days(lo + gb_rng_below(&r, span), &y, &m, &d);
		while (gb_date_heldout(y, m, d) != (heldout != 0));
		gb_date_pair *p = &v[i];
		p->form = (unsigned char)gb_rng_below(&r, GB_DATE_N_FORMS);
		p->y = (short)y, p->m = (unsigned char)m, p->d = (unsigned char)d;
		if (gb_date_format(p->form, y, m, d, p->src, sizeof p->src, err)) {
			free(v);
			return -1;
		}
		iso(p->dst, y, m, d);
	}
	*out = v;
	return 0;
}

int gb_corpus_dates_text(int n, uint64_t seed, int heldout, const char *sep, const char *delim,
                         char **out, size_t *out_len, gb_err *err)
{
	gb_date_pair *v;
	if (!out || !out_len)
		return gb_fail(err, "dates: no output");
	if (gb_corpus_dates(n, seed, heldout, &v, err))
		return -1;
	sep = sep ? sep : "\t";
	delim = delim ? delim : "\n";
	sb b = {0};
	sb_reserve(&b, (size_t)n * 40 + 64);
	for (int i = 0; i < n; i++) {
		sb_puts(&b, v[i].src);
		sb_puts(&b, sep);
		sb_puts(&b, v[i].dst);
		sb_puts(&b, delim);
	}
	free(v);
	if (b.oom) {
		free(b.p);
		return gb_fail(err, "dates: out of memory");
	}
	*out = b.p;
	*out_len = b.n;
	return 0;
}
