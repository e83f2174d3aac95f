// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* A host's QPs in a few numbers: see qp_summary.h. */
#include "agent/qp_summary.h"

#include <string.h>

/* Does a come before b among the worst? */
static bool worse(const struct qp_worst *a, const struct qp_worst *b)
{
	bool ea = a->state == MRC_QPS_ERROR, eb = b->state == MRC_QPS_ERROR;

	if (ea != eb)
		return ea;
	if (a->bad != b->bad)
		return a->bad > b->bad;
	return a->qpn < b->qpn;
}

/* Keep w among the QP_WORST_MAX worst, in order (insertion into a short list). */
static void consider(struct qp_summary *s, const struct qp_worst *w)
{
	unsigned int i = s->n_worst < QP_WORST_MAX ? s->n_worst++ : QP_WORST_MAX;

	if (i == QP_WORST_MAX) {
		if (!worse(w, &s->worst[QP_WORST_MAX - 1]))
			return;
		i = QP_WORST_MAX - 1;
	}
	while (i > 0 && worse(w, &s->worst[i - 1])) {
		s->worst[i] = s->worst[i - 1];
		i--;
	}
	s->worst[i] = *w;
}

void qp_summarise(const struct qp_table *t, struct qp_summary *s)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t r = 0; r < t->n; r++) {
		const struct mrc_qp_info *qi = &t->info[r];
		struct qp_ev_counts evs = {};
		struct qp_worst w;

		if (qi->state == MRC_QPS_RESET || qi->state > MRC_QPS_ERROR)
			continue;
		s->by_state[qi->state]++;
		s->total++;
		if (t->evs && t->evs[r])
			qp_ev_counts(t->evs[r], qi->n_evs, &evs);
		s->in_error += qi->state == MRC_QPS_ERROR;
		s->with_bad_evs += evs.bad > 0;
		s->bad_evs += evs.bad;
		if (qi->state != MRC_QPS_ERROR && !evs.bad)
			continue;
		w = (struct qp_worst){ .qpn = mrc_slot_to_qpn(t->slot[r]),
				       .state = qi->state, .bad = evs.bad,
				       .n_evs = qi->n_evs };
		consider(s, &w);
	}
}

bool limit_near(uint32_t use, uint32_t max)
{
	return max && (uint64_t)use * 100 > (uint64_t)max * LIMIT_WARN_PERCENT;
}
