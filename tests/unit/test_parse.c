// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of user/common/parse.c: the number parsers behind every
 * mrc-labctl and mrc-lab command-line value (rates, sizes, percentages)
 * and of mrcctl's CC profile fractions.
 */
#include <errno.h>
#include <stdint.h>

#include "common/parse.h"
#include "test.h"

TEST_STATE_DEFINE;

/* Assertion labels name the input, so a failure says which case broke. */
static char what_err[96], what_val[96];

static void label(const char *fn, const char *s)
{
	snprintf(what_err, sizeof(what_err), "%s(\"%s\") result", fn,
		 s ? s : "(null)");
	snprintf(what_val, sizeof(what_val), "%s(\"%s\") value", fn,
		 s ? s : "(null)");
}

/* Parse `s` with parse_u64 and check the result code and value. */
static void check_u64(const char *s, uint64_t max, int want_err, uint64_t want)
{
	uint64_t v = 0xdeadbeef;
	int err = parse_u64(s, max, &v);

	label("parse_u64", s);
	if (ASSERT_EQ(err, want_err, what_err) && !want_err)
		ASSERT_EQ(v, want, what_val);
}

static void check_rate(const char *s, int want_err, uint64_t want)
{
	uint64_t v = 0;
	int err = parse_rate_bps(s, &v);

	label("parse_rate_bps", s);
	if (ASSERT_EQ(err, want_err, what_err) && !want_err)
		ASSERT_EQ(v, want, what_val);
}

static void check_size(const char *s, int want_err, uint64_t want)
{
	uint64_t v = 0;
	int err = parse_size(s, &v);

	label("parse_size", s);
	if (ASSERT_EQ(err, want_err, what_err) && !want_err)
		ASSERT_EQ(v, want, what_val);
}

static void check_ppm(const char *s, int want_err, uint32_t want)
{
	uint32_t v = 0;
	int err = parse_percent_ppm(s, &v);

	label("parse_percent_ppm", s);
	if (ASSERT_EQ(err, want_err, what_err) && !want_err)
		ASSERT_EQ(v, want, what_val);
}

static void check_milli(const char *s, uint32_t max, int want_err, uint32_t want)
{
	uint32_t v = 0;
	int err = parse_milli(s, max, &v);

	label("parse_milli", s);
	if (ASSERT_EQ(err, want_err, what_err) && !want_err)
		ASSERT_EQ(v, want, what_val);
}

/* ---- parse_u64 ------------------------------------------------------- */

static void test_u64_valid(void)
{
	check_u64("0", UINT64_MAX, 0, 0);
	check_u64("42", UINT64_MAX, 0, 42);
	check_u64("0x10", UINT64_MAX, 0, 16);
	check_u64("0XfF", UINT64_MAX, 0, 255);
	check_u64("18446744073709551615", UINT64_MAX, 0, UINT64_MAX);
	check_u64("65535", 65535, 0, 65535);
	/* "decimal or 0x-hex": a leading zero is still decimal, not octal. */
	check_u64("010", UINT64_MAX, 0, 10);
	check_u64("04791", 65535, 0, 4791);
	check_u64("09", UINT64_MAX, 0, 9);
}

static void test_u64_range(void)
{
	check_u64("65536", 65535, -ERANGE, 0);
	check_u64("2", 1, -ERANGE, 0);
	check_u64("18446744073709551616", UINT64_MAX, -ERANGE, 0);
	check_u64("0x10000000000000000", UINT64_MAX, -ERANGE, 0);
}

static void test_u64_invalid(void)
{
	check_u64("", UINT64_MAX, -EINVAL, 0);
	check_u64(NULL, UINT64_MAX, -EINVAL, 0);
	check_u64("-1", UINT64_MAX, -EINVAL, 0);
	check_u64(" 5", UINT64_MAX, -EINVAL, 0);
	check_u64("10x", UINT64_MAX, -EINVAL, 0);
	check_u64("12 ", UINT64_MAX, -EINVAL, 0);
	check_u64("0x", UINT64_MAX, -EINVAL, 0);
	check_u64("0x-5", UINT64_MAX, -EINVAL, 0);
	check_u64("0x 5", UINT64_MAX, -EINVAL, 0);
	check_u64("abc", UINT64_MAX, -EINVAL, 0);
}

/* ---- parse_rate_bps -------------------------------------------------- */

static void test_rate_units(void)
{
	check_rate("500mbit", 0, 500000000ULL);
	check_rate("1gbit", 0, 1000000000ULL);
	check_rate("100kbit", 0, 100000ULL);
	check_rate("2tbit", 0, 2000000000000ULL);
	check_rate("10bit", 0, 10);
	check_rate("1GBIT", 0, 1000000000ULL);
	/* tc's "bps" is bytes per second. */
	check_rate("8bps", 0, 64);
	check_rate("1kbps", 0, 8000);
	check_rate("10gbps", 0, 80000000000ULL);
	check_rate("2500000", 0, 2500000);
}

static void test_rate_invalid(void)
{
	check_rate("", -EINVAL, 0);
	check_rate("mbit", -EINVAL, 0);
	check_rate("10xbit", -EINVAL, 0);
	check_rate("10 mbit", -EINVAL, 0);
	check_rate("-1mbit", -EINVAL, 0);
	check_rate("1.5gbit", -EINVAL, 0);
}

static void test_rate_range(void)
{
	/* A zero rate would stop the link forever. */
	check_rate("0", -ERANGE, 0);
	check_rate("0mbit", -ERANGE, 0);
	check_rate("20000000tbit", -ERANGE, 0);
	check_rate("18446744073709551615kbit", -ERANGE, 0);
	check_rate("99999999999999999999999", -ERANGE, 0);
}

/* ---- parse_size ------------------------------------------------------ */

static void test_size_units(void)
{
	check_size("9000", 0, 9000);
	check_size("0", 0, 0);
	check_size("64k", 0, 65536);
	check_size("64K", 0, 65536);
	check_size("1m", 0, 1ULL << 20);
	check_size("2g", 0, 2ULL << 30);
	check_size("1kib", 0, 1024);
	check_size("3kb", 0, 3072);
	check_size("1500b", 0, 1500);
	check_size("4mib", 0, 4ULL << 20);
}

static void test_size_invalid(void)
{
	check_size("", -EINVAL, 0);
	check_size("k", -EINVAL, 0);
	check_size("10q", -EINVAL, 0);
	check_size("10 k", -EINVAL, 0);
	check_size("-1", -EINVAL, 0);
	check_size("1kbit", -EINVAL, 0);
	check_size("17179869184g", -ERANGE, 0);
}

/* ---- parse_percent_ppm ----------------------------------------------- */

static void test_percent_valid(void)
{
	check_ppm("10", 0, 100000);
	check_ppm("2.5", 0, 25000);
	check_ppm("0.0001", 0, 1);
	check_ppm("0", 0, 0);
	check_ppm("100", 0, 1000000);
	check_ppm("100.0", 0, 1000000);
	check_ppm("10%", 0, 100000);
	check_ppm("0.5%", 0, 5000);
	check_ppm("1.2345", 0, 12345);
}

static void test_percent_invalid(void)
{
	check_ppm("100.5", -ERANGE, 0);
	check_ppm("101", -ERANGE, 0);
	check_ppm("1.23456", -EINVAL, 0);
	check_ppm("abc", -EINVAL, 0);
	check_ppm("", -EINVAL, 0);
	check_ppm("1.", -EINVAL, 0);
	check_ppm(".5", -EINVAL, 0);
	check_ppm("-1", -EINVAL, 0);
	check_ppm("10%%", -EINVAL, 0);
	check_ppm("10 %", -EINVAL, 0);
	check_ppm("5x", -EINVAL, 0);
}

/* ---- parse_milli ---------------------------------------------------- */

static void test_milli_valid(void)
{
	check_milli("0.25", 1000000, 0, 250);
	check_milli("2.5", 1000000, 0, 2500);
	check_milli("0.8", 1000, 0, 800);
	check_milli("1", 1000, 0, 1000);
	check_milli("1.000", 1000, 0, 1000);
	check_milli("0", 1000, 0, 0);
	check_milli("0.001", 1000, 0, 1);
	check_milli("0.125", 1000, 0, 125);
	check_milli("7", 1000000, 0, 7000);
	check_milli("1000", 1000000, 0, 1000000);
	check_milli("1000.000", 1000000, 0, 1000000);
	check_milli("012.50", 1000000, 0, 12500);
}

static void test_milli_invalid(void)
{
	check_milli("1000.001", 1000000, -ERANGE, 0);
	check_milli("1001", 1000000, -ERANGE, 0);
	check_milli("1.001", 1000, -ERANGE, 0);
	check_milli("99999999999999999999", 1000000, -ERANGE, 0);
	check_milli("18446744073709551.615", UINT32_MAX, -ERANGE, 0);
	check_milli("0.0001", 1000000, -EINVAL, 0);
	check_milli("0.2500", 1000000, -EINVAL, 0);
	check_milli("", 1000000, -EINVAL, 0);
	check_milli(".5", 1000000, -EINVAL, 0);
	check_milli("5.", 1000000, -EINVAL, 0);
	check_milli("-0.5", 1000000, -EINVAL, 0);
	check_milli("+1", 1000000, -EINVAL, 0);
	check_milli("1,5", 1000000, -EINVAL, 0);
	check_milli("0.5x", 1000000, -EINVAL, 0);
	check_milli("1e3", 1000000, -EINVAL, 0);
	check_milli(" 1", 1000000, -EINVAL, 0);
	check_milli("50%", 1000000, -EINVAL, 0);
	check_milli(NULL, 1000000, -EINVAL, 0);
}

int main(void)
{
	RUN_TEST("parse.u64.valid", test_u64_valid);
	RUN_TEST("parse.u64.range", test_u64_range);
	RUN_TEST("parse.u64.invalid", test_u64_invalid);
	RUN_TEST("parse.rate.units", test_rate_units);
	RUN_TEST("parse.rate.invalid", test_rate_invalid);
	RUN_TEST("parse.rate.range", test_rate_range);
	RUN_TEST("parse.size.units", test_size_units);
	RUN_TEST("parse.size.invalid", test_size_invalid);
	RUN_TEST("parse.percent.valid", test_percent_valid);
	RUN_TEST("parse.percent.invalid", test_percent_invalid);
	RUN_TEST("parse.milli.valid", test_milli_valid);
	RUN_TEST("parse.milli.invalid", test_milli_invalid);
	return TEST_EXIT();
}
