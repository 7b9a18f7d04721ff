/* classroom_net.c — sockets for the classroom (classroom_net.h): listen, accept, connect,
 * buffered non-blocking reads and writes of frames. SIGPIPE is ignored once a socket exists:
 * a follower that vanishes mid-write is a closed connection, not the end of the teacher. */
#include "app/classroom_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void no_sigpipe(void)
{
	static int done;
	if (!done) {
		signal(SIGPIPE, SIG_IGN);
		done = 1;
	}
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	int one = 1; /* a state is one small frame: send it now, not after 40 ms of Nagle */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void conn_open(gbx_conn *c, int fd)
{
	memset(c, 0, sizeof *c);
	c->fd = fd;
	c->in = malloc(GBX_HDR + GBX_MAX_MSG);
	nonblock(fd);
}

int net_listen(int port, int *bound, char *err, size_t cap)
{
	no_sigpipe();
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(err, cap, "cannot make a socket: %s", strerror(errno));
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = { 0 };
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	a.sin_port = htons((unsigned short)port);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 128)) {
		snprintf(err, cap, "cannot listen on port %d: %s%s", port, strerror(errno),
		         errno == EADDRINUSE ? " (try another with --port N, or --port 0 for any free one)" : "");
		close(fd);
		return -1;
	}
	socklen_t len = sizeof a;
	getsockname(fd, (struct sockaddr *)&a, &len);
	*bound = ntohs(a.sin_port);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

int net_accept(int lfd, gbx_conn *c)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	int fd = accept(lfd, (struct sockaddr *)&a, &len);
	if (fd < 0)
		return -1;
	conn_open(c, fd);
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
	snprintf(c->peer, sizeof c->peer, "%s:%d", ip, ntohs(a.sin_port));
	return 0;
}

int net_connect(const char *host, int port, int timeout_ms, gbx_conn *c, char *err, size_t cap)
{
	no_sigpipe();
	struct addrinfo hints = { 0 }, *res = NULL;
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	int g = getaddrinfo(host, ps, &hints, &res);
	if (g || !res) {
		snprintf(err, cap, "cannot find %s: %s", host, gai_strerror(g));
		return -1;
	}
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		freeaddrinfo(res);
		snprintf(err, cap, "cannot make a socket: %s", strerror(errno));
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	int rc = connect(fd, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (rc && errno == EINPROGRESS) {
		struct pollfd p = { fd, POLLOUT, 0 };
		int k;
		while ((k = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
			;
		int e = 0;
		socklen_t el = sizeof e;
		if (k == 0)
			e = ETIMEDOUT;
		else
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
		rc = e ? -1 : 0;
		errno = e;
	}
	if (rc) {
		snprintf(err, cap, "cannot reach the teacher at %s:%d: %s", host, port, strerror(errno));
		close(fd);
		return -1;
	}
	conn_open(c, fd);
	snprintf(c->peer, sizeof c->peer, "%s:%d", host, port);
	return 0;
}

void conn_close(gbx_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->in);
	free(c->out);
	memset(c, 0, sizeof *c);
	c->fd = -1;
}

int conn_read(gbx_conn *c, char *err, size_t cap)
{
	for (;;) {
		size_t room = GBX_HDR + GBX_MAX_MSG - c->in_n;
		if (!room)
			return 0; /* a whole frame is waiting: conn_next takes it first */
		ssize_t k = read(c->fd, c->in + c->in_n, room);
		if (k > 0) {
			c->in_n += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		snprintf(err, cap, "%s", k == 0 ? "closed by the other side" : strerror(errno));
		return -1;
	}
}

int conn_next(gbx_conn *c, gbx_msg *m, gbx_error *e)
{
	size_t used = 0;
	int rc = gbx_decode(c->in, c->in_n, m, &used, e);
	if (rc == 1) {
		memmove(c->in, c->in + used, c->in_n - used);
		c->in_n -= used;
	}
	return rc;
}

int conn_flush(gbx_conn *c, char *err, size_t cap)
{
	size_t done = 0;
	while (done < c->out_n) {
		ssize_t k = send(c->fd, c->out + done, c->out_n - done, MSG_NOSIGNAL);
		if (k > 0) {
			done += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		snprintf(err, cap, "%s", k == 0 ? "closed by the other side" : strerror(errno));
		return -1;
	}
	memmove(c->out, c->out + done, c->out_n - done);
	c->out_n -= done;
	return 0;
}

int conn_send(gbx_conn *c, const unsigned char *b, size_t n, char *err, size_t cap)
{
	if (c->out_n + n > GBX_OUT_MAX) {
		snprintf(err, cap, "it reads too slowly (%zu bytes waiting)", c->out_n);
		return -1;
	}
	if (c->out_n + n > c->out_cap) {
		size_t nc = c->out_cap ? c->out_cap : 4096;
		while (nc < c->out_n + n)
			nc *= 2;
		c->out = realloc(c->out, nc);
		c->out_cap = nc;
	}
	memcpy(c->out + c->out_n, b, n);
	c->out_n += n;
	return conn_flush(c, err, cap);
}

int conn_send_msg(gbx_conn *c, const gbx_msg *m, char *err, size_t cap)
{
	static unsigned char buf[GBX_HDR + GBX_MAX_MSG];
	long n = gbx_encode(m, buf, sizeof buf);
	if (n < 0) {
		snprintf(err, cap, "a %s message too large to send", gbx_type_name(m->type));
		return -1;
	}
	return conn_send(c, buf, (size_t)n, err, cap);
}

void net_lan_address(char *out, size_t cap)
{
	snprintf(out, cap, "127.0.0.1");
	struct ifaddrs *ifs, *i;
	if (getifaddrs(&ifs))
		return;
	for (i = ifs; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
		    !(i->ifa_flags & IFF_LOOPBACK)) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, out, (socklen_t)cap);
			break;
		}
	freeifaddrs(ifs);
}

unsigned long long net_now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (unsigned long long)t.tv_sec * 1000000ull + (unsigned long long)t.tv_nsec / 1000;
}
