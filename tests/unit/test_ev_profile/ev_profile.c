// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of user/common/ev_profile.c: pdep, EV expansion, layout and
 * profile validation, the profile state machine, QP EV table generation
 * (the mrcctl-style syntax and the pinned record are in parse.c).
 * Expected values are worked out by hand in the comments, not computed
 * by the code under test.
 */
#include "ev_profile_test.h"

TEST_STATE_DEFINE;

char err[EV_ERR_LEN];
char what[512];

struct ev_field fld(uint32_t width, uint32_t init, uint32_t min,
	      uint32_t max, uint32_t mask)
{
	return (struct ev_field){ .width = width, .init = init, .min = min,
				  .max = max, .mask = mask };
}

struct ev_layout layout(unsigned int n, const uint8_t *fmt,
			const struct ev_field *f)
{
	struct ev_layout l;
	unsigned int i;

	memset(&l, 0, sizeof(l));
	l.n_fmt = n;
	l.n_fields = n;
	for (i = 0; i < n; i++) {
		l.fmt[i] = fmt[i];
		l.fields[i] = f[i];
	}
	return l;
}

void check_expand(const struct ev_layout *l, uint32_t compact,
		  int want_rc, uint32_t want)
{
	uint32_t wire = 0xdeadbeef;
	int rc;

	err[0] = '\0';
	rc = ev_layout_expand(l, compact, &wire, err, sizeof(err));
	snprintf(what, sizeof(what), "expand(0x%x) rc (%s)", compact, err);
	if (ASSERT_EQ(rc, want_rc, what) && !want_rc) {
		snprintf(what, sizeof(what), "expand(0x%x) wire EV", compact);
		ASSERT_EQ(wire, want, what);
	}
}

/* ---- bit helpers ------------------------------------------------------ */

TEST_CASE(test_popcount, "ev_profile.popcount")
{
	ASSERT_EQ(ev_popcount32(0), 0, "popcount(0)");
	ASSERT_EQ(ev_popcount32(1), 1, "popcount(1)");
	ASSERT_EQ(ev_popcount32(0x0F0A), 6, "popcount(0x0F0A)");	/* 4 + 2 */
	ASSERT_EQ(ev_popcount32(0x813), 4, "popcount(0x813)");
	ASSERT_EQ(ev_popcount32(0x80000001), 2, "popcount(0x80000001)");
	ASSERT_EQ(ev_popcount32(UINT32_MAX), 32, "popcount(~0)");
}

TEST_CASE(test_pdep, "ev_profile.pdep")
{
	/*
	 * mask 0b11010 has bits 1, 3, 4. value 0b101: bit 0 (1) -> bit 1,
	 * bit 1 (0) -> bit 3, bit 2 (1) -> bit 4: 0b10010.
	 */
	ASSERT_EQ(ev_pdep32(0x5, 0x1A), 0x12, "pdep(0b101, 0b11010)");
	/* Full mask: identity. Empty mask: nothing. */
	ASSERT_EQ(ev_pdep32(0xABCD, 0xFFFF), 0xABCD, "pdep(0xABCD, 0xFFFF)");
	ASSERT_EQ(ev_pdep32(0xFFFFFFFF, 0), 0, "pdep(~0, 0)");
	/* 8 ones into 8 mask bits fill the mask. */
	ASSERT_EQ(ev_pdep32(0xFF, 0x0F0F), 0x0F0F, "pdep(0xFF, 0x0F0F)");
	/* 0x0F0F bits 0-3 and 8-11: low nibble 0x6 -> 0x6, high 0xA -> 0xA00. */
	ASSERT_EQ(ev_pdep32(0xA6, 0x0F0F), 0x0A06, "pdep(0xA6, 0x0F0F)");
	/*
	 * mask 0x0F0A = bits 1, 3, 8, 9, 10, 11. value 0b101101:
	 * b0=1 -> bit 1, b1=0 -> bit 3, b2=1 -> bit 8, b3=1 -> bit 9,
	 * b4=0 -> bit 10, b5=1 -> bit 11: 0x800 + 0x200 + 0x100 + 0x2 = 0xB02.
	 */
	ASSERT_EQ(ev_pdep32(0x2D, 0x0F0A), 0xB02, "pdep(0b101101, 0x0F0A)");
	/* mask 0x813 = bits 0, 1, 4, 11. value 0b0110 -> bits 1, 4: 0x12. */
	ASSERT_EQ(ev_pdep32(0x6, 0x813), 0x12, "pdep(0b0110, 0x813)");
	/* mask bits 0 and 31: value 0b10 puts its high bit at bit 31. */
	ASSERT_EQ(ev_pdep32(0x2, 0x80000001), 0x80000000, "pdep(0b10, 0x80000001)");
	ASSERT_EQ(ev_pdep32(0x1, 0x80000000), 0x80000000, "pdep(1, 0x80000000)");
	/* Bits of value above popcount(mask) are ignored. */
	ASSERT_EQ(ev_pdep32(0x7, 0x3), 0x3, "pdep(0b111, 0b11)");
	ASSERT_EQ(ev_pdep32(0xFFFFFFFF, 0xFFFFFFFF), 0xFFFFFFFF, "pdep(~0, ~0)");
}

/* ---- expansion -------------------------------------------------------- */

TEST_CASE(test_expand_udp_single, "ev_profile.expand.udp_single")
{
	static const uint8_t fmt16[] = { 16 };
	struct ev_field f;
	struct ev_layout l;

	/* Whole 16 bits from the compact EV: identity. */
	f = fld(16, 0, 0, 0xFFFF, 0xFFFF);
	l = layout(1, fmt16, &f);
	ASSERT_EQ(ev_layout_compact_bits(&l), 16, "compact bits, full mask");
	check_expand(&l, 0x1a2b, 0, 0x1a2b);
	check_expand(&l, 0xFFFF, 0, 0xFFFF);
	check_expand(&l, 0x10000, -EINVAL, 0);	/* wider than 16 bits */

	/* init 0xC000, 4 compact bits into 0x00F0: 0xA -> 0xC0A0. */
	f = fld(16, 0xC000, 0, 0xFFFF, 0x00F0);
	l = layout(1, fmt16, &f);
	check_expand(&l, 0xA, 0, 0xC0A0);
	check_expand(&l, 0x0, 0, 0xC000);
	check_expand(&l, 0x10, -EINVAL, 0);	/* 5 bits, mask takes 4 */
	ASSERT_ERR_HAS("does not fit in the 4 bits");

	/*
	 * Split mask 0x8001 (bits 0 and 15), N = 2: the high compact bit
	 * goes to bit 15, the low one to bit 0.
	 */
	f = fld(16, 0, 0, 0xFFFF, 0x8001);
	l = layout(1, fmt16, &f);
	check_expand(&l, 0x1, 0, 0x0001);
	check_expand(&l, 0x2, 0, 0x8000);
	check_expand(&l, 0x3, 0, 0x8001);

	/* A 12-bit field right-aligned in a 16-bit wire field. */
	f = fld(12, 0xABC, 0, 0xFFF, 0x00F);
	l = layout(1, fmt16, &f);
	check_expand(&l, 0x5, 0, 0x0AB5);

	/* No mask at all: one constant EV, compact 0 only. */
	f = fld(16, 0x1234, 0, 0xFFFF, 0);
	l = layout(1, fmt16, &f);
	check_expand(&l, 0, 0, 0x1234);
	check_expand(&l, 1, -EINVAL, 0);
}

TEST_CASE(test_expand_init_preserved, "ev_profile.expand.init_preserved")
{
	static const uint8_t fmt16[] = { 16 };
	struct ev_field f = fld(16, 0xFFFF, 0, 0xFFFF, 0x0F00);
	struct ev_layout l = layout(1, fmt16, &f);

	/* Bits outside 0x0F00 stay 1; the nibble at 0x0F00 is the compact EV. */
	check_expand(&l, 0x0, 0, 0xF0FF);
	check_expand(&l, 0x5, 0, 0xF5FF);
	check_expand(&l, 0xF, 0, 0xFFFF);

	/* init 0x1234 with mask 0x00F0: 0x1204 | (0x9 << 4) = 0x1294. */
	f = fld(16, 0x1234, 0, 0xFFFF, 0x00F0);
	l = layout(1, fmt16, &f);
	check_expand(&l, 0x9, 0, 0x1294);
}

/*
 * STEV over IPv6, wire fields { 16, 16 }: flow label low 16 bits, then the
 * UDP source port.
 *
 * Field 1: width 16, init 0x8207, mask 0x0F0A (bits 1,3,8,9,10,11; p1 = 6)
 *          fixed bits: 0x8207 & ~0x0F0A = 0x8005
 * Field 2: width 12, init 0x0F0, mask 0x813 (bits 0,1,4,11; p2 = 4)
 *          fixed bits: 0x0F0 & ~0x813 = 0x0E0
 * N = 10.
 *
 * compact 0x2D6 = 10 1101 0110 (10 bits):
 *   field 1 takes bits 9..4 = 101101 (0x2D), field 2 bits 3..0 = 0110.
 *   field 1: pdep(0b101101, 0x0F0A) = 0xB02 (see test_pdep);
 *            value 0x8005 | 0xB02 = 0x8B07
 *   field 2: pdep(0b0110, 0x813) = 0x12; value 0x0E0 | 0x12 = 0x0F2
 *   wire: 0x8B07 << 16 | 0x00F2 = 0x8B0700F2
 * compact 0: 0x8005, 0x0E0 -> 0x800500E0
 * compact 0x3FF: 0x8005 | 0x0F0A = 0x8F0F, 0x0E0 | 0x813 = 0x8F3
 *   -> 0x8F0F08F3
 */
TEST_CASE(test_expand_stev_two_fields, "ev_profile.expand.stev_two_fields")
{
	static const uint8_t fmt[] = { 16, 16 };
	struct ev_field f[2] = {
		fld(16, 0x8207, 0, 0xFFFF, 0x0F0A),
		fld(12, 0x0F0, 0, 0xFFF, 0x813),
	};
	struct ev_layout l = layout(2, fmt, f);

	ASSERT_EQ(ev_layout_compact_bits(&l), 10, "compact bits");
	ASSERT_EQ(ev_layout_wire_bits(&l), 32, "wire bits");
	check_expand(&l, 0x2D6, 0, 0x8B0700F2);
	check_expand(&l, 0x000, 0, 0x800500E0);
	check_expand(&l, 0x3FF, 0, 0x8F0F08F3);
	check_expand(&l, 0x400, -EINVAL, 0);

	/*
	 * Uneven wire fields { 20, 12 }: field 1 is shifted by 12 instead.
	 * compact 0x2D6 -> 0x8B07 << 12 | 0x0F2 = 0x8B070F2.
	 */
	{
		static const uint8_t fmt2[] = { 20, 12 };
		struct ev_layout l2 = layout(2, fmt2, f);

		check_expand(&l2, 0x2D6, 0, 0x08B070F2);
	}
}

/*
 * min and max bound each field's counter bits (the digit the mask
 * receives), not its final value. The layout of the test above: field 1
 * takes the top 6 compact bits, field 2 the low 4; compact 0x2D6 gives
 * field 1 the digit 0x2D (value 0x8B07) and field 2 the digit 0x6.
 */
TEST_CASE(test_expand_min_max, "ev_profile.expand.min_max")
{
	static const uint8_t fmt[] = { 16, 16 };
	struct ev_field f[2] = {
		fld(16, 0x8207, 0, 0xFFFF, 0x0F0A),
		fld(12, 0x0F0, 0, 5, 0x813),	/* counter bits 0..5 */
	};
	struct ev_layout l = layout(2, fmt, f);

	check_expand(&l, 0x2D6, -ERANGE, 0);
	ASSERT_ERR_HAS("field 2: counter bits 0x6 outside [min 0x0, max 0x5]");
	/* compact 0x2D5: digit 5 deposits bits 0 and 4: 0x0E0 | 0x011 = 0x0F1. */
	check_expand(&l, 0x2D5, 0, 0x8B0700F1);
	/* compact 0x2D0: digit 0, field 2 = 0x0E0 (init's bits outside the mask). */
	check_expand(&l, 0x2D0, 0, 0x8B0700E0);

	/* min 1 refuses digit 0; digit 1 gives 0x0E1. */
	l.fields[1].max = 0xFFF;
	l.fields[1].min = 1;
	check_expand(&l, 0x2D0, -ERANGE, 0);
	check_expand(&l, 0x2D1, 0, 0x8B0700E1);

	/* Field 1's digit of 0x2D0 is 0x2D: max 0x2C refuses it, 0x2D takes it. */
	l.fields[1].min = 0;
	l.fields[0].max = 0x2C;
	check_expand(&l, 0x2D0, -ERANGE, 0);
	ASSERT_ERR_HAS("field 1: counter bits 0x2d outside");
	l.fields[0].max = 0x2D;
	check_expand(&l, 0x2D0, 0, 0x8B0700E0);
	/* A value-like max (0x8B07, the old meaning) bounds nothing here. */
	l.fields[0].max = 0x8B07;
	check_expand(&l, 0x3FF, 0, 0x8F0F08F3);
}

/*
 * The OCP reference generator's worked example: init 0x100, mask 0xff,
 * max 255 spans 0x100..0x1ff. Digit d deposits into bits 0..7, so the
 * value is 0x100 | d: d = 0 -> 0x100, d = 0x2A -> 0x12A, d = 255 ->
 * 0x1FF; 256 EVs in that order. With min 16 and max 31: 0x110..0x11F.
 * (Read as bounds of the value, max 255 would leave no EV at all.)
 */
TEST_CASE(test_reference_example, "ev_profile.generate.reference_example")
{
	struct ev_table_entry t[MRC_MAX_EVS];
	struct ev_field f = fld(16, 0x100, 0, 255, 0xFF);
	struct ev_profile p;
	unsigned int i, n;
	int ok = 1;

	ASSERT_EQ(ev_profile_init(&p, 3, EV_PROFILE_GENERATED, MRC_EVF_UDP, err,
				  sizeof(err)), 0, "init");
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), 0, "add field");
	ASSERT_EQ(ev_profile_set_counts(&p, 256, 128, err, sizeof(err)), 0, "counts");
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), 0, err);
	ASSERT_EQ(ev_profile_generate(&p, 1, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, err);
	ASSERT_EQ(n, 256, "256 EVs");
	for (i = 0; i < n && ok; i++)
		ok = ASSERT_EQ(t[i].ev, 0x100 + i, "EV i is 0x100 + i");
	ASSERT_EQ(t[0x2A].ev, 0x12A, "d = 0x2A");
	ASSERT_EQ(t[255].ev, 0x1FF, "last EV");

	ASSERT_EQ(ev_profile_clear_fields(&p, err, sizeof(err)), 0, "clear");
	f = fld(16, 0x100, 16, 31, 0xFF);
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), 0, "min 16 max 31");
	ASSERT_EQ(ev_profile_set_counts(&p, 16, 8, err, sizeof(err)), 0, "counts 16");
	ASSERT_EQ(ev_profile_generate(&p, 1, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, err);
	ASSERT_EQ(n, 16, "16 EVs");
	ASSERT_EQ(t[0].ev, 0x110, "first 0x110");
	ASSERT_EQ(t[15].ev, 0x11F, "last 0x11F");
}

/* ---- validation ------------------------------------------------------- */

static void check_field_err(struct ev_field f, const char *needle)
{
	int rc;

	err[0] = '\0';
	rc = ev_field_validate(&f, 2, err, sizeof(err));
	snprintf(what, sizeof(what), "field_validate rc for \"%s\"", needle);
	ASSERT_EQ(rc, -EINVAL, what);
	ASSERT_ERR_HAS(needle);
}

static void check_layout_err(const struct ev_layout *l, unsigned int max_bits,
			     int need_fields, const char *needle)
{
	int rc;

	err[0] = '\0';
	rc = ev_layout_validate(l, max_bits, need_fields, err, sizeof(err));
	snprintf(what, sizeof(what), "layout_validate rc for \"%s\"", needle);
	ASSERT_EQ(rc, -EINVAL, what);
	ASSERT_ERR_HAS(needle);
}

TEST_CASE(test_validate_field, "ev_profile.validate.field")
{
	struct ev_field ok = fld(8, 0x10, 0x10, 0xF0, 0x0F);

	ASSERT_EQ(ev_field_validate(&ok, 1, err, sizeof(err)), 0, "good field");
	ok = fld(32, 0, 0, UINT32_MAX, UINT32_MAX);
	ASSERT_EQ(ev_field_validate(&ok, 1, err, sizeof(err)), 0, "32-bit field");

	check_field_err(fld(0, 0, 0, 0, 0), "field 2: width 0 outside 1..32");
	check_field_err(fld(33, 0, 0, 0, 0), "field 2: width 33 outside 1..32");
	check_field_err(fld(8, 0, 0, 0xFF, 0x1ff0),
			"field 2: mask 0x1ff0 has bits above width 8");
	check_field_err(fld(8, 0, 0, 0xFF, 0x100),
			"mask 0x100 has bits above width 8");
	check_field_err(fld(8, 0x100, 0, 0xFF, 0xF),
			"field 2: init 0x100 does not fit in width 8");
	check_field_err(fld(8, 0, 0x100, 0x1FF, 0xF),
			"field 2: min 0x100 does not fit in width 8");
	check_field_err(fld(8, 0, 0, 0x100, 0xF),
			"field 2: max 0x100 does not fit in width 8");
	check_field_err(fld(8, 0, 5, 4, 0xF), "field 2: min 0x5 above max 0x4");

	/* Index 0: no prefix. */
	{
		struct ev_field f = fld(0, 0, 0, 0, 0);

		ev_field_validate(&f, 0, err, sizeof(err));
		ASSERT_EQ(strncmp(err, "width 0", 7), 0, "no field prefix");
	}
}

TEST_CASE(test_validate_layout, "ev_profile.validate.layout")
{
	static const uint8_t fmt1[] = { 16 }, fmt2[] = { 16, 16 },
			     fmt32x2[] = { 32, 32 }, fmt8[] = { 8 };
	struct ev_field f[2] = {
		fld(16, 0, 0, 0xFFFF, 0xFFFF),
		fld(16, 0, 0, 0xFFFF, 0x00FF),
	};
	struct ev_layout l;

	l = layout(1, fmt1, f);
	ASSERT_EQ(ev_layout_validate(&l, 16, 1, err, sizeof(err)), 0, "good UDP layout");
	l = layout(2, fmt2, f);
	ASSERT_EQ(ev_layout_validate(&l, 32, 1, err, sizeof(err)), 0, "good STEV layout");

	/* Wire fields. */
	l = layout(1, fmt1, f);
	l.n_fmt = 0;
	check_layout_err(&l, 32, 0, "0 wire fields, need 1..8");
	l.n_fmt = 9;
	check_layout_err(&l, 32, 0, "9 wire fields, need 1..8");
	l = layout(1, fmt1, f);
	l.fmt[0] = 0;
	check_layout_err(&l, 32, 0, "wire field 1: width 0 outside 1..32");
	l.fmt[0] = 33;
	check_layout_err(&l, 32, 0, "wire field 1: width 33 outside 1..32");
	/* Concatenated width: 32 bits is too much for UDP (16). */
	l = layout(2, fmt2, f);
	check_layout_err(&l, 16, 1,
			 "wire fields total 32 bits, more than the 16 the format carries");
	check_layout_err(&l, 16, 0, "wire fields total 32 bits");

	/* Fields. */
	l = layout(1, fmt1, f);
	l.n_fields = 0;
	check_layout_err(&l, 32, 1, "0 fields, need 1..8");
	ASSERT_EQ(ev_layout_validate(&l, 32, 0, err, sizeof(err)), 0,
		  "no fields needed for EXPLICIT");
	l = layout(2, fmt2, f);
	l.n_fields = 1;
	check_layout_err(&l, 32, 1, "1 fields for 2 wire fields");
	l = layout(2, fmt2, f);
	l.fields[1].mask = 0x1ff0;
	l.fields[1].width = 8;
	l.fields[1].max = 0xFF;
	check_layout_err(&l, 32, 1, "field 2: mask 0x1ff0 has bits above width 8");
	/* Masks taking 64 compact bits. */
	{
		struct ev_field big[2] = {
			fld(32, 0, 0, UINT32_MAX, UINT32_MAX),
			fld(32, 0, 0, UINT32_MAX, UINT32_MAX),
		};

		l = layout(2, fmt32x2, big);
		check_layout_err(&l, 64, 1,
				 "masks take 64 compact EV bits, more than 32");
		/* Exactly 32 is fine. */
		l.fields[1].mask = 0;
		l.fields[1].width = 1;
		l.fields[1].max = 1;
		l.fmt[1] = 1;
		ASSERT_EQ(ev_layout_validate(&l, 33, 1, err, sizeof(err)), 0,
			  "32 compact bits allowed");
	}
	/* A field wider than its wire field. */
	l = layout(1, fmt8, f);
	check_layout_err(&l, 32, 1,
			 "field 1: width 16 wider than its wire field (8 bits)");

	/* Expansion validates too. */
	{
		uint32_t w;

		l = layout(1, fmt8, f);
		ASSERT_EQ(ev_layout_expand(&l, 0, &w, err, sizeof(err)), -EINVAL,
			  "expand of a bad layout");
	}
}

TEST_CASE(test_validate_profile, "ev_profile.validate.profile")
{
	struct ev_profile p;
	struct ev_field f;
	int rc;

	/* Formats (SRv6: srv6.c). */
	rc = ev_profile_init(&p, 1, EV_PROFILE_GENERATED, 7, err, sizeof(err));
	ASSERT_EQ(rc, -EINVAL, "unknown format refused");
	ASSERT_ERR_HAS("unknown EV format 7");
	rc = ev_profile_init(&p, 1, (enum ev_profile_type)9, MRC_EVF_UDP, err, sizeof(err));
	ASSERT_EQ(rc, -EINVAL, "unknown type refused");
	ASSERT_ERR_HAS("unknown profile type 9");
	rc = ev_profile_init(&p, 1, EV_PROFILE_AUTO, MRC_EVF_STEV, err, sizeof(err));
	ASSERT_EQ(rc, -EINVAL, "AUTO + STEV refused");
	ASSERT_ERR_HAS("AUTO profiles use the UDP format");

	/* Defaults. */
	rc = ev_profile_init(&p, 5, EV_PROFILE_GENERATED, MRC_EVF_STEV, err, sizeof(err));
	ASSERT_EQ(rc, 0, "init STEV");
	ASSERT_EQ(p.id, 5, "id");
	ASSERT_EQ(p.state, EV_PROFILE_STATE_INIT, "initial state");
	ASSERT_EQ(p.ev_count, 256, "default ev_count");
	ASSERT_EQ(p.ev_min_active, 128, "default ev_min_active");
	ASSERT_EQ(p.layout.n_fmt, 2, "STEV wire fields");
	ASSERT_EQ(p.layout.fmt[0], 16, "STEV flow label bits");
	ASSERT_EQ(p.layout.fmt[1], 16, "STEV port bits");
	ASSERT_EQ(ev_format_bits(MRC_EVF_UDP), 16, "UDP bits");
	ASSERT_EQ(ev_format_bits(MRC_EVF_STEV), 32, "STEV bits");
	ASSERT_EQ(ev_format_bits(EV_FMT_SRV6), 32, "SRv6 bits");
	ASSERT_EQ(ev_format_bits(3), 0, "unknown format: 0 bits");

	/* A GENERATED profile without fields. */
	rc = ev_profile_validate(&p, err, sizeof(err));
	ASSERT_EQ(rc, -EINVAL, "no fields");
	ASSERT_ERR_HAS("0 fields, need 1..8");

	/* Counts. */
	ASSERT_EQ(ev_profile_set_counts(&p, 0, EV_MIN_ACTIVE_DEFAULT, err, sizeof(err)),
		  -EINVAL, "ev_count 0");
	ASSERT_ERR_HAS("ev_count 0 outside 1..256");
	ASSERT_EQ(ev_profile_set_counts(&p, 257, EV_MIN_ACTIVE_DEFAULT, err, sizeof(err)),
		  -EINVAL, "ev_count 257");
	ASSERT_EQ(ev_profile_set_counts(&p, 10, 11, err, sizeof(err)), -EINVAL,
		  "min_active > ev_count");
	ASSERT_ERR_HAS("ev_min_active 11 above ev_count 10");
	ASSERT_EQ(ev_profile_set_counts(&p, 101, EV_MIN_ACTIVE_DEFAULT, err, sizeof(err)),
		  0, "ev_count 101");
	ASSERT_EQ(p.ev_min_active, 50, "default min_active = 101 / 2");
	/* Values written directly are caught by validate. */
	p.ev_count = 300;
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -EINVAL, "ev_count 300");
	ASSERT_ERR_HAS("ev_count 300 outside 1..256");
	p.ev_count = 10;
	p.ev_min_active = 20;
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -EINVAL, "min_active 20");
	ASSERT_ERR_HAS("ev_min_active 20 above ev_count 10");
	p.format = 9;
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -EINVAL, "format 9 in validate");
	ASSERT_ERR_HAS("unknown EV format 9");
	ASSERT_EQ(ev_profile_set_format(&p, 9, err, sizeof(err)), -EINVAL,
		  "set_format 9");
	ASSERT_EQ(ev_profile_set_format(&p, MRC_EVF_UDP, err, sizeof(err)), 0,
		  "set_format UDP");
	ASSERT_EQ(p.layout.n_fmt, 1, "UDP wire fields");
	ASSERT_EQ(p.layout.fmt[0], 16, "UDP port bits");
	ASSERT_EQ(ev_profile_set_counts(&p, 16, 8, err, sizeof(err)), 0, "counts 16/8");

	/* Wire fields too wide for UDP. */
	{
		static const uint8_t w[] = { 16, 16 }, w9[9] = { 1 };

		ASSERT_EQ(ev_profile_set_fmt_fields(&p, w, 2, err, sizeof(err)),
			  -EINVAL, "16,16 on UDP");
		ASSERT_ERR_HAS("more than the 16 the format carries");
		ASSERT_EQ(ev_profile_set_fmt_fields(&p, w9, 9, err, sizeof(err)),
			  -EINVAL, "9 wire fields");
		ASSERT_EQ(ev_profile_set_fmt_fields(&p, w, 1, err, sizeof(err)),
			  0, "16 on UDP");
	}

	/* Fields: add_field validates on its own. */
	f = fld(16, 0, 0, 0xFFFF, 0x000F);
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), 0, "add field");
	f = fld(8, 0, 0, 0xFF, 0x1ff0);
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), -EINVAL,
		  "add bad field");
	ASSERT_ERR_HAS("field 2: mask 0x1ff0 has bits above width 8");
	ASSERT_EQ(p.layout.n_fields, 1, "bad field not added");
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), 0, "valid profile");

	/* 16 compact values, min_active 20: too few. */
	ASSERT_EQ(ev_profile_set_counts(&p, 32, 20, err, sizeof(err)), 0, "counts 32/20");
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -ENOSPC, "too few EVs");
	ASSERT_ERR_HAS("only 16 valid EVs, ev_min_active is 20");

	/* A field whose min is above every counter value its mask carries. */
	ASSERT_EQ(ev_profile_clear_fields(&p, err, sizeof(err)), 0, "clear fields");
	ASSERT_EQ(p.layout.n_fields, 0, "fields cleared");
	f = fld(16, 0x8000, 16, 0x7FFF, 0x000F);	/* 4 bits: 0..15 */
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), 0, "add field");
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -ENOSPC, "empty field");
	ASSERT_ERR_HAS("field 1: min 0x10 above the largest counter value its mask 0xf carries (0xf)");

	/* Eight fields at most. */
	ASSERT_EQ(ev_profile_clear_fields(&p, err, sizeof(err)), 0, "clear fields");
	{
		int i;

		f = fld(1, 0, 0, 1, 1);
		for (i = 0; i < 8; i++)
			ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), 0,
				  "add 1-bit field");
		ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), -ENOSPC,
			  "ninth field");
	}
}

/* ---- state machine ---------------------------------------------------- */

TEST_CASE(test_transitions, "ev_profile.state.transitions")
{
	static const struct {
		enum ev_profile_state from, to;
		int ok;
	} cases[] = {
		{ EV_PROFILE_STATE_INIT,    EV_PROFILE_STATE_OFFLINE, 1 },
		{ EV_PROFILE_STATE_OFFLINE, EV_PROFILE_STATE_ONLINE,  1 },
		{ EV_PROFILE_STATE_ONLINE,  EV_PROFILE_STATE_OFFLINE, 1 },
		{ EV_PROFILE_STATE_INIT,    EV_PROFILE_STATE_ONLINE,  0 },
		{ EV_PROFILE_STATE_INIT,    EV_PROFILE_STATE_INIT,    0 },
		{ EV_PROFILE_STATE_OFFLINE, EV_PROFILE_STATE_INIT,    0 },
		{ EV_PROFILE_STATE_OFFLINE, EV_PROFILE_STATE_OFFLINE, 0 },
		{ EV_PROFILE_STATE_ONLINE,  EV_PROFILE_STATE_INIT,    0 },
		{ EV_PROFILE_STATE_ONLINE,  EV_PROFILE_STATE_ONLINE,  0 },
	};
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		rc = ev_profile_check_transition(cases[i].from, cases[i].to,
						 err, sizeof(err));
		snprintf(what, sizeof(what), "%s -> %s",
			 ev_profile_state_name(cases[i].from),
			 ev_profile_state_name(cases[i].to));
		ASSERT_EQ(rc, cases[i].ok ? 0 : -EINVAL, what);
		if (!cases[i].ok)
			ASSERT_ERR_HAS("not allowed");
	}
	ASSERT_EQ(ev_profile_check_transition(EV_PROFILE_STATE_INIT,
					      (enum ev_profile_state)7,
					      err, sizeof(err)),
		  -EINVAL, "unknown state");
	ASSERT_ERR_HAS("unknown profile state 7");
	ev_profile_check_transition(EV_PROFILE_STATE_INIT, EV_PROFILE_STATE_ONLINE,
				    err, sizeof(err));
	ASSERT_ERR_HAS("INIT -> ONLINE not allowed");
}

TEST_CASE(test_set_state, "ev_profile.state.set_state")
{
	struct ev_profile p;
	struct ev_field f = fld(16, 0, 0, 0xFFFF, 0xFFFF);

	ev_profile_init(&p, 3, EV_PROFILE_GENERATED, MRC_EVF_UDP, err, sizeof(err));
	ASSERT_EQ(ev_profile_set_state(&p, EV_PROFILE_STATE_ONLINE, err, sizeof(err)),
		  -EINVAL, "INIT -> ONLINE");
	ASSERT_EQ(p.state, EV_PROFILE_STATE_INIT, "still INIT");
	ASSERT_EQ(ev_profile_set_state(&p, EV_PROFILE_STATE_OFFLINE, err, sizeof(err)),
		  0, "INIT -> OFFLINE");
	/* No fields yet: ONLINE refused by validation, state unchanged. */
	ASSERT_EQ(ev_profile_set_state(&p, EV_PROFILE_STATE_ONLINE, err, sizeof(err)),
		  -EINVAL, "OFFLINE -> ONLINE without fields");
	ASSERT_ERR_HAS("0 fields");
	ASSERT_EQ(p.state, EV_PROFILE_STATE_OFFLINE, "still OFFLINE");
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), 0, "add field OFFLINE");
	ASSERT_EQ(ev_profile_set_state(&p, EV_PROFILE_STATE_ONLINE, err, sizeof(err)),
		  0, "OFFLINE -> ONLINE");
	ASSERT_EQ(p.state, EV_PROFILE_STATE_ONLINE, "ONLINE");
	ASSERT_EQ(ev_profile_set_state(&p, EV_PROFILE_STATE_OFFLINE, err, sizeof(err)),
		  0, "ONLINE -> OFFLINE");
	ASSERT_EQ(ev_profile_set_state(&p, EV_PROFILE_STATE_INIT, err, sizeof(err)),
		  -EINVAL, "OFFLINE -> INIT");
}

TEST_CASE(test_edits_refused_online, "ev_profile.state.edits_refused_online")
{
	static const uint8_t w[] = { 16 };
	struct ev_field f = fld(16, 0, 0, 0xFFFF, 0xFFFF);
	struct ev_profile g, e;

	ev_profile_init(&g, 1, EV_PROFILE_GENERATED, MRC_EVF_UDP, err, sizeof(err));
	ev_profile_init(&e, 2, EV_PROFILE_EXPLICIT, MRC_EVF_UDP, err, sizeof(err));
	/* Edits work in INIT... */
	ASSERT_EQ(ev_profile_add_field(&g, &f, err, sizeof(err)), 0, "add field INIT");
	ASSERT_EQ(ev_profile_set_counts(&e, 2, 1, err, sizeof(err)), 0, "counts INIT");
	ASSERT_EQ(ev_profile_add_explicit(&e, 0x1111, 1, err, sizeof(err)), 0,
		  "add explicit INIT");
	ASSERT_EQ(ev_profile_set_state(&g, EV_PROFILE_STATE_OFFLINE, err, sizeof(err)), 0,
		  "g OFFLINE");
	ASSERT_EQ(ev_profile_set_state(&e, EV_PROFILE_STATE_OFFLINE, err, sizeof(err)), 0,
		  "e OFFLINE");
	/* ... and in OFFLINE. */
	ASSERT_EQ(ev_profile_add_explicit(&e, 0x2222, 0, err, sizeof(err)), 0,
		  "add explicit OFFLINE");
	ASSERT_EQ(ev_profile_set_state(&g, EV_PROFILE_STATE_ONLINE, err, sizeof(err)), 0,
		  "g ONLINE");
	ASSERT_EQ(ev_profile_set_state(&e, EV_PROFILE_STATE_ONLINE, err, sizeof(err)), 0,
		  "e ONLINE");

	ASSERT_EQ(ev_profile_add_field(&g, &f, err, sizeof(err)), -EBUSY, "add_field ONLINE");
	ASSERT_ERR_HAS("profile 1 is ONLINE");
	ASSERT_EQ(ev_profile_clear_fields(&g, err, sizeof(err)), -EBUSY, "clear_fields ONLINE");
	ASSERT_EQ(ev_profile_set_format(&g, MRC_EVF_STEV, err, sizeof(err)), -EBUSY,
		  "set_format ONLINE");
	ASSERT_EQ(ev_profile_set_fmt_fields(&g, w, 1, err, sizeof(err)), -EBUSY,
		  "set_fmt_fields ONLINE");
	ASSERT_EQ(ev_profile_set_counts(&g, 8, 4, err, sizeof(err)), -EBUSY,
		  "set_counts ONLINE");
	ASSERT_EQ(ev_profile_add_explicit(&e, 0x3333, 0, err, sizeof(err)), -EBUSY,
		  "add_explicit ONLINE");
	ASSERT_EQ(ev_profile_clear_explicit(&e, err, sizeof(err)), -EBUSY,
		  "clear_explicit ONLINE");
	ASSERT_EQ(g.layout.n_fields, 1, "fields untouched");
	ASSERT_EQ(g.format, MRC_EVF_UDP, "format untouched");
	ASSERT_EQ(g.ev_count, 256, "ev_count untouched");
	ASSERT_EQ(e.n_explicit, 2, "list untouched");
	/* The event mask may change while ONLINE. */
	ASSERT_EQ(ev_profile_set_event_mask(&g, 0x5), 0, "event mask ONLINE");
	ASSERT_EQ(g.event_mask, 0x5, "event mask set");

	/* Back OFFLINE: editable again. */
	ASSERT_EQ(ev_profile_set_state(&e, EV_PROFILE_STATE_OFFLINE, err, sizeof(err)), 0,
		  "e OFFLINE again");
	ASSERT_EQ(ev_profile_clear_explicit(&e, err, sizeof(err)), 0, "clear OFFLINE");
	ASSERT_EQ(e.n_explicit, 0, "list cleared");
}

/* ---- generation ------------------------------------------------------- */

/* Valid compact values of a layout in order, the slow way: try them all. */
static unsigned int brute_force(const struct ev_layout *l, uint32_t *evs,
				unsigned int max)
{
	unsigned int bits = ev_layout_compact_bits(l), n = 0;
	uint64_t c, end = 1ull << bits;
	uint32_t w;

	for (c = 0; c < end && n < max; c++)
		if (!ev_layout_expand(l, (uint32_t)c, &w, NULL, 0))
			evs[n++] = w;
	return n;
}

/*
 * Check a table: n entries, entry i on plane (i % planes) + 1 with the
 * i-th valid expansion, plane counts, distinct EVs per plane.
 */
static void check_table(const struct ev_table_entry *t, unsigned int n,
			const uint32_t *want, unsigned int planes,
			const char *name)
{
	unsigned int i, j, cnt[EV_MAX_PLANES + 1] = { 0 };
	int ok = 1;

	for (i = 0; i < n && ok; i++) {
		snprintf(what, sizeof(what), "%s: entry %u plane", name, i);
		ok &= ASSERT_EQ(t[i].plane, i % planes + 1, what);
		snprintf(what, sizeof(what), "%s: entry %u ev", name, i);
		ok &= ASSERT_EQ(t[i].ev, want[i], what);
		cnt[t[i].plane]++;
	}
	for (j = 1; j <= planes; j++) {
		snprintf(what, sizeof(what), "%s: plane %u count", name, j);
		ASSERT_EQ(cnt[j], n / planes + (j <= n % planes), what);
	}
	for (i = 0; i < n && ok; i++)
		for (j = i + 1; j < n; j++)
			if (t[i].plane == t[j].plane && t[i].ev == t[j].ev) {
				snprintf(what, sizeof(what),
					 "%s: entries %u and %u differ", name, i, j);
				ok = ASSERT_TRUE(0, what);
				break;
			}
}

TEST_CASE(test_generate_planes, "ev_profile.generate.planes")
{
	/*
	 * UDP, init 0x1000, mask 0x0F0F (N = 8), counter bits min 16, max
	 * 255. value(d) = 0x1000 | (d >> 4) << 8 | (d & 0xF). d = 16 gives
	 * 0x1100, d = 255 gives 0x1F0F. So 240 valid values, the first ones
	 * 0x1100, 0x1101, ..., 0x110F, 0x1200 (d = 32), ...
	 */
	static const unsigned int planes[] = { 1, 3, 4, 8 };
	struct ev_table_entry t[MRC_MAX_EVS];
	struct ev_field f = fld(16, 0x1000, 16, 255, 0x0F0F);
	uint32_t want[MRC_MAX_EVS];
	struct ev_profile p;
	unsigned int i, n, nw;
	int rc;

	ev_profile_init(&p, 1, EV_PROFILE_GENERATED, MRC_EVF_UDP, err, sizeof(err));
	ev_profile_add_field(&p, &f, err, sizeof(err));
	nw = brute_force(&p.layout, want, MRC_MAX_EVS);
	ASSERT_EQ(nw, 240, "brute force: 240 valid values");
	ASSERT_EQ(want[0], 0x1100, "first valid EV");
	ASSERT_EQ(want[15], 0x110F, "16th valid EV");
	ASSERT_EQ(want[16], 0x1200, "17th valid EV");
	ASSERT_EQ(want[239], 0x1F0F, "last valid EV");

	ev_profile_set_counts(&p, 100, EV_MIN_ACTIVE_DEFAULT, err, sizeof(err));
	for (i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "%u planes", planes[i]);
		rc = ev_profile_generate(&p, planes[i], 0, t, MRC_MAX_EVS, &n,
					 err, sizeof(err));
		snprintf(what, sizeof(what), "%s: rc (%s)", name, err);
		ASSERT_EQ(rc, 0, what);
		snprintf(what, sizeof(what), "%s: entries", name);
		ASSERT_EQ(n, 100, what);
		check_table(t, n, want, planes[i], name);
	}
	/* Hand-written spot checks: 3 planes give 34, 33, 33. */
	ev_profile_generate(&p, 3, 0, t, MRC_MAX_EVS, &n, err, sizeof(err));
	ASSERT_EQ(t[0].ev, 0x1100, "3 planes: entry 0");
	ASSERT_EQ(t[0].plane, 1, "3 planes: entry 0 plane");
	ASSERT_EQ(t[4].plane, 2, "3 planes: entry 4 plane");
	ASSERT_EQ(t[16].ev, 0x1200, "3 planes: entry 16");
	ASSERT_EQ(t[16].plane, 2, "3 planes: entry 16 plane");
	ASSERT_EQ(t[99].plane, 1, "3 planes: entry 99 plane (the 34th of plane 1)");

	/* ev_count above the 240 valid: the table stops at 240. */
	ev_profile_set_counts(&p, 256, 200, err, sizeof(err));
	rc = ev_profile_generate(&p, 8, 0, t, MRC_MAX_EVS, &n, err, sizeof(err));
	ASSERT_EQ(rc, 0, "ev_count 256, 240 valid");
	ASSERT_EQ(n, 240, "240 entries");
	check_table(t, n, want, 8, "240 on 8 planes");

	/* Bad plane counts and a short buffer. */
	ASSERT_EQ(ev_profile_generate(&p, 0, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -EINVAL, "0 planes");
	ASSERT_EQ(ev_profile_generate(&p, 9, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -EINVAL, "9 planes");
	ASSERT_EQ(ev_profile_generate(&p, 8, 0, t, 100, &n, err, sizeof(err)),
		  -ENOSPC, "cap 100 < 240");
}

/*
 * Two STEV fields with ranges that cut both the start and the end of
 * each field's digits, so valid compact values are not one block: the
 * table must equal the brute-force walk of c = 0, 1, 2, ...
 *
 * Field 1: width 16, init 0x4000, mask 0x0330 (4 bits), counter bits
 *          min 5, max 14. Digits d: value 0x4000 | pdep(d, 0x330).
 *          d=5 (bits 0,2 -> mask bits 4,8) -> 0x4110, d=14 -> 0x4320.
 *          Valid d: 5..14 (10 values).
 * Field 2: width 16, init 0, mask 0x00A5 (bits 0,2,5,7; 4 bits),
 *          min 2, max 12. d=2 (bit 1 -> mask bit 2) -> 0x04, d=12
 *          (bits 2,3) -> 0x20|0x80 = 0xA0. Valid d: 2..12 (11 values).
 * Valid EVs: 10 * 11 = 110. First: field 1 d=5 (0x4110), field 2 d=2
 * (0x0004): 0x41100004. 12th: field 1 d=6 (0x4120), field 2 d=2:
 * 0x41200004.
 */
TEST_CASE(test_generate_stev_sparse, "ev_profile.generate.stev_sparse")
{
	static const uint8_t w[] = { 16, 16 };
	struct ev_field f1 = fld(16, 0x4000, 5, 14, 0x0330);
	struct ev_field f2 = fld(16, 0, 2, 12, 0x00A5);
	struct ev_table_entry t[MRC_MAX_EVS];
	uint32_t want[MRC_MAX_EVS];
	struct ev_profile p;
	unsigned int n, nw;
	int rc;

	ev_profile_init(&p, 2, EV_PROFILE_GENERATED, MRC_EVF_STEV, err, sizeof(err));
	ASSERT_EQ(ev_profile_set_fmt_fields(&p, w, 2, err, sizeof(err)), 0, "fmt 16,16");
	ev_profile_add_field(&p, &f1, err, sizeof(err));
	ev_profile_add_field(&p, &f2, err, sizeof(err));
	nw = brute_force(&p.layout, want, MRC_MAX_EVS);
	ASSERT_EQ(nw, 110, "brute force: 110 valid");
	ASSERT_EQ(want[0], 0x41100004, "first valid");
	ASSERT_EQ(want[11], 0x41200004, "12th valid");

	ev_profile_set_counts(&p, 256, 50, err, sizeof(err));
	rc = ev_profile_generate(&p, 4, 0, t, MRC_MAX_EVS, &n, err, sizeof(err));
	snprintf(what, sizeof(what), "generate rc (%s)", err);
	ASSERT_EQ(rc, 0, what);
	ASSERT_EQ(n, 110, "110 entries");
	check_table(t, n, want, 4, "stev sparse");
	ASSERT_EQ(t[0].ev, 0x41100004, "entry 0");
	ASSERT_EQ(t[11].ev, 0x41200004, "entry 11");
	ASSERT_EQ(t[11].plane, 4, "entry 11 plane");

	/* Fewer valid than ev_min_active: refused. */
	ev_profile_set_counts(&p, 256, 111, err, sizeof(err));
	ASSERT_EQ(ev_profile_generate(&p, 4, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -ENOSPC, "110 valid < min_active 111");
	ASSERT_ERR_HAS("only 110 valid EVs");
	ASSERT_EQ(n, 0, "no entries on error");
}

/*
 * A 32-bit field with only its top 256 values valid: the walk must not
 * visit the 2^32 - 256 invalid ones one by one (this test would take
 * many seconds if it did). EVs are 0xFFFFFF00 ... 0xFFFFFFFF.
 */
TEST_CASE(test_generate_large_space, "ev_profile.generate.large_space")
{
	static const uint8_t w[] = { 32 };
	struct ev_field f = fld(32, 0, 0xFFFFFF00, UINT32_MAX, UINT32_MAX);
	struct ev_table_entry t[MRC_MAX_EVS];
	struct ev_profile p;
	unsigned int i, n;
	int ok = 1;

	ev_profile_init(&p, 4, EV_PROFILE_GENERATED, MRC_EVF_STEV, err, sizeof(err));
	ASSERT_EQ(ev_profile_set_fmt_fields(&p, w, 1, err, sizeof(err)), 0, "fmt 32");
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), 0, "32-bit field");
	ASSERT_EQ(ev_profile_generate(&p, 2, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, "generate");
	ASSERT_EQ(n, 256, "256 entries");
	for (i = 0; i < n && ok; i++)
		ok = ASSERT_EQ(t[i].ev, 0xFFFFFF00u + i, "EV i");
}

TEST_CASE(test_generate_exhausted, "ev_profile.generate.exhausted")
{
	/* Mask 0x000F: 16 compact values, all valid, ev_count 32. */
	struct ev_field f = fld(16, 0x5000, 0, 0xFFFF, 0x000F);
	struct ev_table_entry t[MRC_MAX_EVS];
	struct ev_profile p;
	unsigned int n;

	ev_profile_init(&p, 1, EV_PROFILE_GENERATED, MRC_EVF_UDP, err, sizeof(err));
	ev_profile_add_field(&p, &f, err, sizeof(err));
	ev_profile_set_counts(&p, 32, 8, err, sizeof(err));
	ASSERT_EQ(ev_profile_generate(&p, 2, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, "16 of 32");
	ASSERT_EQ(n, 16, "space exhausted at 16");
	ASSERT_EQ(t[15].ev, 0x500F, "last EV");
	ev_profile_set_counts(&p, 32, 17, err, sizeof(err));
	ASSERT_EQ(ev_profile_generate(&p, 2, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -ENOSPC, "16 < min_active 17");
}

TEST_CASE(test_generate_backups, "ev_profile.generate.backups")
{
	/*
	 * 10 EVs on 4 planes: planes 1, 2 get 3 (entries 0,4,8 and 1,5,9),
	 * planes 3, 4 get 2 (2,6 and 3,7). One backup per plane: entries
	 * 8, 9, 6, 7 are backups; 6 active.
	 */
	static const int active[10] = { 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 };
	struct ev_field f = fld(16, 0, 0, 0xFFFF, 0x00FF);
	struct ev_table_entry t[MRC_MAX_EVS];
	struct ev_profile p;
	unsigned int i, n;

	ev_profile_init(&p, 1, EV_PROFILE_GENERATED, MRC_EVF_UDP, err, sizeof(err));
	ev_profile_add_field(&p, &f, err, sizeof(err));
	ev_profile_set_counts(&p, 10, 6, err, sizeof(err));
	ASSERT_EQ(ev_profile_generate(&p, 4, 1, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, "1 backup per plane");
	ASSERT_EQ(n, 10, "10 entries");
	for (i = 0; i < 10; i++) {
		snprintf(what, sizeof(what), "entry %u active", i);
		ASSERT_EQ(t[i].active, active[i], what);
		snprintf(what, sizeof(what), "entry %u ev", i);
		ASSERT_EQ(t[i].ev, i, what);
	}
	/* No backups: all active. */
	ev_profile_generate(&p, 4, 0, t, MRC_MAX_EVS, &n, err, sizeof(err));
	for (i = 0; i < n; i++)
		if (!ASSERT_EQ(t[i].active, 1, "all active without backups"))
			break;
	/* 7 must stay active but only 6 are. */
	ev_profile_set_counts(&p, 10, 7, err, sizeof(err));
	ASSERT_EQ(ev_profile_generate(&p, 4, 1, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -EINVAL, "active below min_active");
	ASSERT_ERR_HAS("6 active EVs");
	/* Two backups leave planes 3 and 4 with none active. */
	ev_profile_set_counts(&p, 10, 0, err, sizeof(err));
	ASSERT_EQ(ev_profile_generate(&p, 4, 2, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -EINVAL, "a plane with only backups");
	ASSERT_ERR_HAS("plane 3 has 2 EVs");
}

TEST_CASE(test_explicit, "ev_profile.generate.explicit")
{
	struct ev_table_entry t[MRC_MAX_EVS];
	struct ev_profile p, g;
	struct ev_field f = fld(16, 0, 0, 0xFFFF, 0xFFFF);
	unsigned int n;

	ev_profile_init(&p, 9, EV_PROFILE_EXPLICIT, MRC_EVF_UDP, err, sizeof(err));
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x1000, 1, err, sizeof(err)), 0, "add 1");
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x1001, 2, err, sizeof(err)), 0, "add 2");
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x1002, 0, err, sizeof(err)), 0, "add 3");
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x1003, 0, err, sizeof(err)), 0, "add 4");
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x1004, 2, err, sizeof(err)), 0, "add 5");
	/* Refusals. */
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x1000, 1, err, sizeof(err)), -EEXIST,
		  "duplicate (ev, plane)");
	ASSERT_ERR_HAS("listed already");
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x10000, 1, err, sizeof(err)), -EINVAL,
		  "17-bit EV on UDP");
	ASSERT_ERR_HAS("EV 0x10000 wider than 16 bits");
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x1005, 9, err, sizeof(err)), -EINVAL,
		  "plane 9");
	ASSERT_ERR_HAS("plane 9 outside 0..8");
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), -EINVAL,
		  "fields on EXPLICIT");
	ASSERT_ERR_HAS("fields belong to GENERATED");
	ASSERT_EQ(p.n_explicit, 5, "5 entries");

	/* Default min_active (128) is more than 5 entries. */
	ASSERT_EQ(ev_profile_generate(&p, 2, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -ENOSPC, "5 < min_active 128");
	ASSERT_ERR_HAS("only 5 explicit EVs");

	/*
	 * 2 planes, planes as listed; plane-0 entries spread by table index:
	 * entry 2 -> (2 % 2) + 1 = 1, entry 3 -> 2.
	 */
	ev_profile_set_counts(&p, 256, 2, err, sizeof(err));
	ASSERT_EQ(ev_profile_generate(&p, 2, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, "explicit on 2 planes");
	ASSERT_EQ(n, 5, "5 entries");
	ASSERT_EQ(t[0].ev, 0x1000, "entry 0 ev");
	ASSERT_EQ(t[0].plane, 1, "entry 0 plane");
	ASSERT_EQ(t[1].plane, 2, "entry 1 plane");
	ASSERT_EQ(t[2].ev, 0x1002, "entry 2 ev");
	ASSERT_EQ(t[2].plane, 1, "entry 2 spread to plane 1");
	ASSERT_EQ(t[3].plane, 2, "entry 3 spread to plane 2");
	ASSERT_EQ(t[4].plane, 2, "entry 4 plane");
	/* Plane 2 holds entries 1, 3, 4: with 1 backup, entry 4 is backup. */
	ASSERT_EQ(ev_profile_generate(&p, 2, 1, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, "explicit with backups");
	ASSERT_EQ(t[3].active, 1, "entry 3 active");
	ASSERT_EQ(t[4].active, 0, "entry 4 backup");
	ASSERT_EQ(t[2].active, 0, "entry 2 backup (plane 1: 0, 2)");
	ASSERT_EQ(t[0].active, 1, "entry 0 active");

	/* ev_count 3 takes the first 3. */
	ev_profile_set_counts(&p, 3, 1, err, sizeof(err));
	ev_profile_generate(&p, 4, 0, t, MRC_MAX_EVS, &n, err, sizeof(err));
	ASSERT_EQ(n, 3, "ev_count 3");
	ASSERT_EQ(t[2].plane, 3, "entry 2 spread to plane 3 of 4");

	/* One plane: entry 1 wants plane 2. */
	ASSERT_EQ(ev_profile_generate(&p, 1, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -EINVAL, "plane 2 on a 1-plane QP");
	ASSERT_ERR_HAS("plane 2 but the QP has 1 planes");

	/* Spreading puts the same EV twice on plane 1. */
	ev_profile_clear_explicit(&p, err, sizeof(err));
	ev_profile_set_counts(&p, 2, 1, err, sizeof(err));
	ev_profile_add_explicit(&p, 0x2000, 1, err, sizeof(err));
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x2000, 0, err, sizeof(err)), 0,
		  "same EV, plane 0");
	ASSERT_EQ(ev_profile_generate(&p, 1, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -EINVAL, "spread collision");
	ASSERT_ERR_HAS("lands on plane 1 twice");
	ASSERT_EQ(ev_profile_generate(&p, 2, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, "no collision on 2 planes");

	/* STEV takes 32-bit EVs. */
	ev_profile_init(&p, 9, EV_PROFILE_EXPLICIT, MRC_EVF_STEV, err, sizeof(err));
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x0001C35A, 1, err, sizeof(err)), 0,
		  "32-bit EV on STEV");

	/* Lists belong to EXPLICIT profiles. */
	ev_profile_init(&g, 1, EV_PROFILE_GENERATED, MRC_EVF_UDP, err, sizeof(err));
	ASSERT_EQ(ev_profile_add_explicit(&g, 1, 1, err, sizeof(err)), -EINVAL,
		  "list on GENERATED");
	ASSERT_ERR_HAS("EV lists belong to EXPLICIT");
}

TEST_CASE(test_auto, "ev_profile.generate.auto")
{
	struct ev_table_entry t[MRC_MAX_EVS];
	struct ev_field f = fld(16, 0, 0, 0xFFFF, 0xFFFF);
	struct ev_layout l;
	struct ev_profile p;
	unsigned int i, n;
	int ok = 1;

	ev_profile_auto_layout(&l);
	ASSERT_EQ(ev_layout_compact_bits(&l), 14, "AUTO: 14 compact bits");
	check_expand(&l, 0, 0, 0xC000);
	check_expand(&l, 0x3FFF, 0, 0xFFFF);
	check_expand(&l, 0x4000, -EINVAL, 0);

	ASSERT_EQ(ev_profile_init(&p, 7, EV_PROFILE_AUTO, MRC_EVF_UDP, err, sizeof(err)),
		  0, "AUTO init");
	ASSERT_EQ(ev_profile_add_field(&p, &f, err, sizeof(err)), -EINVAL,
		  "AUTO fields built in");
	ASSERT_ERR_HAS("is AUTO");
	ASSERT_EQ(ev_profile_set_format(&p, MRC_EVF_STEV, err, sizeof(err)), -EINVAL,
		  "AUTO format built in");
	ASSERT_EQ(ev_profile_generate(&p, 8, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, "AUTO on 8 planes");
	ASSERT_EQ(n, 256, "AUTO: 256 entries");
	/* Entry i: port 0xC000 + i on plane (i % 8) + 1, all active. */
	for (i = 0; i < n && ok; i++) {
		ok &= ASSERT_EQ(t[i].ev, 0xC000 + i, "AUTO ev");
		ok &= ASSERT_EQ(t[i].plane, i % 8 + 1, "AUTO plane");
		ok &= ASSERT_EQ(t[i].active, 1, "AUTO active");
	}
	/* Stored fields are ignored: AUTO always uses the built-in layout. */
	p.layout.fields[0].init = 0;
	ev_profile_generate(&p, 8, 0, t, MRC_MAX_EVS, &n, err, sizeof(err));
	ASSERT_EQ(t[0].ev, 0xC000, "AUTO ignores stored fields");
	/* 2 planes of 128 EVs with 64 backups each: 128 active of 256. */
	ASSERT_EQ(ev_profile_generate(&p, 2, 64, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  0, "AUTO 2 planes, 64 backups each");
	ASSERT_EQ(t[127].active, 1, "entry 127 active (64th of plane 2)");
	ASSERT_EQ(t[128].active, 0, "entry 128 backup (65th of plane 1)");
	ASSERT_EQ(ev_profile_generate(&p, 2, 65, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -EINVAL, "126 active < 128");
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	return TEST_EXIT();
}

