// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of user/common/ev_profile.c, part three: SRv6 EV profiles
 * (EV = uSID << 16 | UDP port, plus a locator block), explicit and
 * generated, their errors, the block's syntax and its trip through the
 * pinned record.
 */
#include <arpa/inet.h>

#include "ev_profile_test.h"

#define BLOCK_FD00_5	htonl(0xfd000005)

static void srv6_profile(struct ev_profile *p, enum ev_profile_type type)
{
	ASSERT_EQ(ev_profile_init(p, 3, type, EV_FMT_SRV6, err, sizeof(err)), 0,
		  "init SRv6");
}

TEST_CASE(test_srv6_defaults, "ev_profile.srv6.defaults")
{
	struct ev_profile p;

	srv6_profile(&p, EV_PROFILE_GENERATED);
	ASSERT_EQ(p.format, MRC_EVF_SRV6, "format");
	ASSERT_EQ(p.layout.n_fmt, 2, "two wire fields");
	ASSERT_EQ(p.layout.fmt[0], 16, "uSID bits");
	ASSERT_EQ(p.layout.fmt[1], 16, "port bits");
	ASSERT_EQ(p.srv6_block, 0, "no block yet");
	ASSERT_EQ(ev_profile_init(&p, 3, EV_PROFILE_AUTO, EV_FMT_SRV6, err, sizeof(err)),
		  -EINVAL, "AUTO + SRv6");
	ASSERT_ERR_HAS("AUTO profiles use the UDP format");
}

/*
 * EXPLICIT: the EVs are used as listed; the block is required before the
 * profile goes ONLINE, an EV without a uSID is refused, and the block
 * belongs to SRv6 profiles only.
 */
TEST_CASE(test_srv6_explicit, "ev_profile.srv6.explicit")
{
	static const uint32_t evs[] = { 0x1001C000, 0x1002C001, 0x1001C002, 0x1002C003 };
	struct ev_table_entry t[MRC_MAX_EVS];
	struct ev_profile p, udp;
	unsigned int n, i;

	srv6_profile(&p, EV_PROFILE_EXPLICIT);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(ev_profile_add_explicit(&p, evs[i], 0, err, sizeof(err)), 0,
			  "add explicit");
	ASSERT_EQ(ev_profile_set_counts(&p, 4, 2, err, sizeof(err)), 0, "counts");
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -EINVAL, "no block");
	ASSERT_ERR_HAS("needs its locator block");
	ASSERT_EQ(ev_profile_set_srv6_block(&p, 0, err, sizeof(err)), -EINVAL, "block 0");
	ASSERT_ERR_HAS("cannot be 0");
	ASSERT_EQ(ev_profile_set_srv6_block(&p, BLOCK_FD00_5, err, sizeof(err)), 0,
		  "block fd00:5::/32");
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), 0, "valid with a block");
	ASSERT_EQ(ev_profile_generate(&p, 2, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)), 0,
		  "generate");
	ASSERT_EQ(n, 4, "4 entries");
	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "entry %u: EV as listed, plane %u", i, i % 2 + 1);
		ASSERT_TRUE(t[i].ev == evs[i] && t[i].plane == i % 2 + 1, what);
	}

	/* An EV without a uSID cannot leave in an envelope. */
	ASSERT_EQ(ev_profile_add_explicit(&p, 0xC004, 0, err, sizeof(err)), 0,
		  "add 0xC004 (checked on validate)");
	ASSERT_EQ(ev_profile_set_counts(&p, 5, 2, err, sizeof(err)), 0, "counts 5");
	ASSERT_EQ(ev_profile_validate(&p, err, sizeof(err)), -EINVAL, "uSID 0");
	ASSERT_ERR_HAS("explicit EV 5: 0xc004 has no uSID");

	/* ONLINE: the block is frozen like everything else. */
	ASSERT_EQ(ev_profile_clear_explicit(&p, err, sizeof(err)), 0, "clear");
	ASSERT_EQ(ev_profile_add_explicit(&p, 0x1001C000, 0, err, sizeof(err)), 0, "add");
	ASSERT_EQ(ev_profile_set_counts(&p, 1, 1, err, sizeof(err)), 0, "counts 1");
	ASSERT_EQ(ev_profile_set_state(&p, EV_PROFILE_STATE_OFFLINE, err, sizeof(err)), 0,
		  "OFFLINE");
	ASSERT_EQ(ev_profile_set_state(&p, EV_PROFILE_STATE_ONLINE, err, sizeof(err)), 0,
		  "ONLINE");
	ASSERT_EQ(ev_profile_set_srv6_block(&p, htonl(0xfd000006), err, sizeof(err)),
		  -EBUSY, "block of an ONLINE profile");
	ASSERT_EQ(p.srv6_block, BLOCK_FD00_5, "block unchanged");

	/* Not an SRv6 profile: no block. */
	ASSERT_EQ(ev_profile_init(&udp, 4, EV_PROFILE_EXPLICIT, MRC_EVF_UDP, err,
				  sizeof(err)), 0, "init UDP");
	ASSERT_EQ(ev_profile_set_srv6_block(&udp, BLOCK_FD00_5, err, sizeof(err)),
		  -EINVAL, "block on UDP");
	ASSERT_ERR_HAS("is not SRv6");
}

/*
 * GENERATED, the lab's layout: field 1 the uSIDs of spines 1 and 2
 * (0x1001, 0x1002: init 0x1000, mask 0x3, counter 1..2), field 2 the
 * ports (0xC000 + 0..127). Field 1 is the slow digit: the first 128 EVs
 * cross spine 1, the next 128 spine 2, and with 4 planes every plane gets
 * both spines. A layout that can make uSID 0 is refused at generation.
 */
TEST_CASE(test_srv6_generated, "ev_profile.srv6.generated")
{
	struct ev_table_entry t[MRC_MAX_EVS];
	unsigned int n, i, per_plane_spine[5][3] = { { 0 } };
	struct ev_profile p;

	srv6_profile(&p, EV_PROFILE_GENERATED);
	ASSERT_EQ(ev_profile_set_srv6_block(&p, BLOCK_FD00_5, err, sizeof(err)), 0, "block");
	ASSERT_EQ(ev_profile_add_field(&p, &(struct ev_field){ 16, 0x1000, 1, 2, 0x3 },
				       err, sizeof(err)), 0, "uSID field");
	ASSERT_EQ(ev_profile_add_field(&p, &(struct ev_field){ 16, 0xC000, 0, 127, 0x7f },
				       err, sizeof(err)), 0, "port field");
	ASSERT_EQ(ev_profile_generate(&p, 4, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)), 0,
		  "generate");
	if (!ASSERT_EQ(n, 256, "256 EVs"))
		return;
	for (i = 0; i < n; i++) {
		uint32_t usid = t[i].ev >> 16, port = t[i].ev & 0xffff;
		uint32_t want_usid = i < 128 ? 0x1001 : 0x1002;

		snprintf(what, sizeof(what), "EV %u = 0x%08x: uSID 0x%x, port 0x%x", i,
			 t[i].ev, want_usid, 0xC000 + i % 128);
		if (!ASSERT_TRUE(usid == want_usid && port == 0xC000 + i % 128, what))
			return;
		per_plane_spine[t[i].plane][usid - 0x1000]++;
	}
	for (i = 1; i <= 4; i++) {
		snprintf(what, sizeof(what), "plane %u: 32 EVs over each spine", i);
		ASSERT_TRUE(per_plane_spine[i][1] == 32 && per_plane_spine[i][2] == 32, what);
	}

	/* Counter 0 in field 1 (min 0) gives uSID 0x1000 | 0 = 0x1000: fine. */
	ASSERT_EQ(ev_profile_clear_fields(&p, err, sizeof(err)), 0, "clear");
	ASSERT_EQ(ev_profile_add_field(&p, &(struct ev_field){ 16, 0, 0, 3, 0x3 },
				       err, sizeof(err)), 0, "uSID field from 0");
	ASSERT_EQ(ev_profile_add_field(&p, &(struct ev_field){ 16, 0xC000, 0, 127, 0x7f },
				       err, sizeof(err)), 0, "port field");
	ASSERT_EQ(ev_profile_generate(&p, 4, 0, t, MRC_MAX_EVS, &n, err, sizeof(err)),
		  -EINVAL, "uSID 0 generated");
	ASSERT_ERR_HAS("generated EV 1 (0xc000) has no uSID");
}

static void check_block(const char *s, int want_rc, uint32_t want, const char *needle)
{
	uint32_t b = 0x12345678;
	int rc;

	err[0] = '\0';
	rc = ev_parse_srv6_block(s, &b, err, sizeof(err));
	snprintf(what, sizeof(what), "parse_srv6_block(\"%s\") rc (%s)", s, err);
	if (!ASSERT_EQ(rc, want_rc, what))
		return;
	if (want_rc) {
		ASSERT_ERR_HAS(needle);
		snprintf(what, sizeof(what), "parse_srv6_block(\"%s\") writes nothing", s);
		ASSERT_EQ(b, 0x12345678, what);
		return;
	}
	snprintf(what, sizeof(what), "parse_srv6_block(\"%s\")", s);
	ASSERT_EQ(ntohl(b), want, what);
}

TEST_CASE(test_srv6_block_syntax, "ev_profile.srv6.block_syntax")
{
	check_block("fd00:5::/32", 0, 0xfd000005, NULL);
	check_block("2001:db8::/32", 0, 0x20010db8, NULL);
	check_block("fd00:5::", -EINVAL, 0, "IPv6 /32 prefix");
	check_block("fd00:5::/48", -EINVAL, 0, "IPv6 /32 prefix");
	check_block("fd00:5:1::/32", -EINVAL, 0, "bits set past /32");
	check_block("::/32", -EINVAL, 0, "cannot be ::/32");
	check_block("198.18.0.0/32", -EINVAL, 0, "not an IPv6 prefix");
	check_block("fd00:zz::/32", -EINVAL, 0, "not an IPv6 prefix");
}

/* The block travels to libmrc in the pinned record. */
TEST_CASE(test_srv6_record, "ev_profile.srv6.record")
{
	struct mrc_ev_profile_rec rec;
	struct ev_profile p, back;
	uint32_t backups = 0;

	srv6_profile(&p, EV_PROFILE_EXPLICIT);
	ASSERT_EQ(ev_profile_set_srv6_block(&p, BLOCK_FD00_5, err, sizeof(err)), 0, "block");
	ev_profile_to_rec(&p, 1, &rec);
	ASSERT_EQ(rec.srv6_block, BLOCK_FD00_5, "record's block");
	ASSERT_EQ(rec.format, MRC_EVF_SRV6, "record's format");
	ASSERT_EQ(ev_profile_from_rec(&rec, &back, &backups), 0, "from_rec");
	ASSERT_EQ(back.srv6_block, BLOCK_FD00_5, "block back");
	ASSERT_EQ(back.format, MRC_EVF_SRV6, "format back");
}
