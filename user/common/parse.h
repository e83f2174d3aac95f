/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Parsing of the numbers people type on command lines: rates, sizes,
 * percentages, fractions. Every parser returns 0 or -EINVAL/-ERANGE and
 * never accepts trailing garbage, so "10x" is an error rather than 10.
 */
#ifndef MRC_PARSE_H
#define MRC_PARSE_H

#include <stdint.h>

/* Plain unsigned integer, decimal or 0x-hex, at most `max`. */
int parse_u64(const char *s, uint64_t max, uint64_t *out);

/* Bit rate as tc writes it: 500mbit, 1gbit, 100kbit, 2500000 (bit/s),
 * also 10gbps-style byte rates ("bps" suffix = bytes per second). */
int parse_rate_bps(const char *s, uint64_t *out);

/* Byte size: 9000, 64k, 1m, 2g (binary multiples), optional trailing 'b'. */
int parse_size(const char *s, uint64_t *out);

/* Percentage 0..100 with up to 4 decimals, returned in parts per million. */
int parse_percent_ppm(const char *s, uint32_t *out);

/*
 * Non-negative decimal with up to 3 decimals, returned x 1000 ("0.25" ->
 * 250, "2.5" -> 2500, "7" -> 7000), at most `max` (in thousandths):
 * the fractions and factors of CC profiles.
 */
int parse_milli(const char *s, uint32_t max, uint32_t *out);

#endif
