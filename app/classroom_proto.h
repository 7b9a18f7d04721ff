/* classroom_proto.h — the classroom's wire format: pure functions over byte buffers, no
 * sockets, no session (app/classroom_net.c moves the bytes, app/classroom.c and
 * app/classroom_follow.c give them meaning).
 *
 * A frame is a 4-byte big-endian length L, then L bytes of body (1 <= L <= GBX_MAX_MSG):
 *   u8 version (GBX_VERSION), u8 type (enum gbx_type), then fields, each
 *   u8 key (enum gbx_field), u32 big-endian length, the value.
 * Values by key: U32 and U64 big-endian (length 4 and 8), STR bytes without NUL (length up to
 * GBX_MAX_STR), INTS a list of i32 big-endian (length a multiple of 4, up to GBX_MAX_INTS).
 * A key this version does not know is skipped (a later minor addition); a key twice, a value
 * of the wrong length, a NUL in a string, a field running past the body, or a type missing
 * its required fields is malformed. Nothing in a frame is trusted before it is checked. */
#ifndef GLASSBOX_CLASSROOM_PROTO_H
#define GLASSBOX_CLASSROOM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define GBX_VERSION 1
#define GBX_HDR 4                     /* the length prefix */
#define GBX_MAX_MSG (256u * 1024u)    /* the largest body accepted or sent */
#define GBX_MAX_STR (64u * 1024u)     /* the longest string field */
#define GBX_MAX_INTS 16384            /* the most ids in a list field */

enum gbx_type {
	GBX_HELLO = 1,   /* follower -> teacher: CODE, ID (NAME optional) */
	GBX_STATE = 2,   /* teacher -> follower: SEQ, TIME, then what changed (FLAGS & FULL: all) */
	GBX_ANSWER = 3,  /* follower -> teacher: QID, ANSWER */
	GBX_BYE = 4,     /* either way: REASON; the sender closes */
	GBX_TYPE_MAX = 4
};

enum gbx_field {
	GBX_F_SEQ = 1,      /* U64 the state's number, rising */
	GBX_F_TIME,         /* U64 the teacher's clock when sent (microseconds, CLOCK_REALTIME) */
	GBX_F_FLAGS,        /* U32 GBX_FULL: a whole snapshot (catch-up), not a change */
	GBX_F_MODEL,        /* STR the model's name (its folder's name) */
	GBX_F_HASH,         /* U64 FNV-1a of the model's config, tokenizer and weight files */
	GBX_F_TEXT,         /* STR the current text */
	GBX_F_IDS,          /* INTS its token ids (the run every view reads) */
	GBX_F_TGT,          /* INTS an encoder-decoder's target ids */
	GBX_F_LESSON,       /* STR the lesson's title ("" when none) */
	GBX_F_STEP,         /* INTS step (from 1), steps */
	GBX_F_HEADING,      /* STR the step's heading */
	GBX_F_VIEW,         /* STR the command that made the figure on show ("" when none) */
	GBX_F_VIEW_IDS,     /* INTS the ids it ran on */
	GBX_F_VIEW_TGT,     /* INTS and the target ids */
	GBX_F_VIEW_CUR,     /* INTS stage, layer, head, tour before it ran */
	GBX_F_CURSOR,       /* INTS stage, layer, head, tour now */
	GBX_F_QID,          /* U32 the question asked (0: none) */
	GBX_F_QTEXT,        /* STR its text */
	GBX_F_QOPTS,        /* STR its choices, one per line ("" for a number or a word) */
	GBX_F_CODE,         /* STR the class's code */
	GBX_F_ID,           /* STR a follower's own id, kept across reconnects */
	GBX_F_NAME,         /* STR a follower's name (optional; stays on the teacher's machine) */
	GBX_F_ANSWER,       /* STR an answer */
	GBX_F_REASON,       /* STR why a BYE */
	GBX_F_N
};

#define GBX_FULL 1u

/* A message, decoded or to encode. It holds its own copy of a decoded frame's strings and lists
 * (about GBX_MAX_MSG bytes): allocate it (malloc, static), never on the stack. */
typedef struct gbx_msg {
	int version, type;
	uint32_t has;                 /* 1u << key of each field present */
	uint64_t u[GBX_F_N];          /* U32 and U64 fields */
	const char *s[GBX_F_N];       /* STR fields, NUL-terminated */
	const int32_t *v[GBX_F_N];    /* INTS fields */
	int nv[GBX_F_N];
	/* decode's copy of strings and lists (the input buffer may go away) */
	unsigned char arena[GBX_MAX_MSG + GBX_F_N * 8];
} gbx_msg;

enum gbx_status { GBX_OK, GBX_E_TOO_BIG, GBX_E_VERSION, GBX_E_TYPE, GBX_E_MALFORMED };

typedef struct gbx_error {
	int code;                     /* enum gbx_status */
	char msg[160];                /* e.g. "oversized message (300000 bytes, the cap is 262144)" */
} gbx_error;

/* Clears m (no fields) and sets its type and the version. */
void gbx_init(gbx_msg *m, int type);
void gbx_set_u(gbx_msg *m, int key, uint64_t x);
void gbx_set_s(gbx_msg *m, int key, const char *s);           /* not copied */
void gbx_set_v(gbx_msg *m, int key, const int32_t *v, int n); /* not copied */
static inline int gbx_has(const gbx_msg *m, int key) { return (m->has >> key) & 1u; }

/* Writes m as one frame into out (cap bytes); its length, or -1 when it would pass the caps
 * (GBX_MAX_MSG, GBX_MAX_STR, GBX_MAX_INTS) or cap. */
long gbx_encode(const gbx_msg *m, unsigned char *out, size_t cap);

/* Reads one frame from the start of buf (len bytes). 1: a message in m, *used bytes consumed;
 * 0: not a whole frame yet (a length prefix that already passes the cap is an error at once,
 * so a peer cannot make us wait for 4 GB); -1: err says what is wrong. Pure: reads buf and
 * writes m, *used and err only. */
int gbx_decode(const unsigned char *buf, size_t len, gbx_msg *m, size_t *used, gbx_error *err);

/* A type's and a status's names, for log lines. */
const char *gbx_type_name(int type);

/* FNV-1a, 64 bits, continued from h (start with GBX_FNV0). */
#define GBX_FNV0 0xcbf29ce484222325ull
uint64_t gbx_fnv(uint64_t h, const void *p, size_t n);

#endif
