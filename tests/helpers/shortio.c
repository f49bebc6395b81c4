/* SPDX-License-Identifier: ISC */

/*
 * An LD_PRELOAD shim for the fault tests: on sockets, read(), recv(),
 * send() and writev() move a random 1..n bytes of what was asked (a third
 * of the calls at most 16 bytes, a third at most 4 KiB), and one call in
 * ten fails with EAGAIN as if the socket were not ready.  A
 * correct event loop loses and reorders nothing under it.
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

static ssize_t	(*real_read)(int, void *, size_t);
static ssize_t	(*real_recv)(int, void *, size_t, int);
static ssize_t	(*real_send)(int, const void *, size_t, int);
static ssize_t	(*real_writev)(int, const struct iovec *, int);

static uint64_t	 state = 0x9e3779b97f4a7c15ULL;

static uint64_t
next_random(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (state);
}

/*
 * Decide the fate of one call on fd: 0 to fail it with EAGAIN, else the
 * number of bytes (at most len) to let through.
 */
static size_t
shorten(int fd, size_t len)
{
	struct stat	 st;

	if (len == 0 || fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))
		return (len);
	switch (next_random() % 10) {
	case 0:
		return (0);
	case 1:
	case 2:
	case 3:
		return (1 + next_random() % (len < 16 ? len : 16));
	case 4:
	case 5:
	case 6:
		return (1 + next_random() % (len < 4096 ? len : 4096));
	default:
		return (1 + next_random() % len);
	}
}

ssize_t
read(int fd, void *buf, size_t len)
{
	size_t	 n;

	if (real_read == NULL)
		real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT,
		    "read");
	if ((n = shorten(fd, len)) == 0) {
		errno = EAGAIN;
		return (-1);
	}
	return (real_read(fd, buf, n));
}

ssize_t
recv(int fd, void *buf, size_t len, int flags)
{
	size_t	 n;

	if (real_recv == NULL)
		real_recv = (ssize_t (*)(int, void *, size_t, int))dlsym(
		    RTLD_NEXT, "recv");
	if ((n = shorten(fd, len)) == 0) {
		errno = EAGAIN;
		return (-1);
	}
	return (real_recv(fd, buf, n, flags));
}

ssize_t
send(int fd, const void *buf, size_t len, int flags)
{
	size_t	 n;

	if (real_send == NULL)
		real_send = (ssize_t (*)(int, const void *, size_t, int))dlsym(
		    RTLD_NEXT, "send");
	if ((n = shorten(fd, len)) == 0) {
		errno = EAGAIN;
		return (-1);
	}
	return (real_send(fd, buf, n, flags));
}

ssize_t
writev(int fd, const struct iovec *iov, int iovcnt)
{
	struct iovec	 cut[64];
	size_t		 total = 0, n;
	int		 i;

	if (real_writev == NULL)
		real_writev = (ssize_t (*)(int, const struct iovec *, int))
		    dlsym(RTLD_NEXT, "writev");
	if (iovcnt > 64)
		iovcnt = 64;
	for (i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if ((n = shorten(fd, total)) == 0) {
		errno = EAGAIN;
		return (-1);
	}
	/* Keep the first n bytes of the vector. */
	for (i = 0; i < iovcnt && n > 0; i++) {
		cut[i] = iov[i];
		if (cut[i].iov_len > n)
			cut[i].iov_len = n;
		n -= cut[i].iov_len;
	}
	return (real_writev(fd, cut, i));
}
