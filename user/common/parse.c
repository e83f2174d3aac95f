// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include "common/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	const char *digits = s;
	int base = 10;
	char *end;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	/* Base 0 would read "010" as octal 8: only 0x means anything but decimal. */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		digits = s + 2;
		base = 16;
		if (!isxdigit((unsigned char)*digits))
			return -EINVAL;
	}
	errno = 0;
	v = strtoull(digits, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == digits || *end)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Split "123unit" into the number and the unit text that follows it. */
static int split_number(const char *s, uint64_t *num, const char **unit)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	*num = v;
	*unit = end;
	return 0;
}

static int mul_checked(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a && b > UINT64_MAX / a)
		return -ERANGE;
	*out = a * b;
	return 0;
}

struct unit {
	const char *name;
	uint64_t mult;
};

static int apply_unit(uint64_t num, const char *unit, const struct unit *units,
		      uint64_t *out)
{
	for (; units->name; units++) {
		if (!strcasecmp(unit, units->name))
			return mul_checked(num, units->mult, out);
	}
	return -EINVAL;
}

int parse_rate_bps(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1 }, { "bit", 1 },
		{ "kbit", 1000ULL }, { "mbit", 1000000ULL },
		{ "gbit", 1000000000ULL }, { "tbit", 1000000000000ULL },
		{ "bps", 8 }, { "kbps", 8000ULL }, { "mbps", 8000000ULL },
		{ "gbps", 8000000000ULL },
		{ NULL, 0 },
	};
	const char *unit;
	uint64_t num;
	int err = split_number(s, &num, &unit);

	if (err)
		return err;
	err = apply_unit(num, unit, units, out);
	if (!err && *out == 0)
		return -ERANGE;	/* a zero rate would stop the link forever */
	return err;
}

int parse_size(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1 }, { "b", 1 },
		{ "k", 1ULL << 10 }, { "kb", 1ULL << 10 }, { "kib", 1ULL << 10 },
		{ "m", 1ULL << 20 }, { "mb", 1ULL << 20 }, { "mib", 1ULL << 20 },
		{ "g", 1ULL << 30 }, { "gb", 1ULL << 30 }, { "gib", 1ULL << 30 },
		{ NULL, 0 },
	};
	const char *unit;
	uint64_t num;
	int err = split_number(s, &num, &unit);

	return err ? err : apply_unit(num, unit, units, out);
}

/*
 * A decimal with at most `decimals` decimals, scaled by 10^decimals
 * ("2.5" with 3 decimals is 2500); *rest is what follows it.
 */
static int split_decimal(const char *s, unsigned int decimals, uint64_t *scaled,
			 const char **rest)
{
	uint64_t whole, frac = 0, unit = 1, scale;
	int err = split_number(s, &whole, rest);

	if (err)
		return err;
	while (decimals--)
		unit *= 10;
	scale = unit;
	if (**rest == '.') {
		(*rest)++;
		if (!isdigit((unsigned char)**rest))
			return -EINVAL;
		for (; isdigit((unsigned char)**rest); (*rest)++) {
			if (scale == 1)
				return -EINVAL;	/* too many decimals */
			scale /= 10;
			frac += (uint64_t)(**rest - '0') * scale;
		}
	}
	if (mul_checked(whole, unit, scaled) || *scaled > UINT64_MAX - frac)
		return -ERANGE;
	*scaled += frac;
	return 0;
}

int parse_percent_ppm(const char *s, uint32_t *out)
{
	const char *rest;
	uint64_t v;
	/* Up to four decimals: 2.5% = 25000 ppm. */
	int err = split_decimal(s, 4, &v, &rest);

	if (err)
		return err;
	if (*rest == '%')
		rest++;
	if (*rest)
		return -EINVAL;
	if (v > 1000000)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

int parse_milli(const char *s, uint32_t max, uint32_t *out)
{
	const char *rest;
	uint64_t v;
	int err = split_decimal(s, 3, &v, &rest);

	if (err)
		return err;
	if (*rest)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}
