// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline's stream: byte i is byte i%8 of the little-endian word
 * pattern_word(i/8). The client sends it, the server checks it, and a
 * wrong run of bytes is explained (misplaced stream data, or foreign).
 */
#include "tcp_timeline.h"

#include <inttypes.h>

/* Word i of the stream: a bijection of i, so every word differs and a
 * misplaced or repeated block never matches. */
static inline uint64_t pattern_word(uint64_t i)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;

	return x ^ (x >> 29);
}

/* buf := bytes [off, off + len) of the stream. */
void pattern_fill(uint8_t *buf, uint64_t off, size_t len)
{
	uint64_t w = off / 8, le;
	size_t skip = off % 8, n;

	if (skip) {
		le = htole64(pattern_word(w++));
		n = 8 - skip < len ? 8 - skip : len;
		memcpy(buf, (uint8_t *)&le + skip, n);
		buf += n;
		len -= n;
	}
	while (len >= 8) {
		le = htole64(pattern_word(w++));
		memcpy(buf, &le, 8);
		buf += 8;
		len -= 8;
	}
	if (len) {
		le = htole64(pattern_word(w));
		memcpy(buf, &le, len);
	}
}

/* The index i of the word pattern_word(i) == w: the multiply and the
 * xorshift are both invertible mod 2^64. */
static uint64_t pattern_index(uint64_t w)
{
	uint64_t x = w ^ (w >> 29) ^ (w >> 58), inv = 0x9e3779b97f4a7c15ull;
	int k;

	/* Newton's iteration for the inverse of an odd number mod 2^64. */
	for (k = 0; k < 5; k++)
		inv *= 2 - 0x9e3779b97f4a7c15ull * inv;
	return (x - 0x632be59bd9b4e019ull) * inv;
}

/* What a wrong run of bytes at buf[0..len) holds: stream bytes from
 * another offset (misplaced or repeated data) or foreign bytes. Writes
 * " (...)" into out. Looks at the first 8-byte word that could be aligned
 * to the stream and confirms a match over up to 64 bytes. */
void pattern_explain(const uint8_t *buf, size_t len, uint64_t stream_len,
		     char *out, size_t outlen)
{
	uint8_t want[64];
	size_t k, n;
	uint64_t le, src;

	for (k = 0; k < 8 && k + 8 <= len; k++) {
		memcpy(&le, buf + k, 8);
		src = pattern_index(le64toh(le));
		if (src >= stream_len / 8 + 1 || src * 8 < k)
			continue;
		src = src * 8 - k;	/* the stream offset of buf[0] */
		n = len < sizeof(want) ? len : sizeof(want);
		pattern_fill(want, src, n);
		if (!memcmp(buf, want, n)) {
			snprintf(out, outlen, " (it holds the stream's bytes from "
				 "offset %" PRIu64 ": misplaced data)", src);
			return;
		}
	}
	snprintf(out, outlen, " (not bytes of the stream)");
}

/* -1 if buf holds bytes [off, off + len) of the stream, else the offset
 * (relative to buf) of the first wrong byte. */
ssize_t pattern_check(const uint8_t *buf, uint64_t off, size_t len,
		      uint8_t *scratch)
{
	size_t i;

	pattern_fill(scratch, off, len);
	if (!memcmp(buf, scratch, len))
		return -1;
	for (i = 0; i < len && buf[i] == scratch[i]; i++)
		;
	return (ssize_t)i;
}
