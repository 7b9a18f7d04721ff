/* classroom_proto.c — the classroom's frames: encode and decode, pure functions (the format is
 * in classroom_proto.h). The decoder is the one door a stranger's bytes come through, so it
 * checks every length against what is left before it reads, and never allocates. */
#include "app/classroom_proto.h"

#include <stdio.h>
#include <string.h>

enum { K_NONE, K_U32, K_U64, K_STR, K_INTS };

static const unsigned char KIND[GBX_F_N] = {
	[GBX_F_SEQ] = K_U64,     [GBX_F_TIME] = K_U64,     [GBX_F_FLAGS] = K_U32,   [GBX_F_MODEL] = K_STR,
	[GBX_F_HASH] = K_U64,    [GBX_F_TEXT] = K_STR,     [GBX_F_IDS] = K_INTS,    [GBX_F_TGT] = K_INTS,
	[GBX_F_LESSON] = K_STR,  [GBX_F_STEP] = K_INTS,    [GBX_F_HEADING] = K_STR, [GBX_F_VIEW] = K_STR,
	[GBX_F_VIEW_IDS] = K_INTS, [GBX_F_VIEW_TGT] = K_INTS, [GBX_F_VIEW_CUR] = K_INTS,
	[GBX_F_CURSOR] = K_INTS, [GBX_F_QID] = K_U32,      [GBX_F_QTEXT] = K_STR,   [GBX_F_QOPTS] = K_STR,
	[GBX_F_CODE] = K_STR,    [GBX_F_ID] = K_STR,       [GBX_F_NAME] = K_STR,    [GBX_F_ANSWER] = K_STR,
	[GBX_F_REASON] = K_STR,
};

/* The fields each type must carry. */
static uint32_t required(int type)
{
	switch (type) {
	case GBX_HELLO: return 1u << GBX_F_CODE | 1u << GBX_F_ID;
	case GBX_STATE: return 1u << GBX_F_SEQ | 1u << GBX_F_TIME;
	case GBX_ANSWER: return 1u << GBX_F_QID | 1u << GBX_F_ANSWER;
	case GBX_BYE: return 1u << GBX_F_REASON;
	}
	return 0;
}

const char *gbx_type_name(int type)
{
	static const char *const names[] = { "?", "hello", "state", "answer", "bye" };
	return type >= 1 && type <= GBX_TYPE_MAX ? names[type] : "unknown";
}

uint64_t gbx_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void gbx_init(gbx_msg *m, int type)
{
	m->version = GBX_VERSION;
	m->type = type;
	m->has = 0;
	memset(m->u, 0, sizeof m->u);
	memset(m->s, 0, sizeof m->s);
	memset(m->v, 0, sizeof m->v);
	memset(m->nv, 0, sizeof m->nv);
}

void gbx_set_u(gbx_msg *m, int key, uint64_t x)
{
	m->u[key] = x;
	m->has |= 1u << key;
}

void gbx_set_s(gbx_msg *m, int key, const char *s)
{
	m->s[key] = s ? s : "";
	m->has |= 1u << key;
}

void gbx_set_v(gbx_msg *m, int key, const int32_t *v, int n)
{
	m->v[key] = v;
	m->nv[key] = n;
	m->has |= 1u << key;
}

static void put32(unsigned char *p, uint32_t x)
{
	p[0] = (unsigned char)(x >> 24);
	p[1] = (unsigned char)(x >> 16);
	p[2] = (unsigned char)(x >> 8);
	p[3] = (unsigned char)x;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

long gbx_encode(const gbx_msg *m, unsigned char *out, size_t cap)
{
	size_t o = GBX_HDR + 2;
	if (cap < o || m->type < 1 || m->type > GBX_TYPE_MAX)
		return -1;
	out[4] = GBX_VERSION;
	out[5] = (unsigned char)m->type;
	for (int k = 1; k < GBX_F_N; k++) {
		if (!gbx_has(m, k))
			continue;
		size_t len = KIND[k] == K_U32 ? 4 : KIND[k] == K_U64 ? 8 : KIND[k] == K_STR ? strlen(m->s[k])
		                                                                            : (size_t)m->nv[k] * 4;
		if ((KIND[k] == K_STR && len > GBX_MAX_STR) || (KIND[k] == K_INTS && (m->nv[k] < 0 || m->nv[k] > GBX_MAX_INTS)))
			return -1;
		if (o + 5 + len > cap || o + 5 + len - GBX_HDR > GBX_MAX_MSG)
			return -1;
		out[o] = (unsigned char)k;
		put32(out + o + 1, (uint32_t)len);
		o += 5;
		switch (KIND[k]) {
		case K_U32:
			put32(out + o, (uint32_t)m->u[k]);
			break;
		case K_U64:
			put32(out + o, (uint32_t)(m->u[k] >> 32));
			put32(out + o + 4, (uint32_t)m->u[k]);
			break;
		case K_STR:
			memcpy(out + o, m->s[k], len);
			break;
		case K_INTS:
			for (int i = 0; i < m->nv[k]; i++)
				put32(out + o + 4 * (size_t)i, (uint32_t)m->v[k][i]);
			break;
		}
		o += len;
	}
	put32(out, (uint32_t)(o - GBX_HDR));
	return (long)o;
}

/* fmt takes a, or a and b (printf ignores an argument it has no place for). */
static int fail(gbx_error *err, int code, const char *fmt, long a, long b)
{
	err->code = code;
	snprintf(err->msg, sizeof err->msg, fmt, a, b);
	return -1;
}

int gbx_decode(const unsigned char *buf, size_t len, gbx_msg *m, size_t *used, gbx_error *err)
{
	err->code = GBX_OK;
	err->msg[0] = 0;
	*used = 0;
	if (len < GBX_HDR)
		return 0;
	uint32_t L = get32(buf);
	if (L > GBX_MAX_MSG)
		return fail(err, GBX_E_TOO_BIG, "oversized message (%ld bytes, the cap is %ld)", (long)L, (long)GBX_MAX_MSG);
	if (L < 2)
		return fail(err, GBX_E_MALFORMED, "malformed message (a body of %ld bytes has no version and type)", (long)L, 0);
	if (len < GBX_HDR + (size_t)L) {
		/* the version can be judged before the whole body is here */
		if (len > GBX_HDR && buf[GBX_HDR] != GBX_VERSION)
			return fail(err, GBX_E_VERSION, "wrong protocol version %ld (this glassbox speaks %ld)", buf[GBX_HDR], GBX_VERSION);
		return 0;
	}
	const unsigned char *b = buf + GBX_HDR;
	if (b[0] != GBX_VERSION)
		return fail(err, GBX_E_VERSION, "wrong protocol version %ld (this glassbox speaks %ld)", b[0], GBX_VERSION);
	if (b[1] < 1 || b[1] > GBX_TYPE_MAX)
		return fail(err, GBX_E_TYPE, "unknown message type %ld", b[1], 0);
	gbx_init(m, b[1]);
	size_t p = 2, a = 0;
	while (p < L) {
		if (L - p < 5)
			return fail(err, GBX_E_MALFORMED, "malformed message (a field header cut at byte %ld of %ld)", (long)p, (long)L);
		int k = b[p];
		uint32_t n = get32(b + p + 1);
		p += 5;
		if (n > L - p)
			return fail(err, GBX_E_MALFORMED, "malformed message (field %ld runs %ld bytes past the end)", k,
			            (long)(n - (L - p)));
		const unsigned char *val = b + p;
		p += n;
		if (k == 0 || k >= GBX_F_N)
			continue; /* a later version's field */
		if (gbx_has(m, k))
			return fail(err, GBX_E_MALFORMED, "malformed message (field %ld twice)", k, 0);
		switch (KIND[k]) {
		case K_U32:
			if (n != 4)
				return fail(err, GBX_E_MALFORMED, "malformed message (field %ld: %ld bytes, not 4)", k, (long)n);
			gbx_set_u(m, k, get32(val));
			break;
		case K_U64:
			if (n != 8)
				return fail(err, GBX_E_MALFORMED, "malformed message (field %ld: %ld bytes, not 8)", k, (long)n);
			gbx_set_u(m, k, (uint64_t)get32(val) << 32 | get32(val + 4));
			break;
		case K_STR:
			if (n > GBX_MAX_STR)
				return fail(err, GBX_E_MALFORMED, "malformed message (field %ld: a string of %ld bytes)", k, (long)n);
			if (memchr(val, 0, n))
				return fail(err, GBX_E_MALFORMED, "malformed message (field %ld: a NUL inside a string)", k, 0);
			memcpy(m->arena + a, val, n);
			m->arena[a + n] = 0;
			gbx_set_s(m, k, (const char *)m->arena + a);
			a += n + 1;
			break;
		case K_INTS: {
			if (n % 4 || n / 4 > GBX_MAX_INTS)
				return fail(err, GBX_E_MALFORMED, "malformed message (field %ld: a list of %ld bytes)", k, (long)n);
			a = (a + 3) & ~(size_t)3;
			int32_t *v = (int32_t *)(void *)(m->arena + a);
			for (uint32_t i = 0; i < n / 4; i++)
				v[i] = (int32_t)get32(val + 4 * i);
			gbx_set_v(m, k, v, (int)(n / 4));
			a += n;
			break;
		}
		}
	}
	uint32_t need = required(m->type);
	if ((m->has & need) != need) {
		int k = 1;
		while (!((need & ~m->has) >> k & 1u))
			k++;
		err->code = GBX_E_MALFORMED;
		snprintf(err->msg, sizeof err->msg, "malformed message (a %s without field %d)", gbx_type_name(m->type), k);
		return -1;
	}
	*used = GBX_HDR + L;
	return 1;
}
