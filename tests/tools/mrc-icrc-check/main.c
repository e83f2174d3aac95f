// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-icrc-check [--acks] PCAP: reads a classic pcap (Ethernet frames, as
 * dumpcap -P writes) and checks the RoCEv2 ICRC trailer of every MRC DATA
 * packet (UDP to 4791, opcodes WRITE_FIRST..WRITE_ONLY_IMM), or with
 * --acks of every SACK and NACK, against the bit-by-bit reference of
 * tests/include/icrc_ref.h, which shares nothing with the fast path's
 * table. Prints "data N good G bad B" ("acks N ..." with --acks; other
 * frames are skipped); exit 0 when it could read the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/types.h>
#include "mrc/abi.h"
#include "../../include/icrc_ref.h"

#define PCAP_MAGIC	0xa1b2c3d4u	/* microseconds, our byte order */
#define PCAP_MAGIC_NS	0xa1b23c4du
#define FRAME_MAX	16384

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t major, minor;
	int32_t zone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_rec_hdr {
	uint32_t sec, frac, caplen, len;
};

/* The opcode of a whole IPv4 (no options) or IPv6 UDP frame to the MRC port, or -1. */
static int mrc_opcode(const __u8 *f, uint32_t len)
{
	size_t l4;

	if (len < ETH_LEN + 40 || (get16(f + 12) != 0x0800 && get16(f + 12) != 0x86dd))
		return -1;
	if (get16(f + 12) == 0x0800 ? f[ETH_LEN] != 0x45 || f[ETH_LEN + 9] != 17 :
	    f[ETH_LEN + 6] != 17)
		return -1;
	l4 = l4_off(f);
	if (len < l4 + 8 + 12 || get16(f + l4 + 2) != MRC_UDP_PORT_DEFAULT ||
	    l4 + get16(f + l4 + 4) > len)
		return -1;
	return f[l4 + 8];
}

/* Is the opcode one of the kind asked for: DATA, or SACK and NACK? */
static int wanted(int opcode, int acks)
{
	if (opcode < 0)
		return 0;
	if (acks)
		return opcode == MRC_OP_SACK || opcode == MRC_OP_NACK;
	return opcode >= MRC_OP_WRITE_FIRST && opcode <= MRC_OP_WRITE_ONLY_IMM;
}

int main(int argc, char **argv)
{
	static __u8 frame[FRAME_MAX];
	unsigned long data = 0, good = 0;
	struct pcap_file_hdr fh;
	struct pcap_rec_hdr rh;
	const char *path;
	int acks;
	FILE *in;

	acks = argc == 3 && !strcmp(argv[1], "--acks");
	if (argc != 2 + acks) {
		fprintf(stderr, "usage: mrc-icrc-check [--acks] PCAP\n");
		return 2;
	}
	path = argv[1 + acks];
	in = fopen(path, "rb");
	if (!in || fread(&fh, sizeof(fh), 1, in) != 1 ||
	    (fh.magic != PCAP_MAGIC && fh.magic != PCAP_MAGIC_NS) || fh.linktype != 1) {
		fprintf(stderr, "mrc-icrc-check: %s: not a classic Ethernet pcap\n", path);
		return 2;
	}
	while (fread(&rh, sizeof(rh), 1, in) == 1) {
		if (rh.caplen > FRAME_MAX || fread(frame, 1, rh.caplen, in) != rh.caplen) {
			fprintf(stderr, "mrc-icrc-check: truncated record\n");
			return 2;
		}
		/* A frame cut by the snap length cannot be checked. */
		if (rh.caplen != rh.len || !wanted(mrc_opcode(frame, rh.caplen), acks))
			continue;
		data++;
		good += icrc_of_trailer(frame) == icrc_ref(frame);
	}
	printf("%s %lu good %lu bad %lu\n", acks ? "acks" : "data", data, good,
	       data - good);
	return 0;
}
