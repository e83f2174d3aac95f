/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * EV profiles: how a QP gets its table of entropy values (EVs).
 *
 * A profile is EXPLICIT (the controller lists the wire EVs and their
 * planes), GENERATED (EVs are produced from per-field rules) or AUTO (a
 * built-in GENERATED profile, see ev_profile_auto_layout()).
 *
 * Expansion of a GENERATED profile turns a "compact EV" c (a small
 * counter) into a wire EV. The layout has n fields; field k has a width,
 * an init value, a [min, max] range and a mask, and is written into wire
 * field k, whose width is fmt[k]. With p_k = popcount(mask_k) and
 * N = p_1 + ... + p_n (at most 32), c must fit in N bits, and:
 *
 *   - field 1 takes bits N-1 .. N-p_1 of c, field 2 the next p_2 bits
 *     below those, and so on (most significant first): the field's
 *     counter bits, taken_k;
 *   - taken_k outside [min_k, max_k] makes c invalid (-ERANGE): min and
 *     max bound the counter bits, not the field's final value, as in the
 *     OCP reference generator (init 0x100, mask 0xff, min 0, max 255
 *     gives the field values 0x100..0x1ff);
 *   - the taken bits are deposited into the positions of mask_k, lowest
 *     taken bit into the lowest set mask bit, highest into the highest
 *     (a pdep): value_k = (init_k & ~mask_k) | pdep32(taken, mask_k);
 *   - the wire EV is the concatenation of the values, each right-aligned
 *     in its fmt[k] bits, field 1 most significant.
 *
 * Generation walks c = 0, 1, 2, ... skipping invalid values and hands
 * the valid expansions round-robin to the planes: table entry i goes to
 * plane (i % P) + 1. The valid counter values of each field form one
 * interval, [min, max] cut to what the mask carries, so the walk is done
 * without visiting the invalid values (same result, bounded time even
 * for 32-bit spaces).
 *
 * Every function that can fail returns 0 or a negative errno and, when
 * `err` is not NULL, writes a one-line reason into err[errlen].
 */
#ifndef MRC_EV_PROFILE_H
#define MRC_EV_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "mrc/abi.h"

#define EV_MAX_FIELDS		8	/* fields, and wire fields, of a layout */
#define EV_MAX_PLANES		8
#define EV_COUNT_DEFAULT	256	/* default ev_count (== MRC_MAX_EVS) */
#define EV_ERR_LEN		160	/* a comfortable size for err buffers */

/*
 * SRv6 EVs (MRC_EVF_SRV6, docs/WIRE.md section 13): 32-bit EVs whose high
 * 16 bits are the micro-SID (uSID) of the node to cross, the low 16 the
 * UDP source port; the profile adds the 32-bit locator block the carrier
 * address starts with. IPv6 only.
 */
#define EV_FMT_SRV6		MRC_EVF_SRV6

/* Pass as ev_min_active to mean "ev_count / 2". */
#define EV_MIN_ACTIVE_DEFAULT	UINT32_MAX

enum ev_profile_type {
	EV_PROFILE_EXPLICIT	= 0,
	EV_PROFILE_GENERATED	= 1,
	EV_PROFILE_AUTO		= 2,
};

/* INIT -> OFFLINE -> ONLINE, ONLINE -> OFFLINE; edits only when not ONLINE. */
enum ev_profile_state {
	EV_PROFILE_STATE_INIT	 = 0,
	EV_PROFILE_STATE_OFFLINE = 1,
	EV_PROFILE_STATE_ONLINE	 = 2,
};

/* One field of a GENERATED profile. All values fit in `width` bits. */
struct ev_field {
	uint32_t width;		/* bits, 1..32 */
	uint32_t init;		/* bits outside `mask` are kept as they are */
	uint32_t min;		/* the counter bits must be in [min, max] */
	uint32_t max;
	uint32_t mask;		/* positions the compact EV bits go to */
};

/*
 * Fields and the widths of the wire fields they are written into: field k
 * goes right-aligned into a wire field of fmt[k] bits. Examples: UDP is
 * { 16 } (the source port); STEV is { 16, 16 } (low 16 bits of the flow
 * label, then the UDP source port). An EXPLICIT profile only uses fmt.
 */
struct ev_layout {
	uint32_t	n_fmt;
	uint8_t		fmt[EV_MAX_FIELDS];
	uint32_t	n_fields;
	struct ev_field	fields[EV_MAX_FIELDS];
};

/* One entry of an EXPLICIT list: a wire EV and its plane (0 = spread). */
struct ev_explicit_entry {
	uint32_t ev;
	uint16_t plane;
};

struct ev_profile {
	uint16_t		id;
	enum ev_profile_type	type;
	enum ev_profile_state	state;
	uint32_t		format;		/* enum mrc_ev_format */
	uint32_t		ev_count;	/* EVs in a QP's table, 1..MRC_MAX_EVS */
	uint32_t		ev_min_active;	/* fewest EVs that must be active */
	uint32_t		event_mask;	/* which path events to report */
	uint32_t		gso_burst;	/* packets per UDP GSO send, 1..MRC_GSO_BURST_MAX */
	uint32_t		srv6_block;	/* SRv6: locator block, network order */
	struct ev_layout	layout;
	uint32_t		n_explicit;
	struct ev_explicit_entry explicit_evs[MRC_MAX_EVS];
};

/* One entry of a generated QP EV table. */
struct ev_table_entry {
	uint32_t ev;		/* wire EV */
	uint16_t plane;		/* 1-based */
	uint8_t	 active;	/* 1 = in rotation, 0 = backup */
	uint8_t	 pad;
};

/* ---- bit helpers ------------------------------------------------------ */

unsigned int ev_popcount32(uint32_t v);

/*
 * Parallel bit deposit: the low popcount(mask) bits of `value` go, in
 * order, to the set bits of `mask` (bit 0 of value to the lowest set bit).
 * Higher bits of value are ignored. pdep32(0b101, 0b11010) == 0b10010.
 */
uint32_t ev_pdep32(uint32_t value, uint32_t mask);

/* ---- layouts and expansion -------------------------------------------- */

/*
 * Check one field on its own: width 1..32, no mask bit at or above width,
 * init/min/max fit in width, min <= max. `index` (1-based) prefixes the
 * message as "field <index>: "; 0 means no prefix.
 */
int ev_field_validate(const struct ev_field *f, unsigned int index,
		      char *err, size_t errlen);

/*
 * Check a whole layout: 1..EV_MAX_FIELDS wire fields of 1..32 bits whose
 * total is at most `max_bits` (32 for STEV, 16 for UDP), as many fields as
 * wire fields, each field valid and no wider than its wire field, and at
 * most 32 compact bits in total. With need_fields = 0 only the wire
 * fields are checked (EXPLICIT profiles).
 */
int ev_layout_validate(const struct ev_layout *l, unsigned int max_bits,
		       int need_fields, char *err, size_t errlen);

/* N: the number of compact EV bits the fields use (sum of popcounts). */
unsigned int ev_layout_compact_bits(const struct ev_layout *l);

/* Total width of the wire fields (the EV width). */
unsigned int ev_layout_wire_bits(const struct ev_layout *l);

/*
 * Expand compact EV `compact` into *wire. The layout is validated first
 * (-EINVAL); a compact value wider than N bits is -EINVAL; a field value
 * whose counter bits fall outside its [min, max] is -ERANGE.
 */
int ev_layout_expand(const struct ev_layout *l, uint32_t compact,
		     uint32_t *wire, char *err, size_t errlen);

/*
 * The layout AUTO profiles use: UDP format, one 16-bit field with
 * init 0xC000, mask 0x3FFF, min 0, max 0x3FFF, i.e. EVs are UDP
 * source ports of the ephemeral range 49152..65535 (16384 of them).
 */
void ev_profile_auto_layout(struct ev_layout *l);

/* ---- profiles --------------------------------------------------------- */

const char *ev_profile_type_name(enum ev_profile_type t);
const char *ev_profile_state_name(enum ev_profile_state s);

/* Wire bits of a format: 16 for UDP, 32 for STEV and SRv6, 0 if unknown. */
unsigned int ev_format_bits(uint32_t format);

/*
 * A fresh profile in state INIT: ev_count 256, ev_min_active 128,
 * event_mask 0, the format's default wire fields (UDP { 16 }, STEV and
 * SRv6 { 16, 16 }), no fields, empty explicit list, no SRv6 block. AUTO
 * profiles get the built-in layout and must use the UDP format.
 */
int ev_profile_init(struct ev_profile *p, uint16_t id,
		    enum ev_profile_type type, uint32_t format,
		    char *err, size_t errlen);

/* 0 if from -> to is one of INIT->OFFLINE, OFFLINE->ONLINE, ONLINE->OFFLINE. */
int ev_profile_check_transition(enum ev_profile_state from,
				enum ev_profile_state to,
				char *err, size_t errlen);

/*
 * Move the profile to `to`. Going ONLINE also requires
 * ev_profile_validate() to pass; the profile is unchanged on error.
 */
int ev_profile_set_state(struct ev_profile *p, enum ev_profile_state to,
			 char *err, size_t errlen);

/*
 * Full check of a profile, as done before it goes ONLINE. An SRv6 profile
 * needs its locator block, and its explicit EVs a uSID (high 16 bits not
 * 0); a generated one is checked EV by EV in ev_profile_generate().
 */
int ev_profile_validate(const struct ev_profile *p, char *err, size_t errlen);

/*
 * Edits. All of them return -EBUSY while the profile is ONLINE, except
 * ev_profile_set_event_mask (event reporting may change at any time).
 * AUTO profiles refuse format, wire field and field edits (-EINVAL).
 */

/* Change format; resets the wire fields to the format's default. */
int ev_profile_set_format(struct ev_profile *p, uint32_t format,
			  char *err, size_t errlen);
/* Replace the wire field widths (1..EV_MAX_FIELDS entries of 1..32 bits). */
int ev_profile_set_fmt_fields(struct ev_profile *p, const uint8_t *widths,
			      unsigned int n, char *err, size_t errlen);
/*
 * ev_count 1..MRC_MAX_EVS; ev_min_active <= ev_count, or
 * EV_MIN_ACTIVE_DEFAULT for ev_count / 2.
 */
int ev_profile_set_counts(struct ev_profile *p, uint32_t ev_count,
			  uint32_t ev_min_active, char *err, size_t errlen);
int ev_profile_set_event_mask(struct ev_profile *p, uint32_t mask);
/* SRv6 only: the locator block (network order, not 0). */
int ev_profile_set_srv6_block(struct ev_profile *p, uint32_t block_be,
			      char *err, size_t errlen);

/* GENERATED only: append a field (validated on its own; -ENOSPC when full). */
int ev_profile_add_field(struct ev_profile *p, const struct ev_field *f,
			 char *err, size_t errlen);
int ev_profile_clear_fields(struct ev_profile *p, char *err, size_t errlen);

/*
 * EXPLICIT only: append (ev, plane). The EV must fit the wire width of
 * the format, plane is 0 (spread) or 1..EV_MAX_PLANES, the same (ev,
 * plane) twice is -EEXIST, more than MRC_MAX_EVS entries -ENOSPC.
 */
int ev_profile_add_explicit(struct ev_profile *p, uint32_t ev, uint16_t plane,
			    char *err, size_t errlen);
int ev_profile_clear_explicit(struct ev_profile *p, char *err, size_t errlen);

/*
 * Build a QP's EV table for `n_planes` planes (1..EV_MAX_PLANES) into
 * out[cap]; *n_out gets the number of entries.
 *
 * GENERATED/AUTO: up to ev_count valid expansions of c = 0, 1, 2, ...;
 * entry i goes to plane (i % n_planes) + 1, so each plane gets
 * ev_count / n_planes and the first planes one more each for the
 * remainder. All EVs are distinct. Fewer than ev_min_active valid values
 * in the whole compact space is -ENOSPC.
 * EXPLICIT: the first min(n_explicit, ev_count) entries of the list, in
 * order; an entry with plane 0 goes to plane (i % n_planes) + 1, i being
 * its table index; a plane above n_planes, or the same (ev, plane) twice
 * after spreading, is -EINVAL; fewer than ev_min_active entries -ENOSPC.
 *
 * SRv6: an EV without a uSID (high 16 bits 0) is -EINVAL.
 *
 * In each plane the last n_backup_per_plane entries (table order) are
 * backups, the rest active. Every plane that has entries must keep one
 * active, and at least ev_min_active must be active in total (-EINVAL).
 * A cap smaller than the table is -ENOSPC.
 */
int ev_profile_generate(const struct ev_profile *p, unsigned int n_planes,
			unsigned int n_backup_per_plane,
			struct ev_table_entry *out, unsigned int cap,
			unsigned int *n_out, char *err, size_t errlen);

/* ---- command-line syntax ---------------------------------------------- */

/*
 * "16,16" -> widths { 16, 16 }, *n = 2. 1..max_n (<= EV_MAX_FIELDS)
 * comma-separated widths of 1..32 bits, decimal or 0x-hex, totalling at
 * most 32 bits; empty items are errors. Nothing is written on error.
 */
int ev_parse_fmt_fields(const char *s, uint8_t *widths, unsigned int max_n,
			unsigned int *n, char *err, size_t errlen);

/*
 * "width=16,init=0x0,min=0,max=0xffff,mask=0xffff": keys in any order,
 * values decimal or 0x-hex. width is required; init and min default to 0,
 * max and mask to all ones in width. Unknown, repeated or valueless keys
 * are errors, and the result must pass ev_field_validate().
 */
int ev_parse_field_spec(const char *s, struct ev_field *f,
			char *err, size_t errlen);

/*
 * "fd00:5::/32" -> the block's 32 bits in network order. The prefix must
 * be /32 (uSIDs are 16 bits after it) and have no bits set past it, and
 * not be 0. Nothing is written on error.
 */
int ev_parse_srv6_block(const char *s, uint32_t *block_be, char *err,
			size_t errlen);

/*
 * Profiles travel between mrcd and libmrc in the pinned mrc_ev_profiles
 * map as struct mrc_ev_profile_rec (include/mrc/abi.h). from_rec checks
 * the record's counts, so a damaged record is -EINVAL, not an overrun.
 */
void ev_profile_to_rec(const struct ev_profile *p, uint32_t backups_per_plane,
		       struct mrc_ev_profile_rec *rec);
int ev_profile_from_rec(const struct mrc_ev_profile_rec *rec,
			struct ev_profile *p, uint32_t *backups_per_plane);

#endif
