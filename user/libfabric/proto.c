// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The provider's wire protocol: immediates, credits, control payloads and
 * the CM message (proto.h says what each is for).
 */
#include "proto.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

/* ---- immediates ---------------------------------------------------------- */

uint32_t mfi_imm_encode(const struct mfi_imm *imm)
{
	uint32_t v = (uint32_t)imm->kind << MFI_IMM_KIND_SHIFT;

	if (imm->last)
		v |= MFI_IMM_LAST;
	if (imm->cqdata)
		v |= MFI_IMM_CQDATA;
	v |= (imm->slot & MFI_IMM_SLOT_MASK) << MFI_IMM_SLOT_SHIFT;
	v |= imm->credits & MFI_IMM_CREDIT_MASK;
	return v;
}

int mfi_imm_decode(uint32_t v, struct mfi_imm *out)
{
	uint32_t kind = v >> MFI_IMM_KIND_SHIFT;

	memset(out, 0, sizeof(*out));
	if (kind < MFI_K_MSG || kind > MFI_K_READ_RESP)
		return -EPROTO;
	out->kind = (enum mfi_kind)kind;
	out->last = v & MFI_IMM_LAST;
	out->cqdata = v & MFI_IMM_CQDATA;
	out->slot = (v >> MFI_IMM_SLOT_SHIFT) & MFI_IMM_SLOT_MASK;
	out->credits = v & MFI_IMM_CREDIT_MASK;
	/* Only message fragments end or carry CQ data; a credit names no slot. */
	if (out->kind != MFI_K_MSG && (out->last || out->cqdata))
		return -EPROTO;
	if (out->kind == MFI_K_CREDIT && out->slot)
		return -EPROTO;
	return 0;
}

/* ---- credits ------------------------------------------------------------- */

int mfi_credits_init(struct mfi_credits *c, uint32_t nslots)
{
	memset(c, 0, sizeof(*c));
	if (nslots < 1 || nslots > MFI_MAX_SLOTS)
		return -EINVAL;
	c->nslots = nslots;
	c->tx_credits = nslots;
	return 0;
}

int mfi_tx_take_slot(struct mfi_credits *c)
{
	int slot;

	if (!c->tx_credits)
		return -EAGAIN;
	slot = (int)(c->tx_seq % c->nslots);
	c->tx_seq++;
	c->tx_credits--;
	return slot;
}

int mfi_tx_grant(struct mfi_credits *c, uint32_t credits)
{
	if (credits > c->nslots - c->tx_credits)
		return -EPROTO;
	c->tx_credits += credits;
	return 0;
}

int mfi_rx_arrive(struct mfi_credits *c, uint32_t slot)
{
	if (c->rx_seq - c->rx_freed_seq >= c->nslots)
		return -EPROTO;	/* the sender wrote without credit */
	if (slot != c->rx_seq % c->nslots)
		return -EPROTO;
	c->freed[slot] = 0;
	c->rx_seq++;
	return 0;
}

int mfi_rx_free(struct mfi_credits *c, uint32_t slot)
{
	uint32_t busy = c->rx_seq - c->rx_freed_seq;
	uint32_t first = c->rx_freed_seq % c->nslots;

	/* Is `slot` one of the busy ones, first .. first + busy - 1 (mod)? */
	if (slot >= c->nslots || (slot + c->nslots - first) % c->nslots >= busy ||
	    c->freed[slot])
		return -EPROTO;
	c->freed[slot] = 1;
	while (c->rx_freed_seq != c->rx_seq &&
	       c->freed[c->rx_freed_seq % c->nslots]) {
		c->freed[c->rx_freed_seq % c->nslots] = 0;
		c->rx_freed_seq++;
		c->rx_pending++;
	}
	return 0;
}

uint32_t mfi_rx_take_credits(struct mfi_credits *c)
{
	uint32_t n = c->rx_pending > MFI_IMM_CREDIT_MASK ?
		     MFI_IMM_CREDIT_MASK : c->rx_pending;

	c->rx_pending -= n;
	return n;
}

bool mfi_rx_credit_due(const struct mfi_credits *c)
{
	uint32_t half = c->nslots / 2 ? c->nslots / 2 : 1;

	return c->rx_pending >= half;
}

/* ---- control payloads ---------------------------------------------------- */

static void put_u32(uint8_t *buf, uint32_t v)
{
	v = htonl(v);
	memcpy(buf, &v, 4);
}

static uint32_t get_u32(const uint8_t *buf)
{
	uint32_t v;

	memcpy(&v, buf, 4);
	return ntohl(v);
}

void mfi_put_u64(uint8_t *buf, uint64_t v)
{
	put_u32(buf, (uint32_t)(v >> 32));
	put_u32(buf + 4, (uint32_t)v);
}

uint64_t mfi_get_u64(const uint8_t *buf)
{
	return (uint64_t)get_u32(buf) << 32 | get_u32(buf + 4);
}

void mfi_read_req_encode(const struct mfi_read_req *r, uint8_t *buf)
{
	mfi_put_u64(buf, r->id);
	mfi_put_u64(buf + 8, r->raddr);
	mfi_put_u64(buf + 16, r->rkey);
	mfi_put_u64(buf + 24, r->len);
	mfi_put_u64(buf + 32, r->laddr);
	put_u32(buf + 40, r->lrkey);
}

void mfi_read_req_decode(const uint8_t *buf, struct mfi_read_req *r)
{
	r->id = mfi_get_u64(buf);
	r->raddr = mfi_get_u64(buf + 8);
	r->rkey = mfi_get_u64(buf + 16);
	r->len = mfi_get_u64(buf + 24);
	r->laddr = mfi_get_u64(buf + 32);
	r->lrkey = get_u32(buf + 40);
}

void mfi_read_resp_encode(const struct mfi_read_resp *r, uint8_t *buf)
{
	mfi_put_u64(buf, r->id);
	put_u32(buf + 8, (uint32_t)r->status);
}

void mfi_read_resp_decode(const uint8_t *buf, struct mfi_read_resp *r)
{
	r->id = mfi_get_u64(buf);
	r->status = (int32_t)get_u32(buf + 8);
}

/* ---- connection manager -------------------------------------------------- */

#define CM_MAGIC	0x4d524346u	/* "MRCF" */
#define CM_VERSION	1
#define CM_ADDRS_OFF	48
#define CM_DATA_OFF	(CM_ADDRS_OFF + MFI_CM_MAX_ADDRS * 20)

static int encode_addr(const struct sockaddr_storage *ss, uint8_t *out)
{
	memset(out, 0, 20);
	if (ss->ss_family == AF_INET) {
		out[0] = 4;
		memcpy(out + 4, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		out[0] = 6;
		memcpy(out + 4, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else {
		return -EINVAL;
	}
	return 0;
}

static int decode_addr(const uint8_t *in, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (in[0] == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, in + 4, 4);
	} else if (in[0] == 6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, in + 4, 16);
	} else {
		return -EPROTO;
	}
	return 0;
}

/* Do the QP and ring fields of a REQ or ACCEPT make sense? */
static bool connection_fields_sane(const struct mfi_cm_msg *m)
{
	return m->qpn && m->qpn <= 0xffffff && m->psn <= 0xffffff &&
	       m->key && m->key != 0x00ffff00u &&
	       m->path_mtu >= 256 && m->path_mtu <= 9000 &&
	       m->nslots >= 1 && m->nslots <= MFI_MAX_SLOTS &&
	       m->slot_size >= 64 && m->slot_size <= (16u << 20) &&
	       m->n_addrs >= 1 && m->ring_addr &&
	       m->ring_addr + (uint64_t)m->slot_size * m->nslots > m->ring_addr;
}

static bool carries_connection(enum mfi_cm_type type)
{
	return type == MFI_CM_REQ || type == MFI_CM_ACCEPT;
}

int mfi_cm_encode(const struct mfi_cm_msg *m, uint8_t buf[MFI_CM_WIRE_LEN])
{
	memset(buf, 0, MFI_CM_WIRE_LEN);
	if (m->type < MFI_CM_REQ || m->type > MFI_CM_BYE ||
	    m->n_addrs > MFI_CM_MAX_ADDRS || m->cm_len > MFI_CM_DATA_MAX ||
	    (carries_connection(m->type) && !connection_fields_sane(m)))
		return -EINVAL;
	put_u32(buf, CM_MAGIC);
	buf[4] = 0;
	buf[5] = CM_VERSION;
	buf[6] = (uint8_t)m->type;
	buf[7] = m->n_addrs;
	put_u32(buf + 8, m->qpn);
	put_u32(buf + 12, m->psn);
	put_u32(buf + 16, m->key);
	put_u32(buf + 20, m->path_mtu);
	mfi_put_u64(buf + 24, m->ring_addr);
	put_u32(buf + 32, m->ring_rkey);
	put_u32(buf + 36, m->slot_size);
	put_u32(buf + 40, m->nslots);
	buf[44] = (uint8_t)(m->cm_len >> 8);
	buf[45] = (uint8_t)m->cm_len;
	for (int i = 0; i < m->n_addrs; i++)
		if (encode_addr(&m->addrs[i], buf + CM_ADDRS_OFF + i * 20))
			return -EINVAL;
	memcpy(buf + CM_DATA_OFF, m->cm_data, m->cm_len);
	return 0;
}

int mfi_cm_decode(const uint8_t buf[MFI_CM_WIRE_LEN], struct mfi_cm_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (get_u32(buf) != CM_MAGIC || buf[4] != 0 || buf[5] != CM_VERSION)
		return -EPROTO;
	m->type = (enum mfi_cm_type)buf[6];
	m->n_addrs = buf[7];
	m->qpn = get_u32(buf + 8);
	m->psn = get_u32(buf + 12);
	m->key = get_u32(buf + 16);
	m->path_mtu = get_u32(buf + 20);
	m->ring_addr = mfi_get_u64(buf + 24);
	m->ring_rkey = get_u32(buf + 32);
	m->slot_size = get_u32(buf + 36);
	m->nslots = get_u32(buf + 40);
	m->cm_len = (uint16_t)(buf[44] << 8 | buf[45]);
	if (m->type < MFI_CM_REQ || m->type > MFI_CM_BYE ||
	    m->n_addrs > MFI_CM_MAX_ADDRS || m->cm_len > MFI_CM_DATA_MAX)
		return -EPROTO;
	if (carries_connection(m->type) && !connection_fields_sane(m))
		return -EPROTO;
	for (int i = 0; i < m->n_addrs; i++)
		if (decode_addr(buf + CM_ADDRS_OFF + i * 20, &m->addrs[i]))
			return -EPROTO;
	memcpy(m->cm_data, buf + CM_DATA_OFF, m->cm_len);
	return 0;
}
