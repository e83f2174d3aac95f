// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Executors of `profile cc create|set|online|offline|show|delete`: CC
 * profiles in mrc_cc_profiles, and what `show --derive` works out with
 * nscc_defaults() for this host.
 */
#include "agent/cmd_exec.h"

#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "agent/cc_view.h"
#include "agent/cmd_cc_params.h"
#include "common/ev_profile.h"

/* A value for text: with its unit, or what it stands for when 0. */
static const char *cc_value_str(const struct cc_param *p, uint32_t v, char *buf,
				size_t len)
{
	if (!v && p->zero)
		snprintf(buf, len, "(derived: %s)", p->zero);
	else if (p->unit == CC_US)
		snprintf(buf, len, "%.6g us", v / 1e3);
	else if (p->unit == CC_BYTES)
		snprintf(buf, len, "%u bytes", v);
	else if (p->unit == CC_FRACTION || p->unit == CC_FACTOR)
		snprintf(buf, len, "%.3f", v / 1000.0);
	else if (p->unit == CC_MBPS)
		snprintf(buf, len, "%u Mb/s", v);
	else
		snprintf(buf, len, "%u", v);
	return buf;
}

static void apply_cc_edit(struct mrc_cc_profile_rec *r, const struct cc_profile_edit *e)
{
	for (size_t i = 0; i < N_CC_PARAMS; i++)
		if (e->set[i])
			memcpy((char *)r + cc_params[i].off, &e->val[i], sizeof(e->val[i]));
	if (e->algo >= 0)
		r->algo = (uint8_t)e->algo;
	if (e->qa == 0)
		r->flags |= MRC_CC_F_DISABLE_QA;
	else if (e->qa == 1)
		r->flags &= ~(uint32_t)MRC_CC_F_DISABLE_QA;
	if (e->pacing == 0)
		r->flags |= MRC_CC_F_NO_PACING;
	else if (e->pacing == 1)
		r->flags &= ~(uint32_t)MRC_CC_F_NO_PACING;
}

static int read_cc_profile(struct ctx *c, uint32_t id, struct mrc_cc_profile_rec *r)
{
	if (!bpf_map_lookup_elem(c->env->maps.cc_profiles, &id, r))
		return 0;
	if (errno == ENOENT)
		return failure(c, "there is no CC profile %u (create it: mrcctl profile cc "
			       "create %u)", id, id);
	return failure(c, "reading CC profile %u: %s", id, strerror(errno));
}

static int write_cc_profile(struct ctx *c, const struct mrc_cc_profile_rec *r,
			    uint64_t flags)
{
	uint32_t id = r->id;

	if (!bpf_map_update_elem(c->env->maps.cc_profiles, &id, r, flags))
		return 0;
	if (errno == EEXIST)
		return failure(c, "CC profile %u exists already (change it with mrcctl "
			       "profile cc set %u, or delete it first)", id, id);
	if (errno == E2BIG)
		return failure(c, "no room for CC profile %u: %d profiles exist", id,
			       MRC_MAX_PROFILES);
	return failure(c, "writing CC profile %u: %s", id, strerror(errno));
}

/* `show --derive`: the parameters a window of this host would run with. */
struct cc_derived {
	uint32_t planes, link_mbps;
	char link_from[IFNAMSIZ + 16];	/* "--link-mbps", "profile", "device p1" */
	uint64_t bdp;
	struct mrc_nscc_params p;
};

static void cc_profile_json(struct json *j, const struct mrc_cc_profile_rec *r,
			    const struct cc_derived *d)
{
	j_obj(j, NULL);
	j_u64(j, "id", r->id);
	j_str(j, "state", ev_profile_state_name((enum ev_profile_state)r->state));
	j_str(j, "algo", cc_algo_name(r->algo));
	j_bool(j, "enabled", r->algo == MRC_CC_NSCC);
	for (size_t i = 0; i < N_CC_PARAMS; i++) {
		const struct cc_param *p = &cc_params[i];

		if (p->unit == CC_FRACTION || p->unit == CC_FACTOR)
			j_dbl(j, p->key, cc_value(r, p) / 1000.0);
		else
			j_u64(j, p->key, cc_value(r, p));
	}
	j_bool(j, "quick_adapt", !(r->flags & MRC_CC_F_DISABLE_QA));
	j_bool(j, "pacing", !(r->flags & MRC_CC_F_NO_PACING));
	j_u64(j, "flags", r->flags);
	if (d) {
		j_obj(j, "derived");
		j_u64(j, "planes", d->planes);
		j_u64(j, "link_mbps", d->link_mbps);
		j_str(j, "link_from", d->link_from);
		j_u64(j, "bdp_bytes", d->bdp);
		cmd_cc_params_json(j, &d->p);
		j_end(j);
	}
	j_end(j);
}

static void cc_profile_text(struct ctx *c, const struct mrc_cc_profile_rec *r,
			    const struct cc_derived *d)
{
	char buf[64];

	fprintf(c->out, "cc profile %u: %s, algo %s%s\n", r->id,
		ev_profile_state_name((enum ev_profile_state)r->state),
		cc_algo_name(r->algo), r->algo == MRC_CC_NONE ?
		" (the window never limits: only the responder's does)" : "");
	for (size_t i = 0; i < N_CC_PARAMS; i++)
		fprintf(c->out, "  %-14s %s\n", cc_params[i].name,
			cc_value_str(&cc_params[i], cc_value(r, &cc_params[i]), buf,
				     sizeof(buf)));
	fprintf(c->out, "  %-14s %s\n", "quick_adapt",
		r->flags & MRC_CC_F_DISABLE_QA ? "off (--disable-qa)" : "on");
	fprintf(c->out, "  %-14s %s\n", "pacing",
		r->flags & MRC_CC_F_NO_PACING ? "off (--disable-pacing)" : "on");
	if (!d)
		return;
	fprintf(c->out, "derived for MTU %u, %u planes of %u Mb/s (%s): BDP %" PRIu64
		" bytes\n", d->p.mtu, d->planes, d->link_mbps, d->link_from, d->bdp);
	cmd_cc_params_text(c, &d->p, "  ");
}

static void print_cc_profile(struct ctx *c, const struct mrc_cc_profile_rec *r,
			     const struct cc_derived *d)
{
	struct json j = { .f = c->out };

	if (c->json)
		cc_profile_json(&j, r, d);
	else
		cc_profile_text(c, r, d);
}

CMD_EXECUTOR(cmd_exec_profile_cc_create)
{
	const struct cmd_cc_profile_req *e = &req->u.cc_profile;
	uint32_t id = e->id;
	struct mrc_cc_profile_rec r = {
		.state = EV_PROFILE_STATE_INIT,
		.algo = MRC_CC_NSCC,
		.gamma_milli = CC_GAMMA_DEFAULT,
		.max_md_jump_milli = CC_MAX_MD_JUMP_DEFAULT,
		.qa_gate = CC_QA_GATE_DEFAULT,
	};

	r.id = (uint16_t)id;
	apply_cc_edit(&r, &e->edit);
	if (write_cc_profile(c, &r, BPF_NOEXIST))
		return AGENT_EXIT_FAIL;
	if (c->json)
		print_cc_profile(c, &r, NULL);
	else
		fprintf(c->out, "cc profile %u created: INIT\n", id);
	return 0;
}

CMD_EXECUTOR(cmd_exec_profile_cc_set)
{
	const struct cmd_cc_profile_req *e = &req->u.cc_profile;
	uint32_t id = e->id;
	struct mrc_cc_profile_rec r;

	if (read_cc_profile(c, id, &r))
		return AGENT_EXIT_FAIL;
	if (r.state == EV_PROFILE_STATE_ONLINE)
		return failure(c, "profile %u is ONLINE: take it OFFLINE to edit it "
			       "(mrcctl profile cc offline %u)", id, id);
	apply_cc_edit(&r, &e->edit);
	if (write_cc_profile(c, &r, BPF_EXIST))
		return AGENT_EXIT_FAIL;
	print_cc_profile(c, &r, NULL);
	return 0;
}

/* What ONLINE promises: parameters a window can run with. */
static int check_cc_profile(struct ctx *c, const struct mrc_cc_profile_rec *r)
{
	uint64_t base = r->base_rtt_ns, target = r->target_delay_ns ? r->target_delay_ns :
						  base * 3 / 4;

	if (r->algo != MRC_CC_NONE && r->algo != MRC_CC_NSCC)
		return failure(c, "profile %u: unknown algorithm %u (nscc or none)", r->id,
			       r->algo);
	if (r->flags & ~(uint32_t)MRC_CC_F_ALL)
		return failure(c, "profile %u: unknown flags 0x%x", r->id,
			       r->flags & ~(uint32_t)MRC_CC_F_ALL);
	if (!r->gamma_milli || r->gamma_milli > 1000)
		return failure(c, "profile %u: gamma %.3f is outside (0, 1]", r->id,
			       r->gamma_milli / 1000.0);
	if (!r->max_md_jump_milli || r->max_md_jump_milli > 1000)
		return failure(c, "profile %u: max_md_jump %.3f is outside (0, 1]", r->id,
			       r->max_md_jump_milli / 1000.0);
	if (r->qa_gate > CC_QA_GATE_MAX)
		return failure(c, "profile %u: qa_gate %u is above %d", r->id, r->qa_gate,
			       CC_QA_GATE_MAX);
	if (r->fi_scale_milli > CC_FACTOR_MAX)
		return failure(c, "profile %u: fi_scale %.3f is above 1000", r->id,
			       r->fi_scale_milli / 1000.0);
	if (r->link_mbps > CC_LINK_MBPS_MAX)
		return failure(c, "profile %u: link %u Mb/s is above %u", r->id,
			       r->link_mbps, CC_LINK_MBPS_MAX);
	if (base && r->target_delay_ns > CC_BASE_RTTS_MAX * base)
		return failure(c, "profile %u: target delay %u ns is over 100 base RTTs",
			       r->id, r->target_delay_ns);
	if (base && r->adjust_period_ns > CC_BASE_RTTS_MAX * base)
		return failure(c, "profile %u: adjust period %u ns is over 100 base RTTs",
			       r->id, r->adjust_period_ns);
	if (r->qa_threshold_ns && r->qa_threshold_ns < target)
		return failure(c, "profile %u: qa_threshold %u ns is below the target "
			       "delay %" PRIu64 " ns (quick adapt is for delays far above it)",
			       r->id, r->qa_threshold_ns, target);
	if (r->max_cwnd_bytes && r->max_cwnd_bytes < 2 * CC_MTU_MIN)
		return failure(c, "profile %u: max_cwnd %u bytes is less than two packets "
			       "of the smallest MTU (%d bytes)", r->id, r->max_cwnd_bytes,
			       CC_MTU_MIN);
	if (r->max_cwnd_bytes && r->adjust_bytes > r->max_cwnd_bytes)
		return failure(c, "profile %u: adjust_bytes %u is above max_cwnd %u bytes "
			       "(a window would never ack that much between increases)",
			       r->id, r->adjust_bytes, r->max_cwnd_bytes);
	if (r->max_cwnd_bytes && r->eta_bytes > r->max_cwnd_bytes)
		return failure(c, "profile %u: eta %u bytes is above max_cwnd %u bytes",
			       r->id, r->eta_bytes, r->max_cwnd_bytes);
	return 0;
}

static int profile_cc_state(struct ctx *c, uint32_t id, enum ev_profile_state to)
{
	struct mrc_cc_profile_rec r;
	char err[EV_ERR_LEN];

	if (read_cc_profile(c, id, &r))
		return AGENT_EXIT_FAIL;
	/* CC profiles follow the EV profiles' state machine. */
	if (ev_profile_check_transition((enum ev_profile_state)r.state, to, err,
					sizeof(err)))
		return failure(c, "profile %u: %s", id, err);
	if (to == EV_PROFILE_STATE_ONLINE && check_cc_profile(c, &r))
		return AGENT_EXIT_FAIL;
	r.state = (uint8_t)to;
	if (write_cc_profile(c, &r, BPF_EXIST))
		return AGENT_EXIT_FAIL;
	if (c->json)
		print_cc_profile(c, &r, NULL);
	else
		fprintf(c->out, "cc profile %u is %s\n", id, ev_profile_state_name(to));
	return 0;
}

CMD_EXECUTOR(cmd_exec_profile_cc_online)
{
	return profile_cc_state(c, req->u.profile.id, EV_PROFILE_STATE_ONLINE);
}

CMD_EXECUTOR(cmd_exec_profile_cc_offline)
{
	return profile_cc_state(c, req->u.profile.id, EV_PROFILE_STATE_OFFLINE);
}

/* A device's speed in Mb/s as sysfs says it; 0 when it does not. */
static uint32_t device_mbps(const char *ifname)
{
	char path[64 + IFNAMSIZ];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v > 0 && v <= (long)CC_LINK_MBPS_MAX ? (uint32_t)v : 0;
}

/*
 * What nscc_defaults() makes of the profile for `req`: planes default to
 * this host's, the link speed to the profile's, then to the slowest plane
 * device that reports one.
 */
static int derive_cc(struct ctx *c, const struct mrc_cc_profile_rec *r,
		     const struct cc_derive_req *req, struct cc_derived *d)
{
	uint64_t base = r->base_rtt_ns ? r->base_rtt_ns : MRC_NSCC_ASSUMED_BASE_RTT_NS;
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->planes = req->planes ? req->planes : c->env->n_planes;
	if (!d->planes)
		return failure(c, "this mrcd serves no planes: give --planes N");
	d->link_mbps = req->link_mbps;
	snprintf(d->link_from, sizeof(d->link_from), "--link-mbps");
	if (!d->link_mbps && r->link_mbps) {
		d->link_mbps = r->link_mbps;
		snprintf(d->link_from, sizeof(d->link_from), "profile");
	}
	for (i = 0; !d->link_mbps && i < c->env->n_planes; i++) {
		uint32_t mbps = device_mbps(c->env->planes[i].name);

		if (mbps && (!d->link_mbps || mbps < d->link_mbps)) {
			d->link_mbps = mbps;
			snprintf(d->link_from, sizeof(d->link_from), "device %s",
				 c->env->planes[i].name);
		}
	}
	if (!d->link_mbps)
		return failure(c, "no plane device reports its speed: give --link-mbps N "
			       "(or set it in the profile)");
	nscc_defaults(r, req->mtu, d->planes, d->link_mbps, &d->p);
	/* The BDP the defaults start from, as nscc_defaults() computes it. */
	d->bdp = (uint64_t)d->planes * d->link_mbps * 125000 / 1000 * base / 1000000;
	if (d->bdp < req->mtu)
		d->bdp = req->mtu;
	return 0;
}

CMD_EXECUTOR(cmd_exec_profile_cc_show)
{
	const struct cc_derive_req *dreq = &req->u.cc_show.derive;
	struct json j = { .f = c->out };
	uint32_t ids[MRC_MAX_PROFILES];
	struct mrc_cc_profile_rec r;
	struct cc_derived d;
	int n, i, rc = 0;

	if (req->u.cc_show.which.has_id) {
		if (read_cc_profile(c, req->u.cc_show.which.id, &r))
			return AGENT_EXIT_FAIL;
		if (dreq->on && derive_cc(c, &r, dreq, &d))
			return AGENT_EXIT_FAIL;
		print_cc_profile(c, &r, dreq->on ? &d : NULL);
		return 0;
	}
	n = cmd_profile_ids(c->env->maps.cc_profiles, ids, MRC_MAX_PROFILES);
	if (c->json)
		j_arr(&j, NULL);
	else if (!n)
		fprintf(c->out, "no CC profiles\n");
	for (i = 0; i < n; i++) {
		if (read_cc_profile(c, ids[i], &r)) {
			rc = AGENT_EXIT_FAIL;
			continue;
		}
		if (c->json)
			cc_profile_json(&j, &r, NULL);
		else
			cc_profile_text(c, &r, NULL);
	}
	if (c->json)
		j_arr_end(&j);
	return rc;
}

CMD_EXECUTOR(cmd_exec_profile_cc_delete)
{
	struct json j = { .f = c->out };
	uint32_t id = req->u.profile.id;
	struct mrc_cc_profile_rec r;

	if (read_cc_profile(c, id, &r))
		return AGENT_EXIT_FAIL;
	if (r.state == EV_PROFILE_STATE_ONLINE)
		return failure(c, "profile %u is ONLINE: take it OFFLINE before deleting "
			       "it (mrcctl profile cc offline %u)", id, id);
	if (bpf_map_delete_elem(c->env->maps.cc_profiles, &id))
		return failure(c, "deleting CC profile %u: %s", id, strerror(errno));
	if (c->json) {
		j_obj(&j, NULL);
		j_u64(&j, "deleted", id);
		j_end(&j);
	} else {
		fprintf(c->out, "cc profile %u deleted\n", id);
	}
	return 0;
}
