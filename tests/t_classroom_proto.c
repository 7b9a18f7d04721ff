/* t_classroom_proto.c — the classroom's frames (app/classroom_proto.c): a frame written by hand
 * byte by byte decodes to its fields, the encoder writes the same bytes, every message round
 * trips, and the decoder refuses what it must (oversized, wrong version, unknown type,
 * malformed fields, missing fields) while a truncated frame only asks for more. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/classroom_proto.h"
#include "tests/tap.h"

static gbx_msg M, M2;
static unsigned char buf[GBX_HDR + GBX_MAX_MSG + 64];

/* A hello by hand: body = version 1, type 1, CODE "4-7" (key 20), ID "ab" (key 21). */
static const unsigned char HELLO[] = {
	0, 0, 0, 2 + 5 + 3 + 5 + 2,
	1, 1,
	20, 0, 0, 0, 3, '4', '-', '7',
	21, 0, 0, 0, 2, 'a', 'b',
};

static int dec(const unsigned char *b, size_t n, gbx_msg *m, size_t *used, gbx_error *e)
{
	return gbx_decode(b, n, m, used, e);
}

static void put32(unsigned char *p, uint32_t x)
{
	p[0] = (unsigned char)(x >> 24);
	p[1] = (unsigned char)(x >> 16);
	p[2] = (unsigned char)(x >> 8);
	p[3] = (unsigned char)x;
}

int main(void)
{
	gbx_error e;
	size_t used;

	/* 1-4: the hand-made frame */
	int rc = dec(HELLO, sizeof HELLO, &M, &used, &e);
	tap_ok(rc == 1 && used == sizeof HELLO, "a hello written by hand decodes whole (rc %d, used %zu of %zu)", rc, used,
	       sizeof HELLO);
	tap_ok(rc == 1 && M.type == GBX_HELLO && M.version == 1, "its type is hello, version 1");
	tap_ok(rc == 1 && !strcmp(M.s[GBX_F_CODE], "4-7") && !strcmp(M.s[GBX_F_ID], "ab") && !gbx_has(&M, GBX_F_NAME),
	       "its code is \"4-7\", its id \"ab\", no name");
	gbx_init(&M2, GBX_HELLO);
	gbx_set_s(&M2, GBX_F_CODE, "4-7");
	gbx_set_s(&M2, GBX_F_ID, "ab");
	long n = gbx_encode(&M2, buf, sizeof buf);
	tap_ok(n == (long)sizeof HELLO && !memcmp(buf, HELLO, sizeof HELLO), "the encoder writes the same %zu bytes", sizeof HELLO);

	/* 5-6: every prefix of it is "not yet", never an error and never a message */
	int bad = 0;
	for (size_t k = 0; k < sizeof HELLO; k++)
		if (dec(HELLO, k, &M, &used, &e) != 0 || used != 0 || e.code != GBX_OK)
			bad++;
	tap_ok(!bad, "each of its %zu truncations asks for more bytes (%d did not)", sizeof HELLO, bad);
	unsigned char two[2 * sizeof HELLO];
	memcpy(two, HELLO, sizeof HELLO);
	memcpy(two + sizeof HELLO, HELLO, sizeof HELLO);
	rc = dec(two, sizeof two, &M, &used, &e);
	tap_ok(rc == 1 && used == sizeof HELLO, "two frames back to back: the first is read, %zu bytes used", used);

	/* 7-10: a full state round trips, U64 and negative ids included */
	int32_t ids[5] = { 0, 1, 65535, -1, 2147483647 }, cur[4] = { 3, 2, 4, 0 }, st[2] = { 7, 15 };
	gbx_init(&M2, GBX_STATE);
	gbx_set_u(&M2, GBX_F_SEQ, 0x0102030405060708ull);
	gbx_set_u(&M2, GBX_F_TIME, 1764000000123456ull);
	gbx_set_u(&M2, GBX_F_FLAGS, GBX_FULL);
	gbx_set_s(&M2, GBX_F_MODEL, "tiny-lm");
	gbx_set_u(&M2, GBX_F_HASH, 0xfedcba9876543210ull);
	gbx_set_s(&M2, GBX_F_TEXT, "When Mary and John — “went”");
	gbx_set_v(&M2, GBX_F_IDS, ids, 5);
	gbx_set_v(&M2, GBX_F_TGT, ids, 0);
	gbx_set_v(&M2, GBX_F_CURSOR, cur, 4);
	gbx_set_v(&M2, GBX_F_STEP, st, 2);
	gbx_set_s(&M2, GBX_F_VIEW, "");
	n = gbx_encode(&M2, buf, sizeof buf);
	rc = n > 0 ? dec(buf, (size_t)n, &M, &used, &e) : -9;
	tap_ok(rc == 1 && (long)used == n && M.has == M2.has, "a full state (%ld bytes) decodes with the same fields", n);
	tap_ok(rc == 1 && M.u[GBX_F_SEQ] == 0x0102030405060708ull && M.u[GBX_F_TIME] == 1764000000123456ull &&
	           M.u[GBX_F_HASH] == 0xfedcba9876543210ull && M.u[GBX_F_FLAGS] == GBX_FULL,
	       "its numbers come back exactly (64-bit seq, time and hash)");
	tap_ok(rc == 1 && M.nv[GBX_F_IDS] == 5 && !memcmp(M.v[GBX_F_IDS], ids, sizeof ids) && M.nv[GBX_F_TGT] == 0 &&
	           M.nv[GBX_F_CURSOR] == 4 && M.v[GBX_F_CURSOR][2] == 4 && M.v[GBX_F_STEP][1] == 15,
	       "its lists come back (ids with -1 and INT32_MAX, an empty target, the cursor, the step)");
	tap_ok(rc == 1 && !strcmp(M.s[GBX_F_TEXT], "When Mary and John — “went”") && !strcmp(M.s[GBX_F_MODEL], "tiny-lm") &&
	           !strcmp(M.s[GBX_F_VIEW], ""),
	       "its strings come back (UTF-8, and an empty one)");

	/* 11: a field of a later version is skipped */
	unsigned char fut[64];
	memcpy(fut, HELLO, sizeof HELLO);
	static const unsigned char extra[] = { 200, 0, 0, 0, 3, 'x', 'y', 'z' };
	memcpy(fut + sizeof HELLO, extra, sizeof extra);
	put32(fut, (uint32_t)(sizeof HELLO - 4 + sizeof extra));
	rc = dec(fut, sizeof HELLO + sizeof extra, &M, &used, &e);
	tap_ok(rc == 1 && used == sizeof HELLO + sizeof extra && !strcmp(M.s[GBX_F_ID], "ab"),
	       "an unknown field (key 200) is skipped, the rest still read");

	/* 12-13: oversized: refused from its 4-byte prefix alone */
	unsigned char big[4];
	put32(big, GBX_MAX_MSG + 1);
	rc = dec(big, 4, &M, &used, &e);
	tap_ok(rc == -1 && e.code == GBX_E_TOO_BIG && strstr(e.msg, "oversized"), "a length of cap + 1 is refused at once: %s",
	       e.msg);
	put32(big, 0xffffffffu);
	rc = dec(big, 4, &M, &used, &e);
	tap_ok(rc == -1 && e.code == GBX_E_TOO_BIG, "a length of 4 GB is refused, nothing waited for");

	/* 14-15: wrong version, as soon as its byte is here and when whole */
	unsigned char v2[sizeof HELLO];
	memcpy(v2, HELLO, sizeof HELLO);
	v2[4] = 2;
	rc = dec(v2, 5, &M, &used, &e);
	tap_ok(rc == -1 && e.code == GBX_E_VERSION, "version 2 is refused from its first body byte: %s", e.msg);
	rc = dec(v2, sizeof v2, &M, &used, &e);
	tap_ok(rc == -1 && e.code == GBX_E_VERSION && strstr(e.msg, "version 2"), "and when the frame is whole");

	/* 16-17: unknown type 0 and 5 */
	memcpy(v2, HELLO, sizeof HELLO);
	v2[5] = 5;
	rc = dec(v2, sizeof v2, &M, &used, &e);
	int rc0;
	v2[5] = 0;
	rc0 = dec(v2, sizeof v2, &M, &used, &e);
	tap_ok(rc == -1 && rc0 == -1 && e.code == GBX_E_TYPE, "types 5 and 0 are unknown: %s", e.msg);
	unsigned char tiny[] = { 0, 0, 0, 1, 1 };
	tap_ok(dec(tiny, sizeof tiny, &M, &used, &e) == -1 && e.code == GBX_E_MALFORMED, "a body of 1 byte is malformed");

	/* 18-23: malformed fields */
	struct {
		const char *what;
		unsigned char b[40];
		size_t n;
	} mal[] = {
		{ "a field header cut short", { 0, 0, 0, 5, 1, 1, 20, 0, 0 }, 9 },
		{ "a field longer than the body", { 0, 0, 0, 9, 1, 1, 20, 0, 0, 0, 9, 'a', 'b' }, 13 },
		{ "a field twice", { 0, 0, 0, 19, 1, 1, 20, 0, 0, 0, 1, 'a', 20, 0, 0, 0, 1, 'b', 21, 0, 0, 0, 1, 'c' }, 23 },
		{ "a NUL inside a string", { 0, 0, 0, 15, 1, 1, 20, 0, 0, 0, 2, 'a', 0, 21, 0, 0, 0, 1, 'c' }, 19 },
		{ "a U32 of 3 bytes", { 0, 0, 0, 10, 1, 3, 17, 0, 0, 0, 3, 1, 2, 3 }, 14 },
		{ "a list of 5 bytes", { 0, 0, 0, 12, 1, 2, 7, 0, 0, 0, 5, 1, 2, 3, 4, 5 }, 16 },
		{ "a hello without its id", { 0, 0, 0, 8, 1, 1, 20, 0, 0, 0, 1, 'a' }, 12 },
	};
	for (size_t i = 0; i < sizeof mal / sizeof mal[0]; i++) {
		rc = dec(mal[i].b, mal[i].n, &M, &used, &e);
		tap_ok(rc == -1 && e.code == GBX_E_MALFORMED && used == 0, "%s is malformed: %s", mal[i].what, e.msg);
	}

	/* 25-27: the encoder's caps */
	char *huge = malloc(GBX_MAX_STR + 2);
	memset(huge, 'x', GBX_MAX_STR + 1);
	huge[GBX_MAX_STR + 1] = 0;
	gbx_init(&M2, GBX_STATE);
	gbx_set_u(&M2, GBX_F_SEQ, 1);
	gbx_set_u(&M2, GBX_F_TIME, 1);
	gbx_set_s(&M2, GBX_F_TEXT, huge);
	tap_ok(gbx_encode(&M2, buf, sizeof buf) == -1, "the encoder refuses a string over %u bytes", GBX_MAX_STR);
	huge[GBX_MAX_STR] = 0;
	n = gbx_encode(&M2, buf, sizeof buf);
	rc = n > 0 ? dec(buf, (size_t)n, &M, &used, &e) : -9;
	tap_ok(rc == 1 && strlen(M.s[GBX_F_TEXT]) == GBX_MAX_STR, "a string of exactly the cap goes through");
	tap_ok(gbx_encode(&M2, buf, 100) == -1, "the encoder refuses a frame larger than its buffer");
	free(huge);

	/* 28-29: random bytes, and random mutations of a valid frame: never a crash, never a
	 * read past len (ASan/valgrind would say), a result of -1, 0 or 1 with used <= len */
	srand(12345);
	int odd = 0, decoded = 0, errors = 0;
	for (int t = 0; t < 200000; t++) {
		size_t len = (size_t)(rand() % 64);
		unsigned char r[64];
		for (size_t i = 0; i < len; i++)
			r[i] = (unsigned char)rand();
		if (t & 1 && len >= 4) { /* a plausible length prefix, version and type */
			put32(r, (uint32_t)(len - 4));
			if (len > 5) {
				r[4] = 1;
				r[5] = (unsigned char)(1 + rand() % 4);
			}
		}
		rc = dec(r, len, &M, &used, &e);
		if (rc < -1 || rc > 1 || used > len || (rc == 1) != (used > 0) || (rc == -1) != (e.code != GBX_OK))
			odd++;
		decoded += rc == 1;
		errors += rc == -1;
	}
	tap_ok(!odd, "200000 random buffers: every result is -1, 0 or 1 with used <= len (%d decoded, %d refused)", decoded, errors);
	gbx_init(&M2, GBX_STATE);
	gbx_set_u(&M2, GBX_F_SEQ, 9);
	gbx_set_u(&M2, GBX_F_TIME, 9);
	gbx_set_s(&M2, GBX_F_VIEW, "attn 1 1");
	gbx_set_v(&M2, GBX_F_IDS, ids, 5);
	n = gbx_encode(&M2, buf, sizeof buf);
	odd = 0;
	for (int t = 0; t < 100000; t++) {
		unsigned char r[128];
		memcpy(r, buf, (size_t)n);
		for (int f = 0; f < 1 + t % 4; f++)
			r[rand() % n] = (unsigned char)rand();
		rc = dec(r, (size_t)n, &M, &used, &e);
		if (rc == 1 && (used > (size_t)n || (gbx_has(&M, GBX_F_VIEW) && strlen(M.s[GBX_F_VIEW]) > (size_t)n)))
			odd++;
		if (rc < -1 || rc > 1)
			odd++;
	}
	tap_ok(!odd, "100000 mutations of a %ld-byte state: no result out of bounds", n);
	return tap_done();
}
