// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of user/common/ev_profile.c, part two: the mrcctl-style
 * syntax of wire fields and field specs, and the UDP GSO burst through
 * the pinned profile record.
 */
#include "ev_profile_test.h"

/* ---- command-line syntax ---------------------------------------------- */

static void check_fmt(const char *s, int want_rc, unsigned int want_n,
		      const uint8_t *want, const char *needle)
{
	uint8_t w[EV_MAX_FIELDS] = { 0 };
	unsigned int n = 99, i;
	int rc;

	err[0] = '\0';
	rc = ev_parse_fmt_fields(s, w, EV_MAX_FIELDS, &n, err, sizeof(err));
	snprintf(what, sizeof(what), "parse_fmt_fields(\"%s\") rc (%s)", s, err);
	if (!ASSERT_EQ(rc, want_rc, what))
		return;
	if (want_rc) {
		ASSERT_ERR_HAS(needle);
		return;
	}
	snprintf(what, sizeof(what), "parse_fmt_fields(\"%s\") n", s);
	ASSERT_EQ(n, want_n, what);
	for (i = 0; i < want_n; i++) {
		snprintf(what, sizeof(what), "parse_fmt_fields(\"%s\")[%u]", s, i);
		ASSERT_EQ(w[i], want[i], what);
	}
}

TEST_CASE(test_parse_fmt_fields, "ev_profile.parse.fmt_fields")
{
	static const uint8_t w16_16[] = { 16, 16 }, w16[] = { 16 },
			     w16_8_8[] = { 16, 8, 8 }, w32[] = { 32 },
			     w8x4[] = { 4, 4, 4, 4, 4, 4, 4, 4 };
	uint8_t w[EV_MAX_FIELDS];
	unsigned int n;

	check_fmt("16,16", 0, 2, w16_16, NULL);
	check_fmt("16", 0, 1, w16, NULL);
	check_fmt("0x10,8,8", 0, 3, w16_8_8, NULL);
	check_fmt("32", 0, 1, w32, NULL);
	check_fmt("4,4,4,4,4,4,4,4", 0, 8, w8x4, NULL);

	check_fmt("", -EINVAL, 0, NULL, "empty");
	check_fmt("16,,16", -EINVAL, 0, NULL, "empty width at item 2");
	check_fmt("16,", -EINVAL, 0, NULL, "empty width at item 2");
	check_fmt(",16", -EINVAL, 0, NULL, "empty width at item 1");
	check_fmt("abc", -EINVAL, 0, NULL, "item 1 is not a number");
	check_fmt("16,x", -EINVAL, 0, NULL, "item 2 is not a number");
	check_fmt("-1", -EINVAL, 0, NULL, "not a number");
	check_fmt("16 ", -EINVAL, 0, NULL, "not a number");
	check_fmt("0", -EINVAL, 0, NULL, "width 0 outside 1..32");
	check_fmt("33", -EINVAL, 0, NULL, "width 33 outside 1..32");
	check_fmt("16,16,1", -EINVAL, 0, NULL, "total 33 bits, more than 32");
	check_fmt("1,1,1,1,1,1,1,1,1", -EINVAL, 0, NULL, "more than 8 wire fields");
	/* A caller may allow fewer. */
	ASSERT_EQ(ev_parse_fmt_fields("8,8,8", w, 2, &n, err, sizeof(err)), -EINVAL,
		  "3 items, max 2");
	ASSERT_ERR_HAS("more than 2 wire fields");
}

static void check_spec(const char *s, int want_rc, struct ev_field want,
		       const char *needle)
{
	struct ev_field f = fld(99, 99, 99, 99, 99);
	int rc;

	err[0] = '\0';
	rc = ev_parse_field_spec(s, &f, err, sizeof(err));
	snprintf(what, sizeof(what), "parse_field_spec(\"%s\") rc (%s)", s, err);
	if (!ASSERT_EQ(rc, want_rc, what))
		return;
	if (want_rc) {
		ASSERT_ERR_HAS(needle);
		ASSERT_EQ(f.width, 99, "field untouched on error");
		return;
	}
	snprintf(what, sizeof(what), "\"%s\" width", s);
	ASSERT_EQ(f.width, want.width, what);
	snprintf(what, sizeof(what), "\"%s\" init", s);
	ASSERT_EQ(f.init, want.init, what);
	snprintf(what, sizeof(what), "\"%s\" min", s);
	ASSERT_EQ(f.min, want.min, what);
	snprintf(what, sizeof(what), "\"%s\" max", s);
	ASSERT_EQ(f.max, want.max, what);
	snprintf(what, sizeof(what), "\"%s\" mask", s);
	ASSERT_EQ(f.mask, want.mask, what);
}

TEST_CASE(test_parse_field_spec, "ev_profile.parse.field_spec")
{
	struct ev_field none = { 0 };

	check_spec("width=16,init=0x0,min=0,max=0xffff,mask=0xffff", 0,
		   fld(16, 0, 0, 0xFFFF, 0xFFFF), NULL);
	check_spec("mask=0x3fff,max=0xffff,init=0xc000,min=0xC000,width=16", 0,
		   fld(16, 0xC000, 0xC000, 0xFFFF, 0x3FFF), NULL);
	check_spec("width=12,init=2748,mask=15", 0, fld(12, 0xABC, 0, 0xFFF, 0xF), NULL);
	/* Defaults: init = min = 0, max = mask = all ones in width. */
	check_spec("width=8", 0, fld(8, 0, 0, 0xFF, 0xFF), NULL);
	check_spec("width=32", 0, fld(32, 0, 0, UINT32_MAX, UINT32_MAX), NULL);
	check_spec("width=16,mask=0", 0, fld(16, 0, 0, 0xFFFF, 0), NULL);

	check_spec("", -EINVAL, none, "empty field spec");
	check_spec("init=0,mask=0xff", -EINVAL, none, "missing width");
	check_spec("width=16,widht=3", -EINVAL, none, "unknown key \"widht\"");
	check_spec("width=16,width=8", -EINVAL, none, "key \"width\" given twice");
	check_spec("width", -EINVAL, none, "expected key=value");
	check_spec("width=", -EINVAL, none, "expected key=value");
	check_spec("=16", -EINVAL, none, "expected key=value");
	check_spec("width=16,,mask=1", -EINVAL, none, "empty item");
	check_spec("width=16,", -EINVAL, none, "empty item");
	check_spec("width=0x", -EINVAL, none, "width=0x: not a number");
	check_spec("width=16,mask=ff", -EINVAL, none, "mask=ff: not a number");
	check_spec("width=16,init=0x100000000", -EINVAL, none,
		   "init=0x100000000 does not fit in 32 bits");
	check_spec("width=8,mask=0x1ff0", -EINVAL, none,
		   "mask 0x1ff0 has bits above width 8");
	check_spec("width=16,min=5,max=4", -EINVAL, none, "min 0x5 above max 0x4");
	check_spec("width=8,init=0x100", -EINVAL, none, "init 0x100 does not fit in width 8");
	check_spec("width=40", -EINVAL, none, "width 40 outside 1..32");
	check_spec("width=0", -EINVAL, none, "width 0 outside 1..32");

	/* End to end: parse two fields and expand, as mrcctl ev expand will. */
	{
		struct ev_layout l;
		uint32_t wire = 0;

		memset(&l, 0, sizeof(l));
		ASSERT_EQ(ev_parse_fmt_fields("16,16", l.fmt, EV_MAX_FIELDS, &l.n_fmt,
					      err, sizeof(err)), 0, "fmt");
		ASSERT_EQ(ev_parse_field_spec("width=16,init=0x8207,mask=0x0f0a",
					      &l.fields[0], err, sizeof(err)), 0, "field 1");
		ASSERT_EQ(ev_parse_field_spec("mask=0x813,width=12,init=0xf0",
					      &l.fields[1], err, sizeof(err)), 0, "field 2");
		l.n_fields = 2;
		/* Same layout as test_expand_stev_two_fields. */
		ASSERT_EQ(ev_layout_expand(&l, 0x2D6, &wire, err, sizeof(err)), 0,
			  "expand");
		ASSERT_EQ(wire, 0x8B0700F2, "parsed layout expands as worked out");
	}
}

/* The UDP GSO burst: default, range, and through the pinned record. */
TEST_CASE(test_gso_burst, "ev_profile.gso_burst")
{
	static struct mrc_ev_profile_rec rec;
	static struct ev_profile p, q;

	ASSERT_EQ(ev_profile_init(&p, 3, EV_PROFILE_AUTO, MRC_EVF_UDP, err, sizeof(err)),
		  0, "AUTO profile");
	ASSERT_EQ(p.gso_burst, MRC_GSO_BURST_DEFAULT, "default burst");
	p.gso_burst = 0;
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -EINVAL, "burst 0 refused");
	ASSERT_ERR_HAS("gso_burst 0 outside 1..64");
	p.gso_burst = MRC_GSO_BURST_MAX + 1;
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -EINVAL, "burst 65 refused");
	p.gso_burst = 5;
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), 0, "burst 5 valid");
	ev_profile_to_rec(&p, 0, &rec);
	ASSERT_EQ(rec.gso_burst, 5, "the record carries it");
	ASSERT_EQ(ev_profile_from_rec(&rec, &q, NULL), 0, "read back");
	ASSERT_EQ(q.gso_burst, 5, "and it comes back");
	rec.gso_burst = 0;
	ASSERT_EQ(ev_profile_from_rec(&rec, &q, NULL), -EINVAL, "a record of burst 0 refused");
	rec.gso_burst = MRC_GSO_BURST_MAX + 1;
	ASSERT_EQ(ev_profile_from_rec(&rec, &q, NULL), -EINVAL, "a record of burst 65 refused");
}
