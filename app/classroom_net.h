/* classroom_net.h — the classroom's sockets: plain POSIX TCP, non-blocking, one poll() loop in
 * the caller (no thread per follower). A connection buffers what came in until a whole frame
 * is there (app/classroom_proto.h) and what goes out until the socket takes it; a peer that
 * lets GBX_OUT_MAX bytes pile up unread is dropped rather than letting the teacher's memory
 * grow. */
#ifndef GLASSBOX_CLASSROOM_NET_H
#define GLASSBOX_CLASSROOM_NET_H

#include <stddef.h>

#include "app/classroom_proto.h"

#define GBX_OUT_MAX (8u << 20)

typedef struct gbx_conn {
	int fd;                      /* -1: closed */
	char peer[64];               /* "127.0.0.1:40312", for log lines */
	unsigned char *in;           /* (GBX_HDR + GBX_MAX_MSG) */
	size_t in_n;
	unsigned char *out;
	size_t out_n, out_cap;
} gbx_conn;

/* A listening socket on every address at port (0: one the system picks); *bound is the port
 * it got. -1 with err. */
int net_listen(int port, int *bound, char *err, size_t cap);
/* Accepts one connection into c (non-blocking); -1 when none is waiting. */
int net_accept(int lfd, gbx_conn *c);
/* Connects to host:port within timeout_ms; 0 with c open, -1 with err. */
int net_connect(const char *host, int port, int timeout_ms, gbx_conn *c, char *err, size_t cap);
void conn_close(gbx_conn *c);

/* Reads what the socket has: 0, or -1 when the peer closed or failed (err says which). */
int conn_read(gbx_conn *c, char *err, size_t cap);
/* The next whole frame from what was read: 1 (m), 0 (none yet), -1 (e: close the connection). */
int conn_next(gbx_conn *c, gbx_msg *m, gbx_error *e);
/* Queues bytes to send and writes what the socket takes now: 0, or -1 (closed, failed, or the
 * peer let too much pile up). */
int conn_send(gbx_conn *c, const unsigned char *b, size_t n, char *err, size_t cap);
/* Writes what is queued: 0, or -1. */
int conn_flush(gbx_conn *c, char *err, size_t cap);
/* Encodes m and sends it; -1 also when m does not fit a frame. */
int conn_send_msg(gbx_conn *c, const gbx_msg *m, char *err, size_t cap);

/* A LAN address of this machine for the join line (the first IPv4 address that is up and not
 * loopback), or 127.0.0.1. */
void net_lan_address(char *out, size_t cap);
/* Microseconds on the wall clock (CLOCK_REALTIME): the teacher stamps states with it, a
 * follower on the same clock (loopback, or NTP on a LAN) measures the delay. */
unsigned long long net_now_us(void);

#endif
