/* fz_classroom.c — the classroom's wire format as a teacher or a follower reads it
 * (gbx_decode over a stream of frames, app/classroom_proto.c). Each message decoded is encoded
 * again and decoded once more: the second reading must give the same fields, or the encoder and
 * the decoder disagree about the format. */
#include "tests/fuzz/fuzz.h"
#include "app/classroom_proto.h"

static gbx_msg m1, m2;              /* about 256 KB each: never on the stack */
static unsigned char frame[GBX_HDR + GBX_MAX_MSG];

static void same_fields(void)
{
	if (m1.type != m2.type || m1.version != m2.version || m1.has != m2.has)
		abort();
	for (int k = 1; k < GBX_F_N; k++) {
		if (!gbx_has(&m1, k))
			continue;
		if (m1.u[k] != m2.u[k] || (!m1.s[k]) != (!m2.s[k]) || (m1.s[k] && strcmp(m1.s[k], m2.s[k])) ||
		    m1.nv[k] != m2.nv[k] || (m1.nv[k] && memcmp(m1.v[k], m2.v[k], sizeof(int32_t) * (size_t)m1.nv[k])))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	size_t at = 0, used;
	gbx_error err;
	while (at < n) {
		int rc = gbx_decode(data + at, n - at, &m1, &used, &err);
		if (rc <= 0) /* a part of a frame, or an error: the connection would close */
			break;
		if (used == 0 || used > n - at)
			abort();
		at += used;
		long len = gbx_encode(&m1, frame, sizeof frame);
		if (len > 0) {
			if (gbx_decode(frame, (size_t)len, &m2, &used, &err) != 1 || used != (size_t)len)
				abort();
			same_fields();
		}
	}
	return 0;
}
