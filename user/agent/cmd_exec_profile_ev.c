// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Executors of `profile ev create|set|online|offline|show|delete`: EV
 * profiles in mrc_ev_profiles, edited through common/ev_profile.h.
 */
#include "agent/cmd_exec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "common/ev_profile.h"

static int read_ev_profile(struct ctx *c, uint32_t id, struct ev_profile *p,
			   uint32_t *backups)
{
	struct mrc_ev_profile_rec *rec = malloc(sizeof(*rec));
	int rc = 0;

	if (!rec)
		return failure(c, "out of memory");
	if (bpf_map_lookup_elem(c->env->maps.ev_profiles, &id, rec))
		rc = errno == ENOENT ?
			failure(c, "there is no EV profile %u (create it: mrcctl profile "
				"ev create %u --type ...)", id, id) :
			failure(c, "reading EV profile %u: %s", id, strerror(errno));
	else if (ev_profile_from_rec(rec, p, backups))
		rc = failure(c, "EV profile %u in the map is damaged: delete it "
			     "(mrcctl profile ev delete %u)", id, id);
	free(rec);
	return rc;
}

static int write_ev_profile(struct ctx *c, const struct ev_profile *p,
			    uint32_t backups, uint64_t flags)
{
	struct mrc_ev_profile_rec *rec = malloc(sizeof(*rec));
	uint32_t id = p->id;
	int rc = 0;

	if (!rec)
		return failure(c, "out of memory");
	ev_profile_to_rec(p, backups, rec);
	if (bpf_map_update_elem(c->env->maps.ev_profiles, &id, rec, flags))
		rc = errno == EEXIST ?
			failure(c, "EV profile %u exists already (change it with "
				"mrcctl profile ev set %u, or delete it first)", id, id) :
		     errno == E2BIG ?
			failure(c, "no room for EV profile %u: %d profiles exist", id,
				MRC_MAX_PROFILES) :
			failure(c, "writing EV profile %u: %s", id, strerror(errno));
	free(rec);
	return rc;
}

/* An SRv6 locator block as mrcctl takes it: "fd00:5::/32", "-" for none. */
static const char *srv6_block_str(uint32_t block_be, char *buf, size_t size)
{
	unsigned char a[16] = {};

	if (!block_be)
		return "-";
	memcpy(a, &block_be, 4);
	if (!inet_ntop(AF_INET6, a, buf, (socklen_t)size))
		return "?";
	strncat(buf, "/32", size - strlen(buf) - 1);
	return buf;
}

static void ev_profile_json(struct json *j, const struct ev_profile *p,
			    uint32_t backups)
{
	unsigned int i;

	j_obj(j, NULL);
	j_u64(j, "id", p->id);
	j_str(j, "type", ev_profile_type_name(p->type));
	j_str(j, "state", ev_profile_state_name(p->state));
	j_str(j, "format", cmd_ev_format_name(p->format));
	if (p->format == MRC_EVF_SRV6) {
		char block[INET6_ADDRSTRLEN + 4];

		j_str(j, "srv6_block", srv6_block_str(p->srv6_block, block, sizeof(block)));
	}
	j_u64(j, "ev_count", p->ev_count);
	j_u64(j, "min_active", p->ev_min_active);
	j_u64(j, "backups_per_plane", backups);
	j_u64(j, "gso_burst", p->gso_burst);
	j_u64(j, "event_mask", p->event_mask);
	j_arr(j, "fmt_fields");
	for (i = 0; i < p->layout.n_fmt && i < EV_MAX_FIELDS; i++)
		j_u64(j, NULL, p->layout.fmt[i]);
	j_arr_end(j);
	j_arr(j, "fields");
	for (i = 0; i < p->layout.n_fields && i < EV_MAX_FIELDS; i++) {
		const struct ev_field *f = &p->layout.fields[i];

		j_obj(j, NULL);
		j_u64(j, "width", f->width);
		j_hex(j, "init", f->init);
		j_hex(j, "min", f->min);
		j_hex(j, "max", f->max);
		j_hex(j, "mask", f->mask);
		j_end(j);
	}
	j_arr_end(j);
	j_arr(j, "explicit");
	for (i = 0; i < p->n_explicit && i < MRC_MAX_EVS; i++) {
		j_obj(j, NULL);
		j_hex(j, "ev", p->explicit_evs[i].ev);
		j_u64(j, "plane", p->explicit_evs[i].plane);
		j_end(j);
	}
	j_arr_end(j);
	j_end(j);
}

static void ev_profile_text(struct ctx *c, const struct ev_profile *p,
			    uint32_t backups)
{
	unsigned int i;

	fprintf(c->out, "ev profile %u: %s, %s, %s\n", p->id,
		ev_profile_type_name(p->type), cmd_ev_format_name(p->format),
		ev_profile_state_name(p->state));
	fprintf(c->out, "  ev_count %u, min_active %u, backups/plane %u, event_mask 0x%x\n",
		p->ev_count, p->ev_min_active, backups, p->event_mask);
	fprintf(c->out, "  gso_burst %u (packets of one EV per UDP GSO send)\n",
		p->gso_burst);
	if (p->format == MRC_EVF_SRV6) {
		char block[INET6_ADDRSTRLEN + 4];

		fprintf(c->out, "  srv6-block %s (uSID carrier: block, the EV's high 16 bits)\n",
			srv6_block_str(p->srv6_block, block, sizeof(block)));
	}
	fprintf(c->out, "  fmt-fields ");
	for (i = 0; i < p->layout.n_fmt && i < EV_MAX_FIELDS; i++)
		fprintf(c->out, "%s%u", i ? "," : "", p->layout.fmt[i]);
	fputc('\n', c->out);
	for (i = 0; i < p->layout.n_fields && i < EV_MAX_FIELDS; i++) {
		const struct ev_field *f = &p->layout.fields[i];

		fprintf(c->out, "  field %u: width=%u,init=0x%x,min=0x%x,max=0x%x,mask=0x%x\n",
			i + 1, f->width, f->init, f->min, f->max, f->mask);
	}
	if (p->type == EV_PROFILE_EXPLICIT) {
		fprintf(c->out, "  explicit EVs (%u):", p->n_explicit);
		for (i = 0; i < p->n_explicit && i < MRC_MAX_EVS; i++)
			fprintf(c->out, "%s0x%x@%u", i % 8 ? " " : "\n    ",
				p->explicit_evs[i].ev, p->explicit_evs[i].plane);
		fputc('\n', c->out);
	}
}

static void print_ev_profile(struct ctx *c, const struct ev_profile *p,
			     uint32_t backups)
{
	struct json j = { .f = c->out };

	if (c->json)
		ev_profile_json(&j, p, backups);
	else
		ev_profile_text(c, p, backups);
}

static int apply_explicit_list(struct ctx *c, struct ev_profile *p,
			       const struct cmd_ev_profile_req *e)
{
	char err[EV_ERR_LEN];
	unsigned int k;

	if (ev_profile_clear_explicit(p, err, sizeof(err)))
		return failure(c, "%s", err);
	for (k = 0; k < e->n_explicit; k++)
		if (ev_profile_add_explicit(p, e->explicit_evs[k].ev,
					    e->explicit_evs[k].plane, err, sizeof(err)))
			return failure(c, "%s", err);
	return 0;
}

static int apply_fields(struct ctx *c, struct ev_profile *p,
			const struct cmd_ev_profile_req *e)
{
	char err[EV_ERR_LEN];
	unsigned int i;

	if (ev_profile_clear_fields(p, err, sizeof(err)))
		return failure(c, "%s", err);
	for (i = 0; i < e->n_fields; i++)
		if (ev_profile_add_field(p, &e->fields[i], err, sizeof(err)))
			return failure(c, "%s", err);
	return 0;
}

static int apply_counts(struct ctx *c, struct ev_profile *p,
			const struct cmd_ev_profile_req *e)
{
	uint32_t count = p->ev_count, min_active = p->ev_min_active;
	char err[EV_ERR_LEN];

	if (e->has_count) {
		count = e->count;
		/* A new count without --min-active takes the default for it. */
		min_active = EV_MIN_ACTIVE_DEFAULT;
	}
	if (e->has_min_active)
		min_active = e->min_active;
	if (ev_profile_set_counts(p, count, min_active, err, sizeof(err)))
		return failure(c, "%s", err);
	return 0;
}

/*
 * Apply every edit to `p`, in an order where later ones see earlier ones
 * (the format resets the wire fields); with_format false leaves the
 * format out (create sets it). Nothing is written on failure.
 */
static int apply_ev_profile_edit(struct ctx *c, struct ev_profile *p,
				 uint32_t *backups, const struct cmd_ev_profile_req *e,
				 bool with_format)
{
	bool format = with_format && e->has_format;
	char err[EV_ERR_LEN];

	if (p->state == EV_PROFILE_STATE_ONLINE &&
	    (format || e->has_fmt_fields || e->n_fields || e->has_explicit ||
	     e->has_count || e->has_min_active || e->has_backups || e->has_burst ||
	     e->has_srv6_block))
		return failure(c, "profile %u is ONLINE: take it OFFLINE to edit it "
			       "(mrcctl profile ev offline %u)", p->id, p->id);
	if (format && ev_profile_set_format(p, e->format, err, sizeof(err)))
		return failure(c, "%s", err);
	if (e->has_srv6_block &&
	    ev_profile_set_srv6_block(p, e->srv6_block, err, sizeof(err)))
		return failure(c, "%s", err);
	if (e->has_fmt_fields &&
	    ev_profile_set_fmt_fields(p, e->fmt, e->n_fmt, err, sizeof(err)))
		return failure(c, "%s", err);
	if (e->n_fields && apply_fields(c, p, e))
		return AGENT_EXIT_FAIL;
	if (e->has_explicit && apply_explicit_list(c, p, e))
		return AGENT_EXIT_FAIL;
	if ((e->has_count || e->has_min_active) && apply_counts(c, p, e))
		return AGENT_EXIT_FAIL;
	if (e->has_event_mask)
		ev_profile_set_event_mask(p, e->event_mask);
	if (e->has_backups)
		*backups = e->backups;
	if (e->has_burst)
		p->gso_burst = e->burst;
	return 0;
}

CMD_EXECUTOR(cmd_exec_profile_ev_create)
{
	const struct cmd_ev_profile_req *e = &req->u.ev_profile;
	uint32_t id = e->id, backups = 0;
	char err[EV_ERR_LEN];
	struct ev_profile *p;
	int rc;

	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	rc = ev_profile_init(p, (uint16_t)id, e->type, e->format, err, sizeof(err));
	if (rc)
		rc = failure(c, "%s", err);
	if (!rc)	/* the format is done by ev_profile_init */
		rc = apply_ev_profile_edit(c, p, &backups, e, false);
	if (!rc)
		rc = write_ev_profile(c, p, backups, BPF_NOEXIST);
	if (!rc && c->json)
		print_ev_profile(c, p, backups);
	else if (!rc)
		fprintf(c->out, "ev profile %u created: %s, %s, INIT\n", id,
			ev_profile_type_name(p->type), cmd_ev_format_name(p->format));
	free(p);
	return rc;
}

CMD_EXECUTOR(cmd_exec_profile_ev_set)
{
	const struct cmd_ev_profile_req *e = &req->u.ev_profile;
	struct ev_profile *p;
	uint32_t backups;
	int rc;

	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	rc = read_ev_profile(c, e->id, p, &backups);
	if (!rc)
		rc = apply_ev_profile_edit(c, p, &backups, e, true);
	if (!rc)
		rc = write_ev_profile(c, p, backups, BPF_EXIST);
	if (!rc)
		print_ev_profile(c, p, backups);
	free(p);
	return rc;
}

/*
 * Going ONLINE: the profile must be valid, and it must be able to build a
 * QP's EV table on this host's planes with its backups.
 */
static int check_generates(struct ctx *c, const struct ev_profile *p,
			   uint32_t backups)
{
	struct ev_table_entry *table = calloc(MRC_MAX_EVS, sizeof(*table));
	unsigned int n_planes = c->env->n_planes ? c->env->n_planes : 1, n;
	char err[EV_ERR_LEN];
	int rc = 0;

	if (!table)
		return failure(c, "out of memory");
	if (ev_profile_generate(p, n_planes, backups, table, MRC_MAX_EVS, &n, err,
				sizeof(err)))
		rc = failure(c, "profile %u cannot build an EV table on %u plane%s: %s",
			     p->id, n_planes, n_planes == 1 ? "" : "s", err);
	free(table);
	return rc;
}

static int profile_ev_state(struct ctx *c, uint32_t id, enum ev_profile_state to)
{
	char err[EV_ERR_LEN];
	struct ev_profile *p;
	uint32_t backups;
	int rc;

	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	rc = read_ev_profile(c, id, p, &backups);
	if (!rc && ev_profile_set_state(p, to, err, sizeof(err)))
		rc = failure(c, "profile %u: %s", id, err);
	if (!rc && to == EV_PROFILE_STATE_ONLINE)
		rc = check_generates(c, p, backups);
	if (!rc)
		rc = write_ev_profile(c, p, backups, BPF_EXIST);
	if (!rc && c->json)
		print_ev_profile(c, p, backups);
	else if (!rc)
		fprintf(c->out, "ev profile %u is %s\n", id, ev_profile_state_name(p->state));
	free(p);
	return rc;
}

CMD_EXECUTOR(cmd_exec_profile_ev_online)
{
	return profile_ev_state(c, req->u.profile.id, EV_PROFILE_STATE_ONLINE);
}

CMD_EXECUTOR(cmd_exec_profile_ev_offline)
{
	return profile_ev_state(c, req->u.profile.id, EV_PROFILE_STATE_OFFLINE);
}

CMD_EXECUTOR(cmd_exec_profile_ev_show)
{
	struct json j = { .f = c->out };
	uint32_t ids[MRC_MAX_PROFILES], id = req->u.profile.id, backups;
	bool one = req->u.profile.has_id;
	struct ev_profile *p;
	int n, i, rc = 0;

	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	if (one) {
		rc = read_ev_profile(c, id, p, &backups);
		if (!rc)
			print_ev_profile(c, p, backups);
		free(p);
		return rc;
	}
	n = cmd_profile_ids(c->env->maps.ev_profiles, ids, MRC_MAX_PROFILES);
	if (c->json)
		j_arr(&j, NULL);
	else if (!n)
		fprintf(c->out, "no EV profiles (QPs use the built-in AUTO profile)\n");
	for (i = 0; i < n; i++) {
		if (read_ev_profile(c, ids[i], p, &backups)) {
			rc = AGENT_EXIT_FAIL;
			continue;
		}
		if (c->json)
			ev_profile_json(&j, p, backups);
		else
			ev_profile_text(c, p, backups);
	}
	if (c->json)
		j_arr_end(&j);
	free(p);
	return rc;
}

CMD_EXECUTOR(cmd_exec_profile_ev_delete)
{
	struct json j = { .f = c->out };
	uint32_t id = req->u.profile.id, backups;
	struct ev_profile *p;
	int rc;

	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	rc = read_ev_profile(c, id, p, &backups);
	if (!rc && p->state == EV_PROFILE_STATE_ONLINE)
		rc = failure(c, "profile %u is ONLINE: take it OFFLINE before deleting it "
			     "(mrcctl profile ev offline %u)", id, id);
	if (!rc && bpf_map_delete_elem(c->env->maps.ev_profiles, &id))
		rc = failure(c, "deleting EV profile %u: %s", id, strerror(errno));
	free(p);
	if (rc)
		return rc;
	if (c->json) {
		j_obj(&j, NULL);
		j_u64(&j, "deleted", id);
		j_end(&j);
	} else {
		fprintf(c->out, "ev profile %u deleted\n", id);
	}
	return 0;
}
