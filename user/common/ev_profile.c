// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * EV profiles: field expansion, validation, state machine and QP EV table
 * generation. The rules are written down in ev_profile.h.
 */
#include "common/ev_profile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/parse.h"
#include "common/errmsg.h"


/* ---- bit helpers ------------------------------------------------------ */

unsigned int ev_popcount32(uint32_t v)
{
	unsigned int n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

uint32_t ev_pdep32(uint32_t value, uint32_t mask)
{
	uint32_t out = 0;
	uint32_t bit = 1;	/* next bit of value to place */

	/* Walk the set bits of mask from the lowest up. */
	for (; mask; mask &= mask - 1) {
		uint32_t pos = mask & -mask;

		if (value & bit)
			out |= pos;
		bit <<= 1;
	}
	return out;
}

/* All ones in the low `bits` bits (bits 0..32). */
static uint32_t low_ones(unsigned int bits)
{
	return bits >= 32 ? UINT32_MAX : (1u << bits) - 1;
}

static int fits(uint32_t v, unsigned int bits)
{
	return (v & ~low_ones(bits)) == 0;
}

/* ---- fields and layouts ----------------------------------------------- */

/* `pfx` is "field N: " or "". */
static int field_check(const struct ev_field *f, const char *pfx,
		       char *err, size_t errlen)
{
	if (f->width < 1 || f->width > 32)
		return fail(-EINVAL, err, errlen, "%swidth %u outside 1..32",
			    pfx, f->width);
	if (!fits(f->mask, f->width))
		return fail(-EINVAL, err, errlen,
			    "%smask 0x%x has bits above width %u",
			    pfx, f->mask, f->width);
	if (!fits(f->init, f->width))
		return fail(-EINVAL, err, errlen,
			    "%sinit 0x%x does not fit in width %u",
			    pfx, f->init, f->width);
	if (!fits(f->min, f->width))
		return fail(-EINVAL, err, errlen,
			    "%smin 0x%x does not fit in width %u",
			    pfx, f->min, f->width);
	if (!fits(f->max, f->width))
		return fail(-EINVAL, err, errlen,
			    "%smax 0x%x does not fit in width %u",
			    pfx, f->max, f->width);
	if (f->min > f->max)
		return fail(-EINVAL, err, errlen, "%smin 0x%x above max 0x%x",
			    pfx, f->min, f->max);
	return 0;
}

int ev_field_validate(const struct ev_field *f, unsigned int index,
		      char *err, size_t errlen)
{
	char pfx[24] = "";

	if (index)
		snprintf(pfx, sizeof(pfx), "field %u: ", index);
	return field_check(f, pfx, err, errlen);
}

unsigned int ev_layout_compact_bits(const struct ev_layout *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->n_fields && i < EV_MAX_FIELDS; i++)
		n += ev_popcount32(l->fields[i].mask);
	return n;
}

unsigned int ev_layout_wire_bits(const struct ev_layout *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->n_fmt && i < EV_MAX_FIELDS; i++)
		n += l->fmt[i];
	return n;
}

int ev_layout_validate(const struct ev_layout *l, unsigned int max_bits,
		       int need_fields, char *err, size_t errlen)
{
	unsigned int i, bits;
	int rc;

	if (l->n_fmt < 1 || l->n_fmt > EV_MAX_FIELDS)
		return fail(-EINVAL, err, errlen,
			    "%u wire fields, need 1..%d", l->n_fmt,
			    EV_MAX_FIELDS);
	for (i = 0; i < l->n_fmt; i++)
		if (l->fmt[i] < 1 || l->fmt[i] > 32)
			return fail(-EINVAL, err, errlen,
				    "wire field %u: width %u outside 1..32",
				    i + 1, l->fmt[i]);
	if (need_fields) {
		if (l->n_fields < 1 || l->n_fields > EV_MAX_FIELDS)
			return fail(-EINVAL, err, errlen,
				    "%u fields, need 1..%d", l->n_fields,
				    EV_MAX_FIELDS);
		if (l->n_fields != l->n_fmt)
			return fail(-EINVAL, err, errlen,
				    "%u fields for %u wire fields: need one field per wire field",
				    l->n_fields, l->n_fmt);
		for (i = 0; i < l->n_fields; i++) {
			rc = ev_field_validate(&l->fields[i], i + 1, err,
					       errlen);
			if (rc)
				return rc;
		}
		bits = ev_layout_compact_bits(l);
		if (bits > 32)
			return fail(-EINVAL, err, errlen,
				    "masks take %u compact EV bits, more than 32",
				    bits);
		for (i = 0; i < l->n_fields; i++)
			if (l->fields[i].width > l->fmt[i])
				return fail(-EINVAL, err, errlen,
					    "field %u: width %u wider than its wire field (%u bits)",
					    i + 1, l->fields[i].width,
					    l->fmt[i]);
	}
	bits = ev_layout_wire_bits(l);
	if (bits > max_bits)
		return fail(-EINVAL, err, errlen,
			    "wire fields total %u bits, more than the %u the format carries",
			    bits, max_bits);
	return 0;
}

static uint32_t field_value(const struct ev_field *f, uint32_t digit)
{
	return (f->init & ~f->mask) | ev_pdep32(digit, f->mask);
}

/*
 * Expansion of a validated layout. `bits` is its compact bit count and
 * `compact` fits in it.
 */
static int expand(const struct ev_layout *l, unsigned int bits,
		  uint32_t compact, uint32_t *wire, char *err, size_t errlen)
{
	unsigned int i, shift = bits;
	uint64_t out = 0;

	for (i = 0; i < l->n_fields; i++) {
		const struct ev_field *f = &l->fields[i];
		unsigned int p = ev_popcount32(f->mask);
		uint32_t digit = 0, v;

		if (p) {
			shift -= p;
			digit = (uint32_t)(compact >> shift) & low_ones(p);
		}
		if (digit < f->min || digit > f->max)
			return fail(-ERANGE, err, errlen,
				    "field %u: counter bits 0x%x outside [min 0x%x, max 0x%x]",
				    i + 1, digit, f->min, f->max);
		v = field_value(f, digit);
		out = (out << l->fmt[i]) | v;
	}
	*wire = (uint32_t)out;
	return 0;
}

int ev_layout_expand(const struct ev_layout *l, uint32_t compact,
		     uint32_t *wire, char *err, size_t errlen)
{
	unsigned int bits;
	int rc;

	rc = ev_layout_validate(l, 32, 1, err, errlen);
	if (rc)
		return rc;
	bits = ev_layout_compact_bits(l);
	if (!fits(compact, bits))
		return fail(-EINVAL, err, errlen,
			    "compact EV 0x%x does not fit in the %u bits the masks take",
			    compact, bits);
	return expand(l, bits, compact, wire, err, errlen);
}

void ev_profile_auto_layout(struct ev_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->n_fmt = 1;
	l->fmt[0] = 16;
	l->n_fields = 1;
	l->fields[0] = (struct ev_field){
		.width = 16, .init = 0xC000, .mask = 0x3FFF,
		.min = 0, .max = 0x3FFF,
	};
}

/*
 * Valid digits of one field: min and max bound the field's counter bits
 * (the digit deposited into the mask), so they are [min, max] cut to the
 * 2^popcount(mask) digits the mask can carry. Returns 0 when none is left.
 */
static int field_digits(const struct ev_field *f, uint32_t *lo, uint32_t *hi)
{
	uint32_t top = low_ones(ev_popcount32(f->mask));

	if (f->min > top)
		return 0;
	*lo = f->min;
	*hi = f->max < top ? f->max : top;
	return 1;
}

/*
 * Number of valid compact values of a validated layout (capped at 2^32)
 * and each field's valid digit interval. 0 when a field has none; *empty
 * then names it (1-based).
 */
static uint64_t valid_space(const struct ev_layout *l, uint32_t *lo,
			    uint32_t *hi, unsigned int *empty)
{
	uint64_t total = 1;
	unsigned int i;

	*empty = 0;
	for (i = 0; i < l->n_fields; i++) {
		if (!field_digits(&l->fields[i], &lo[i], &hi[i])) {
			*empty = i + 1;
			return 0;
		}
		total *= (uint64_t)(hi[i] - lo[i]) + 1;
		if (total > (1ull << 32))
			total = 1ull << 32;
	}
	return total;
}

/* ---- profiles --------------------------------------------------------- */

const char *ev_profile_type_name(enum ev_profile_type t)
{
	switch (t) {
	case EV_PROFILE_EXPLICIT:	return "EXPLICIT";
	case EV_PROFILE_GENERATED:	return "GENERATED";
	case EV_PROFILE_AUTO:		return "AUTO";
	}
	return "?";
}

const char *ev_profile_state_name(enum ev_profile_state s)
{
	switch (s) {
	case EV_PROFILE_STATE_INIT:	return "INIT";
	case EV_PROFILE_STATE_OFFLINE:	return "OFFLINE";
	case EV_PROFILE_STATE_ONLINE:	return "ONLINE";
	}
	return "?";
}

unsigned int ev_format_bits(uint32_t format)
{
	switch (format) {
	case MRC_EVF_UDP:	return 16;
	case MRC_EVF_STEV:	return 32;
	case MRC_EVF_SRV6:	return 32;
	}
	return 0;
}

static int check_format(uint32_t format, char *err, size_t errlen)
{
	if (!ev_format_bits(format))
		return fail(-EINVAL, err, errlen,
			    "unknown EV format %u (UDP %d, STEV %d, SRv6 %d)", format,
			    MRC_EVF_UDP, MRC_EVF_STEV, MRC_EVF_SRV6);
	return 0;
}

static void default_fmt(struct ev_layout *l, uint32_t format)
{
	memset(l->fmt, 0, sizeof(l->fmt));
	if (format == MRC_EVF_STEV || format == MRC_EVF_SRV6) {
		l->n_fmt = 2;
		l->fmt[0] = 16;		/* flow label low 16 bits, or the uSID */
		l->fmt[1] = 16;		/* UDP source port */
	} else {
		l->n_fmt = 1;
		l->fmt[0] = 16;		/* UDP source port */
	}
}

int ev_profile_init(struct ev_profile *p, uint16_t id,
		    enum ev_profile_type type, uint32_t format,
		    char *err, size_t errlen)
{
	int rc;

	if (type != EV_PROFILE_EXPLICIT && type != EV_PROFILE_GENERATED &&
	    type != EV_PROFILE_AUTO)
		return fail(-EINVAL, err, errlen, "unknown profile type %d",
			    (int)type);
	rc = check_format(format, err, errlen);
	if (rc)
		return rc;
	if (type == EV_PROFILE_AUTO && format != MRC_EVF_UDP)
		return fail(-EINVAL, err, errlen,
			    "AUTO profiles use the UDP format");
	memset(p, 0, sizeof(*p));
	p->id = id;
	p->type = type;
	p->state = EV_PROFILE_STATE_INIT;
	p->format = format;
	p->ev_count = EV_COUNT_DEFAULT;
	p->ev_min_active = EV_COUNT_DEFAULT / 2;
	p->gso_burst = MRC_GSO_BURST_DEFAULT;
	if (type == EV_PROFILE_AUTO)
		ev_profile_auto_layout(&p->layout);
	else
		default_fmt(&p->layout, format);
	return 0;
}

static int state_known(enum ev_profile_state s)
{
	return s == EV_PROFILE_STATE_INIT || s == EV_PROFILE_STATE_OFFLINE ||
	       s == EV_PROFILE_STATE_ONLINE;
}

int ev_profile_check_transition(enum ev_profile_state from,
				enum ev_profile_state to,
				char *err, size_t errlen)
{
	if (!state_known(from) || !state_known(to))
		return fail(-EINVAL, err, errlen, "unknown profile state %d",
			    state_known(from) ? (int)to : (int)from);
	if ((from == EV_PROFILE_STATE_INIT && to == EV_PROFILE_STATE_OFFLINE) ||
	    (from == EV_PROFILE_STATE_OFFLINE && to == EV_PROFILE_STATE_ONLINE) ||
	    (from == EV_PROFILE_STATE_ONLINE && to == EV_PROFILE_STATE_OFFLINE))
		return 0;
	return fail(-EINVAL, err, errlen,
		    "profile state %s -> %s not allowed (INIT -> OFFLINE <-> ONLINE)",
		    ev_profile_state_name(from), ev_profile_state_name(to));
}

/* The layout a profile really uses: AUTO ignores what is stored. */
static const struct ev_layout *profile_layout(const struct ev_profile *p,
					      struct ev_layout *tmp)
{
	if (p->type != EV_PROFILE_AUTO)
		return &p->layout;
	ev_profile_auto_layout(tmp);
	return tmp;
}

int ev_profile_validate(const struct ev_profile *p, char *err, size_t errlen)
{
	uint32_t lo[EV_MAX_FIELDS], hi[EV_MAX_FIELDS];
	const struct ev_layout *l;
	struct ev_layout tmp;
	unsigned int i, empty, bits;
	uint64_t n;
	int rc;

	if (p->type != EV_PROFILE_EXPLICIT && p->type != EV_PROFILE_GENERATED &&
	    p->type != EV_PROFILE_AUTO)
		return fail(-EINVAL, err, errlen, "unknown profile type %d",
			    (int)p->type);
	rc = check_format(p->format, err, errlen);
	if (rc)
		return rc;
	if (p->type == EV_PROFILE_AUTO && p->format != MRC_EVF_UDP)
		return fail(-EINVAL, err, errlen,
			    "AUTO profiles use the UDP format");
	if (p->ev_count < 1 || p->ev_count > MRC_MAX_EVS)
		return fail(-EINVAL, err, errlen,
			    "ev_count %u outside 1..%d", p->ev_count,
			    MRC_MAX_EVS);
	if (p->ev_min_active > p->ev_count)
		return fail(-EINVAL, err, errlen,
			    "ev_min_active %u above ev_count %u",
			    p->ev_min_active, p->ev_count);
	if (p->gso_burst < 1 || p->gso_burst > MRC_GSO_BURST_MAX)
		return fail(-EINVAL, err, errlen,
			    "gso_burst %u outside 1..%d", p->gso_burst,
			    MRC_GSO_BURST_MAX);
	if (p->format == MRC_EVF_SRV6 && !p->srv6_block)
		return fail(-EINVAL, err, errlen,
			    "an SRv6 profile needs its locator block (--srv6-block)");
	l = profile_layout(p, &tmp);
	rc = ev_layout_validate(l, ev_format_bits(p->format),
				p->type != EV_PROFILE_EXPLICIT, err, errlen);
	if (rc)
		return rc;

	if (p->type == EV_PROFILE_EXPLICIT) {
		if (p->n_explicit > MRC_MAX_EVS)
			return fail(-EINVAL, err, errlen,
				    "%u explicit EVs, at most %d",
				    p->n_explicit, MRC_MAX_EVS);
		bits = ev_layout_wire_bits(l);
		for (i = 0; i < p->n_explicit; i++) {
			const struct ev_explicit_entry *e = &p->explicit_evs[i];

			if (!fits(e->ev, bits))
				return fail(-EINVAL, err, errlen,
					    "explicit EV %u: 0x%x wider than %u bits",
					    i + 1, e->ev, bits);
			if (e->plane > EV_MAX_PLANES)
				return fail(-EINVAL, err, errlen,
					    "explicit EV %u: plane %u outside 0..%d",
					    i + 1, e->plane, EV_MAX_PLANES);
			if (p->format == MRC_EVF_SRV6 && !(e->ev >> 16))
				return fail(-EINVAL, err, errlen,
					    "explicit EV %u: 0x%x has no uSID (high 16 bits 0)",
					    i + 1, e->ev);
		}
		n = p->n_explicit < p->ev_count ? p->n_explicit : p->ev_count;
		if (n < p->ev_min_active)
			return fail(-ENOSPC, err, errlen,
				    "only %u explicit EVs, ev_min_active is %u",
				    (unsigned int)n, p->ev_min_active);
		return 0;
	}

	n = valid_space(l, lo, hi, &empty);
	if (!n)
		return fail(-ENOSPC, err, errlen,
			    "field %u: min 0x%x above the largest counter value its "
			    "mask 0x%x carries (0x%x)", empty, l->fields[empty - 1].min,
			    l->fields[empty - 1].mask,
			    low_ones(ev_popcount32(l->fields[empty - 1].mask)));
	if (n < p->ev_min_active)
		return fail(-ENOSPC, err, errlen,
			    "only %u valid EVs, ev_min_active is %u",
			    (unsigned int)n, p->ev_min_active);
	return 0;
}

int ev_profile_set_state(struct ev_profile *p, enum ev_profile_state to,
			 char *err, size_t errlen)
{
	int rc = ev_profile_check_transition(p->state, to, err, errlen);

	if (rc)
		return rc;
	if (to == EV_PROFILE_STATE_ONLINE) {
		rc = ev_profile_validate(p, err, errlen);
		if (rc)
			return rc;
	}
	p->state = to;
	return 0;
}

static int editable(const struct ev_profile *p, char *err, size_t errlen)
{
	if (p->state == EV_PROFILE_STATE_ONLINE)
		return fail(-EBUSY, err, errlen,
			    "profile %u is ONLINE: take it OFFLINE to edit it",
			    p->id);
	return 0;
}

static int not_auto(const struct ev_profile *p, char *err, size_t errlen)
{
	if (p->type == EV_PROFILE_AUTO)
		return fail(-EINVAL, err, errlen,
			    "profile %u is AUTO: its format and fields are built in",
			    p->id);
	return 0;
}

int ev_profile_set_format(struct ev_profile *p, uint32_t format,
			  char *err, size_t errlen)
{
	int rc = editable(p, err, errlen);

	if (!rc)
		rc = not_auto(p, err, errlen);
	if (!rc)
		rc = check_format(format, err, errlen);
	if (rc)
		return rc;
	p->format = format;
	default_fmt(&p->layout, format);
	return 0;
}

int ev_profile_set_fmt_fields(struct ev_profile *p, const uint8_t *widths,
			      unsigned int n, char *err, size_t errlen)
{
	struct ev_layout l;
	unsigned int i;
	int rc = editable(p, err, errlen);

	if (!rc)
		rc = not_auto(p, err, errlen);
	if (rc)
		return rc;
	if (n < 1 || n > EV_MAX_FIELDS)
		return fail(-EINVAL, err, errlen, "%u wire fields, need 1..%d",
			    n, EV_MAX_FIELDS);
	memset(&l, 0, sizeof(l));
	l.n_fmt = n;
	for (i = 0; i < n; i++)
		l.fmt[i] = widths[i];
	rc = ev_layout_validate(&l, ev_format_bits(p->format), 0, err, errlen);
	if (rc)
		return rc;
	memcpy(p->layout.fmt, l.fmt, sizeof(l.fmt));
	p->layout.n_fmt = n;
	return 0;
}

int ev_profile_set_counts(struct ev_profile *p, uint32_t ev_count,
			  uint32_t ev_min_active, char *err, size_t errlen)
{
	int rc = editable(p, err, errlen);

	if (rc)
		return rc;
	if (ev_count < 1 || ev_count > MRC_MAX_EVS)
		return fail(-EINVAL, err, errlen, "ev_count %u outside 1..%d",
			    ev_count, MRC_MAX_EVS);
	if (ev_min_active == EV_MIN_ACTIVE_DEFAULT)
		ev_min_active = ev_count / 2;
	if (ev_min_active > ev_count)
		return fail(-EINVAL, err, errlen,
			    "ev_min_active %u above ev_count %u",
			    ev_min_active, ev_count);
	p->ev_count = ev_count;
	p->ev_min_active = ev_min_active;
	return 0;
}

int ev_profile_set_event_mask(struct ev_profile *p, uint32_t mask)
{
	p->event_mask = mask;
	return 0;
}

int ev_profile_set_srv6_block(struct ev_profile *p, uint32_t block_be,
			      char *err, size_t errlen)
{
	int rc = editable(p, err, errlen);

	if (rc)
		return rc;
	if (p->format != MRC_EVF_SRV6)
		return fail(-EINVAL, err, errlen,
			    "profile %u is not SRv6: it has no locator block", p->id);
	if (!block_be)
		return fail(-EINVAL, err, errlen, "the locator block cannot be 0");
	p->srv6_block = block_be;
	return 0;
}

static int generated_only(const struct ev_profile *p, char *err, size_t errlen)
{
	int rc = editable(p, err, errlen);

	if (!rc)
		rc = not_auto(p, err, errlen);
	if (!rc && p->type != EV_PROFILE_GENERATED)
		rc = fail(-EINVAL, err, errlen,
			  "profile %u is %s: fields belong to GENERATED profiles",
			  p->id, ev_profile_type_name(p->type));
	return rc;
}

int ev_profile_add_field(struct ev_profile *p, const struct ev_field *f,
			 char *err, size_t errlen)
{
	int rc = generated_only(p, err, errlen);

	if (rc)
		return rc;
	if (p->layout.n_fields >= EV_MAX_FIELDS)
		return fail(-ENOSPC, err, errlen, "profile %u has %d fields already",
			    p->id, EV_MAX_FIELDS);
	rc = ev_field_validate(f, p->layout.n_fields + 1, err, errlen);
	if (rc)
		return rc;
	p->layout.fields[p->layout.n_fields++] = *f;
	return 0;
}

int ev_profile_clear_fields(struct ev_profile *p, char *err, size_t errlen)
{
	int rc = generated_only(p, err, errlen);

	if (rc)
		return rc;
	memset(p->layout.fields, 0, sizeof(p->layout.fields));
	p->layout.n_fields = 0;
	return 0;
}

static int explicit_only(const struct ev_profile *p, char *err, size_t errlen)
{
	int rc = editable(p, err, errlen);

	if (!rc && p->type != EV_PROFILE_EXPLICIT)
		rc = fail(-EINVAL, err, errlen,
			  "profile %u is %s: EV lists belong to EXPLICIT profiles",
			  p->id, ev_profile_type_name(p->type));
	return rc;
}

int ev_profile_add_explicit(struct ev_profile *p, uint32_t ev, uint16_t plane,
			    char *err, size_t errlen)
{
	unsigned int i, bits = ev_layout_wire_bits(&p->layout);
	int rc = explicit_only(p, err, errlen);

	if (rc)
		return rc;
	if (!fits(ev, bits))
		return fail(-EINVAL, err, errlen, "EV 0x%x wider than %u bits",
			    ev, bits);
	if (plane > EV_MAX_PLANES)
		return fail(-EINVAL, err, errlen, "plane %u outside 0..%d",
			    plane, EV_MAX_PLANES);
	for (i = 0; i < p->n_explicit; i++)
		if (p->explicit_evs[i].ev == ev &&
		    p->explicit_evs[i].plane == plane)
			return fail(-EEXIST, err, errlen,
				    "EV 0x%x plane %u is listed already", ev,
				    plane);
	if (p->n_explicit >= MRC_MAX_EVS)
		return fail(-ENOSPC, err, errlen, "the list holds %d EVs already",
			    MRC_MAX_EVS);
	p->explicit_evs[p->n_explicit].ev = ev;
	p->explicit_evs[p->n_explicit].plane = plane;
	p->n_explicit++;
	return 0;
}

int ev_profile_clear_explicit(struct ev_profile *p, char *err, size_t errlen)
{
	int rc = explicit_only(p, err, errlen);

	if (rc)
		return rc;
	memset(p->explicit_evs, 0, sizeof(p->explicit_evs));
	p->n_explicit = 0;
	return 0;
}

/* Valid compact values in increasing order, assigned round-robin. */
static void gen_fill(const struct ev_layout *l, unsigned int count,
		     unsigned int n_planes, struct ev_table_entry *out)
{
	uint32_t lo[EV_MAX_FIELDS], hi[EV_MAX_FIELDS], d[EV_MAX_FIELDS];
	unsigned int i, k, empty, bits = ev_layout_compact_bits(l);

	valid_space(l, lo, hi, &empty);
	memcpy(d, lo, sizeof(d));
	for (i = 0; i < count; i++) {
		uint32_t compact = 0;

		/* Field 1 is the most significant digit of the compact EV. */
		for (k = 0; k < l->n_fields; k++) {
			unsigned int p = ev_popcount32(l->fields[k].mask);

			if (p)
				compact = (uint32_t)(((uint64_t)compact << p) | d[k]);
		}
		/* Cannot fail: every digit is inside its valid interval. */
		expand(l, bits, compact, &out[i].ev, NULL, 0);
		out[i].plane = (uint16_t)(i % n_planes + 1);
		/* Next valid compact value: odometer, last field fastest. */
		for (k = l->n_fields; k-- > 0;) {
			if (d[k] < hi[k]) {
				d[k]++;
				break;
			}
			d[k] = lo[k];
		}
	}
}

int ev_profile_generate(const struct ev_profile *p, unsigned int n_planes,
			unsigned int n_backup_per_plane,
			struct ev_table_entry *out, unsigned int cap,
			unsigned int *n_out, char *err, size_t errlen)
{
	unsigned int cnt[EV_MAX_PLANES + 1] = { 0 }, seen[EV_MAX_PLANES + 1] = { 0 };
	uint32_t lo[EV_MAX_FIELDS], hi[EV_MAX_FIELDS];
	unsigned int i, j, n, n_active, empty;
	const struct ev_layout *l;
	struct ev_layout tmp;
	uint64_t space;
	int rc;

	*n_out = 0;
	if (n_planes < 1 || n_planes > EV_MAX_PLANES)
		return fail(-EINVAL, err, errlen, "%u planes, need 1..%d",
			    n_planes, EV_MAX_PLANES);
	rc = ev_profile_validate(p, err, errlen);
	if (rc)
		return rc;
	l = profile_layout(p, &tmp);

	if (p->type == EV_PROFILE_EXPLICIT) {
		n = p->n_explicit < p->ev_count ? p->n_explicit : p->ev_count;
		if (n > cap)
			return fail(-ENOSPC, err, errlen,
				    "table of %u entries does not fit in %u",
				    n, cap);
		for (i = 0; i < n; i++) {
			const struct ev_explicit_entry *e = &p->explicit_evs[i];

			if (e->plane > n_planes)
				return fail(-EINVAL, err, errlen,
					    "explicit EV %u (0x%x): plane %u but the QP has %u planes",
					    i + 1, e->ev, e->plane, n_planes);
			out[i].ev = e->ev;
			out[i].plane = e->plane ? e->plane :
				       (uint16_t)(i % n_planes + 1);
			for (j = 0; j < i; j++)
				if (out[j].ev == out[i].ev &&
				    out[j].plane == out[i].plane)
					return fail(-EINVAL, err, errlen,
						    "explicit EV %u (0x%x) lands on plane %u twice",
						    i + 1, e->ev, out[i].plane);
		}
	} else {
		/* ev_profile_validate already checked space >= ev_min_active. */
		space = valid_space(l, lo, hi, &empty);
		n = space < p->ev_count ? (unsigned int)space : p->ev_count;
		if (n > cap)
			return fail(-ENOSPC, err, errlen,
				    "table of %u entries does not fit in %u",
				    n, cap);
		gen_fill(l, n, n_planes, out);
		for (i = 0; p->format == MRC_EVF_SRV6 && i < n; i++)
			if (!(out[i].ev >> 16))
				return fail(-EINVAL, err, errlen,
					    "generated EV %u (0x%x) has no uSID (high 16 bits 0)",
					    i + 1, out[i].ev);
	}

	for (i = 0; i < n; i++)
		cnt[out[i].plane]++;
	n_active = 0;
	for (j = 1; j <= n_planes; j++) {
		if (cnt[j] && cnt[j] <= n_backup_per_plane)
			return fail(-EINVAL, err, errlen,
				    "plane %u has %u EVs: %u backups per plane leave none active",
				    j, cnt[j], n_backup_per_plane);
		if (cnt[j])
			n_active += cnt[j] - n_backup_per_plane;
	}
	if (n_active < p->ev_min_active)
		return fail(-EINVAL, err, errlen,
			    "%u active EVs with %u backups per plane, ev_min_active is %u",
			    n_active, n_backup_per_plane, p->ev_min_active);
	for (i = 0; i < n; i++) {
		unsigned int pl = out[i].plane;

		out[i].active = seen[pl]++ < cnt[pl] - n_backup_per_plane;
		out[i].pad = 0;
	}
	*n_out = n;
	return 0;
}

/* ---- command-line syntax ---------------------------------------------- */

int ev_parse_srv6_block(const char *s, uint32_t *block_be, char *err,
			size_t errlen)
{
	const char *slash = strchr(s, '/');
	unsigned char a[16];
	char addr[INET6_ADDRSTRLEN];
	uint32_t block;

	if (!slash || strcmp(slash + 1, "32"))
		return fail(-EINVAL, err, errlen,
			    "'%s': give the locator block as an IPv6 /32 prefix "
			    "(e.g. fd00:5::/32)", s);
	if ((size_t)(slash - s) >= sizeof(addr))
		return fail(-EINVAL, err, errlen, "'%s' is not an IPv6 prefix", s);
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET6, addr, a) != 1)
		return fail(-EINVAL, err, errlen, "'%s' is not an IPv6 prefix", s);
	for (int i = 4; i < 16; i++)
		if (a[i])
			return fail(-EINVAL, err, errlen,
				    "'%s' has bits set past /32", s);
	memcpy(&block, a, 4);
	if (!block)
		return fail(-EINVAL, err, errlen, "the locator block cannot be ::/32");
	*block_be = block;
	return 0;
}

/* Copy s[0..len) into buf[size] as a string; 0 if it does not fit. */
static int copy_item(char *buf, size_t size, const char *s, size_t len)
{
	if (len >= size)
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 1;
}

int ev_parse_fmt_fields(const char *s, uint8_t *widths, unsigned int max_n,
			unsigned int *n, char *err, size_t errlen)
{
	unsigned int count = 0, total = 0;
	uint8_t w[EV_MAX_FIELDS];
	const char *p = s;
	char item[24];
	uint64_t v;

	if (!s || !*s)
		return fail(-EINVAL, err, errlen, "empty wire field list");
	if (max_n > EV_MAX_FIELDS)
		max_n = EV_MAX_FIELDS;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (!len)
			return fail(-EINVAL, err, errlen,
				    "\"%s\": empty width at item %u", s,
				    count + 1);
		if (count >= max_n)
			return fail(-EINVAL, err, errlen,
				    "\"%s\": more than %u wire fields", s, max_n);
		if (!copy_item(item, sizeof(item), p, len) ||
		    parse_u64(item, UINT64_MAX, &v))
			return fail(-EINVAL, err, errlen,
				    "\"%s\": item %u is not a number", s,
				    count + 1);
		if (v < 1 || v > 32)
			return fail(-EINVAL, err, errlen,
				    "\"%s\": width %u outside 1..32", s,
				    (unsigned int)v);
		w[count++] = (uint8_t)v;
		total += (unsigned int)v;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (total > 32)
		return fail(-EINVAL, err, errlen,
			    "\"%s\": wire fields total %u bits, more than 32",
			    s, total);
	memcpy(widths, w, count);
	*n = count;
	return 0;
}

int ev_parse_field_spec(const char *s, struct ev_field *f,
			char *err, size_t errlen)
{
	static const char *const keys[] = { "width", "init", "min", "max", "mask" };
	uint32_t val[5] = { 0 };
	int have[5] = { 0 };
	const char *p = s;
	struct ev_field r;
	char item[48];
	unsigned int k;
	uint64_t v;
	int rc;

	if (!s || !*s)
		return fail(-EINVAL, err, errlen, "empty field spec");
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char *eq, *value;

		if (!len)
			return fail(-EINVAL, err, errlen,
				    "\"%s\": empty item", s);
		if (!copy_item(item, sizeof(item), p, len))
			return fail(-EINVAL, err, errlen,
				    "\"%s\": item too long", s);
		eq = strchr(item, '=');
		if (!eq || eq == item || !eq[1])
			return fail(-EINVAL, err, errlen,
				    "\"%s\": expected key=value", item);
		*eq = '\0';
		value = eq + 1;
		for (k = 0; k < 5; k++)
			if (!strcmp(item, keys[k]))
				break;
		if (k == 5)
			return fail(-EINVAL, err, errlen,
				    "unknown key \"%s\" (keys: width, init, min, max, mask)",
				    item);
		if (have[k])
			return fail(-EINVAL, err, errlen,
				    "key \"%s\" given twice", item);
		rc = parse_u64(value, UINT32_MAX, &v);
		if (rc == -ERANGE)
			return fail(-EINVAL, err, errlen,
				    "%s=%s does not fit in 32 bits", item, value);
		if (rc)
			return fail(-EINVAL, err, errlen,
				    "%s=%s: not a number (decimal or 0x-hex)",
				    item, value);
		val[k] = (uint32_t)v;
		have[k] = 1;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!have[0])
		return fail(-EINVAL, err, errlen, "\"%s\": missing width", s);
	r.width = val[0];
	r.init = val[1];
	r.min = val[2];
	/* Defaults depend on the width; a bad width is reported just below. */
	r.max = have[3] ? val[3] : low_ones(r.width > 32 ? 32 : r.width);
	r.mask = have[4] ? val[4] : low_ones(r.width > 32 ? 32 : r.width);
	rc = ev_field_validate(&r, 0, err, errlen);
	if (rc)
		return rc;
	*f = r;
	return 0;
}

void ev_profile_to_rec(const struct ev_profile *p, uint32_t backups_per_plane,
		       struct mrc_ev_profile_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->id = p->id;
	rec->type = (uint8_t)p->type;
	rec->state = (uint8_t)p->state;
	rec->format = p->format;
	rec->ev_count = p->ev_count;
	rec->ev_min_active = p->ev_min_active;
	rec->event_mask = p->event_mask;
	rec->backups_per_plane = backups_per_plane;
	rec->gso_burst = p->gso_burst;
	rec->srv6_block = p->srv6_block;
	rec->n_fmt = (uint8_t)p->layout.n_fmt;
	memcpy(rec->fmt, p->layout.fmt, sizeof(rec->fmt));
	rec->n_fields = (uint8_t)p->layout.n_fields;
	for (uint32_t i = 0; i < p->layout.n_fields && i < MRC_EV_MAX_FIELDS; i++) {
		const struct ev_field *f = &p->layout.fields[i];

		rec->field[i] = (struct mrc_ev_field_rec){
			f->width, f->init, f->min, f->max, f->mask };
	}
	rec->n_explicit = (uint16_t)p->n_explicit;
	for (uint32_t i = 0; i < p->n_explicit && i < MRC_MAX_EVS; i++) {
		rec->explicit_evs[i].ev = p->explicit_evs[i].ev;
		rec->explicit_evs[i].plane = p->explicit_evs[i].plane;
	}
}

int ev_profile_from_rec(const struct mrc_ev_profile_rec *rec,
			struct ev_profile *p, uint32_t *backups_per_plane)
{
	if (rec->n_fmt > EV_MAX_FIELDS || rec->n_fields > EV_MAX_FIELDS ||
	    rec->n_explicit > MRC_MAX_EVS || rec->type > EV_PROFILE_AUTO ||
	    rec->state > EV_PROFILE_STATE_ONLINE ||
	    rec->gso_burst < 1 || rec->gso_burst > MRC_GSO_BURST_MAX)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->id = rec->id;
	p->type = (enum ev_profile_type)rec->type;
	p->state = (enum ev_profile_state)rec->state;
	p->format = rec->format;
	p->ev_count = rec->ev_count;
	p->ev_min_active = rec->ev_min_active;
	p->event_mask = rec->event_mask;
	p->gso_burst = rec->gso_burst;
	p->srv6_block = rec->srv6_block;
	p->layout.n_fmt = rec->n_fmt;
	memcpy(p->layout.fmt, rec->fmt, sizeof(p->layout.fmt));
	p->layout.n_fields = rec->n_fields;
	for (uint32_t i = 0; i < rec->n_fields; i++) {
		const struct mrc_ev_field_rec *f = &rec->field[i];

		p->layout.fields[i] = (struct ev_field){
			f->width, f->init, f->min, f->max, f->mask };
	}
	p->n_explicit = rec->n_explicit;
	for (uint32_t i = 0; i < rec->n_explicit; i++) {
		p->explicit_evs[i].ev = rec->explicit_evs[i].ev;
		p->explicit_evs[i].plane = rec->explicit_evs[i].plane;
	}
	if (backups_per_plane)
		*backups_per_plane = rec->backups_per_plane;
	return 0;
}
