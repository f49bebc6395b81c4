/* SPDX-License-Identifier: ISC */

/*
 * le.h: the little-endian integers of the diagnostic IPC wire, for the
 * test fakes (fakeproto.c and the cores beside it).  Header-only, and
 * shares nothing with the router's code: a fake that read the wire the
 * router's way would agree with the router's mistakes.
 */

#ifndef TESTS_LE_H
#define TESTS_LE_H

#include <stdint.h>

static inline void
put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static inline void
put_le32(uint8_t *p, uint32_t v)
{
	int	i;

	for (i = 0; i < 4; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

static inline void
put_le64(uint8_t *p, uint64_t v)
{
	int	i;

	for (i = 0; i < 8; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

static inline uint32_t
get_le32(const uint8_t *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

static inline uint64_t
get_le64(const uint8_t *p)
{
	return ((uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32);
}

#endif /* TESTS_LE_H */
