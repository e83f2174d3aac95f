-- SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
--
-- Wireshark/tshark dissector for MRC-XDP's wire format (docs/WIRE.md,
-- include/mrc/abi.h). Load it with
--     tshark -X lua_script:tools/mrc.lua -r capture.pcap
-- or copy it to ~/.local/lib/wireshark/plugins/. It takes UDP port 4791
-- (preference "mrc.udp_port") away from the built-in RoCEv2/InfiniBand
-- dissector: MRC uses that port with opcodes RoCE does not know.
--
-- Every length is checked before a field is read, so short or garbled
-- packets end in an expert item, never in a Lua error. Only arithmetic is
-- used on bit fields (no bit/bit32 library), so the script runs on every
-- Lua version Wireshark has shipped; the one exception, the ICRC check
-- (preference "mrc.icrc"), uses bit32 or bit when there is one.

local mrc = Proto("mrc", "MRC (Multipath Reliable Connection)")

local DEFAULT_PORT = 4791

local BTH_LEN, METH_LEN, TSETH_LEN, RETH_LEN, IMM_LEN = 12, 4, 4, 16, 4
local SACKH_LEN, NACKH_LEN, EPH_LEN = 32, 12, 40

local F_ACK_REQ, F_RETX, F_TS = 0x80, 0x40, 0x20

local OP = {
	WRITE_FIRST = 0xC6, WRITE_MIDDLE = 0xC7, WRITE_LAST = 0xC8,
	WRITE_LAST_IMM = 0xC9, WRITE_ONLY = 0xCA, WRITE_ONLY_IMM = 0xCB,
	ACK = 0xD1, EP_REQUEST = 0xD8, EP_RESPONSE = 0xD9,
	SACK = 0xDC, NACK = 0xDD, PROBE = 0xDE,
}

local opcode_names = {}
for name, v in pairs(OP) do opcode_names[v] = name end

local nack_reasons = {
	[0x01] = "TRIMMED",
	[0x02] = "TRIMMED_LASTHOP",
	[0x06] = "NO_BITMAP",
	[0x07] = "NO_PKT_BUFFER",
	[0x0A] = "NO_RESOURCE",
	[0x0B] = "PSN_OOR_WINDOW",
	[0x13] = "REMOTE_ACCESS",
	[0x19] = "UNEXP_EVENT",
}

local ep_kinds = { [1] = "EV probe", [2] = "port status" }

local m_names = {
	[0] = "NONE",
	[1] = "SKIP_ONCE (CE mark seen)",
	[2] = "ALWAYS_SKIP",
	[3] = "reserved",
}

local dscp_marks = {
	[0x2C] = "trimmed mid-path",
	[0x2D] = "trimmed at the last hop",
}

-- Fields -------------------------------------------------------------------
local pf = {
	-- BTH
	bth = ProtoField.bytes("mrc.bth", "Base transport header"),
	opcode = ProtoField.uint8("mrc.opcode", "Opcode", base.HEX, opcode_names),
	-- Bytes 1-4: the destination QP's connection key (docs/WIRE.md
	-- section 10); 0x00FFFF00 from an interop QP (reserved, pkey, reserved).
	key = ProtoField.uint32("mrc.key", "Connection key", base.HEX),
	dqpn = ProtoField.uint24("mrc.dqpn", "Destination QP", base.HEX),
	flags = ProtoField.uint8("mrc.flags", "Flags", base.HEX),
	f_ack_req = ProtoField.bool("mrc.flags.ack_req", "ACK request", 8, nil, F_ACK_REQ),
	f_retx = ProtoField.bool("mrc.flags.retx", "Retransmission", 8, nil, F_RETX),
	f_ts = ProtoField.bool("mrc.flags.ts", "TSETH present", 8, nil, F_TS),
	f_rsvd = ProtoField.uint8("mrc.flags.reserved", "Reserved flag bits", base.HEX, nil, 0x1F),
	psn = ProtoField.uint24("mrc.psn", "PSN", base.DEC),

	-- METH
	meth = ProtoField.bytes("mrc.meth", "MRC extended transport header"),
	wimm_msn = ProtoField.uint16("mrc.meth.wimm_msn", "WRITE-IMM message number", base.DEC),
	msn = ProtoField.uint16("mrc.meth.msn", "Message number", base.DEC),

	-- TSETH
	tseth = ProtoField.bytes("mrc.tseth", "Timestamp extension"),
	send_ts = ProtoField.uint16("mrc.tseth.send_ts", "Send time (128 ns units)", base.DEC),
	ts_rsvd = ProtoField.uint16("mrc.tseth.reserved", "Reserved", base.HEX),

	-- RETH
	reth = ProtoField.bytes("mrc.reth", "RDMA extended transport header"),
	vaddr = ProtoField.uint64("mrc.reth.vaddr", "Virtual address", base.HEX),
	rkey = ProtoField.uint32("mrc.reth.rkey", "Remote key", base.HEX),
	length = ProtoField.uint32("mrc.reth.length", "Message length", base.DEC),

	imm = ProtoField.uint32("mrc.imm", "Immediate data", base.HEX),
	payload_len = ProtoField.uint32("mrc.payload_len", "Payload length", base.DEC),
	payload = ProtoField.bytes("mrc.payload", "Payload"),
	icrc = ProtoField.uint32("mrc.icrc", "ICRC (RoCEv2 invariant CRC)", base.HEX),
	icrc_good = ProtoField.bool("mrc.icrc.good", "ICRC good"),
	trimmed = ProtoField.bool("mrc.trimmed", "Trimmed header"),
	trim_mark = ProtoField.uint8("mrc.trim_mark", "DSCP trim mark", base.HEX, dscp_marks),

	-- SACK
	sack = ProtoField.bytes("mrc.sack", "SACK extension"),
	sack_cack = ProtoField.uint24("mrc.sack.cack", "Cumulative ack PSN", base.DEC),
	sack_cack_rsvd = ProtoField.uint8("mrc.sack.cack_rsvd", "Reserved", base.HEX),
	sack_ev = ProtoField.uint32("mrc.sack.ev", "Echoed entropy value", base.HEX),
	sack_off = ProtoField.uint16("mrc.sack.bitmap_off", "Bitmap offset", base.DEC),
	sack_m = ProtoField.uint8("mrc.sack.m", "M", base.DEC, m_names, 0x03),
	sack_m_rsvd = ProtoField.uint8("mrc.sack.m_rsvd", "Reserved M bits", base.HEX, nil, 0xFC),
	sack_rsvd = ProtoField.uint8("mrc.sack.rsvd", "Reserved", base.HEX),
	sack_bitmap = ProtoField.uint64("mrc.sack.bitmap", "Bitmap", base.HEX),
	sack_ts_echo = ProtoField.uint16("mrc.sack.ts_echo", "Echoed send time", base.DEC),
	sack_ooo = ProtoField.uint16("mrc.sack.ooo_count", "Out-of-order count", base.DEC),
	sack_rcv = ProtoField.uint32("mrc.sack.rcv_bytes", "Received (256-byte units)", base.DEC),
	sack_rcv_b = ProtoField.uint64("mrc.sack.rcv_bytes_total", "Received bytes", base.DEC),
	sack_penalty = ProtoField.uint8("mrc.sack.penalty", "Window penalty", base.DEC),
	sack_rsvd2 = ProtoField.bytes("mrc.sack.rsvd2", "Reserved"),
	sack_hold = ProtoField.uint16("mrc.sack.hold", "Responder hold (128 ns units)", base.DEC),
	sack_hold_ns = ProtoField.uint32("mrc.sack.hold_ns", "Responder hold (ns)", base.DEC),
	sack_acked = ProtoField.uint24("mrc.sack.acked_psn", "Selectively acked PSN", base.DEC),
	sack_count = ProtoField.uint32("mrc.sack.acked_count", "Selectively acked PSNs", base.DEC),
	sack_list = ProtoField.string("mrc.sack.acked", "Selectively acked"),

	-- NACK
	nack = ProtoField.bytes("mrc.nack", "NACK extension"),
	nack_cack = ProtoField.uint24("mrc.nack.cack", "Cumulative ack PSN", base.DEC),
	nack_cack_rsvd = ProtoField.uint8("mrc.nack.cack_rsvd", "Reserved", base.HEX),
	nack_ev = ProtoField.uint32("mrc.nack.ev", "Echoed entropy value", base.HEX),
	nack_reason = ProtoField.uint8("mrc.nack.reason", "Reason", base.HEX, nack_reasons),
	nack_m = ProtoField.uint8("mrc.nack.m", "M", base.DEC, m_names),
	nack_ts_echo = ProtoField.uint16("mrc.nack.ts_echo", "Echoed send time", base.DEC),

	-- Endpoint control (EV probes, port status)
	ep = ProtoField.bytes("mrc.ep", "Endpoint header"),
	ep_kind = ProtoField.uint8("mrc.ep.kind", "Kind", base.DEC, ep_kinds),
	ep_plane = ProtoField.uint8("mrc.ep.plane", "Plane", base.DEC),
	ep_status = ProtoField.uint8("mrc.ep.status", "Port status", base.DEC,
				     { [0] = "down", [1] = "up" }),
	ep_flags = ProtoField.uint8("mrc.ep.flags", "Flags", base.HEX),
	ep_req_id = ProtoField.uint32("mrc.ep.req_id", "Request id", base.DEC),
	ep_ev = ProtoField.uint32("mrc.ep.ev", "Entropy value", base.HEX),
	ep_reply_port = ProtoField.uint16("mrc.ep.reply_port", "Reply port", base.DEC),
	ep_service = ProtoField.uint32("mrc.ep.service_ns", "Responder service time (ns, host order)", base.DEC),
	ep_t_tx = ProtoField.uint64("mrc.ep.t_tx_ns", "Requester send time (ns, host order)", base.DEC),
	ep_t_rx = ProtoField.uint64("mrc.ep.t_rx_ns", "Requester receive time (ns, host order)", base.DEC),

	probe = ProtoField.bool("mrc.probe", "Reliability probe"),
	-- libmrc's TTL-limited path discovery datagrams (docs/WIRE.md 8a)
	path_probe = ProtoField.bool("mrc.path_probe", "EV path probe (TTL-limited, not an MRC packet)"),
	path_probe_ev = ProtoField.uint16("mrc.path_probe.ev", "Probed EV (UDP source port)", base.HEX),
	body = ProtoField.bytes("mrc.body", "Undecoded body"),
}

local field_list = {}
for _, f in pairs(pf) do field_list[#field_list + 1] = f end
mrc.fields = field_list

local ef = {
	malformed = ProtoExpert.new("mrc.malformed", "Malformed MRC packet",
				    expert.group.MALFORMED, expert.severity.ERROR),
	trimmed = ProtoExpert.new("mrc.trimmed.expert", "Trimmed MRC data packet (headers only)",
				  expert.group.SEQUENCE, expert.severity.NOTE),
	unknown_op = ProtoExpert.new("mrc.unknown_opcode", "Opcode not used by MRC",
				     expert.group.UNDECODED, expert.severity.WARN),
	reserved_op = ProtoExpert.new("mrc.reserved_opcode", "Reserved MRC opcode (not sent yet)",
				      expert.group.UNDECODED, expert.severity.NOTE),
	icrc_bad = ProtoExpert.new("mrc.icrc.bad", "ICRC does not match the packet",
		expert.group.CHECKSUM, expert.severity.ERROR),
	icrc_unchecked = ProtoExpert.new("mrc.icrc.unchecked",
		"ICRC not checked (no bit library, or the IP/UDP headers are not at hand)",
		expert.group.CHECKSUM, expert.severity.NOTE),
	trailing = ProtoExpert.new("mrc.trailing", "Bytes after the MRC headers",
				   expert.group.PROTOCOL, expert.severity.WARN),
	probe_no_ack = ProtoExpert.new("mrc.probe_no_ack_req", "Probe without ACK request",
				       expert.group.PROTOCOL, expert.severity.WARN),
	nack = ProtoExpert.new("mrc.nack.expert", "NACK",
			       expert.group.SEQUENCE, expert.severity.NOTE),
}
mrc.experts = { ef.malformed, ef.trimmed, ef.unknown_op, ef.reserved_op,
		ef.trailing, ef.probe_no_ack, ef.nack, ef.icrc_bad, ef.icrc_unchecked }

-- Preferences ---------------------------------------------------------------
mrc.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT,
	"UDP destination port of MRC (mrcd's setting; 4791 unless changed)")
mrc.prefs.icrc = Pref.bool("Packets end in a RoCEv2 ICRC", false,
	"The QPs were created with MRC_QP_ICRC (mrc-perf --icrc): DATA, SACK, " ..
	"NACK and PROBE end in a 4-byte ICRC, which is shown and checked")

-- DSCP of the enclosing IP header, to tell trim marks apart. Optional:
-- a Wireshark without these fields simply shows no mark.
local function field_or_nil(name)
	local ok, f = pcall(Field.new, name)
	if ok then return f end
	return nil
end
local ip_dscp = field_or_nil("ip.dsfield.dscp")
local ipv6_dscp = field_or_nil("ipv6.tclass.dscp")

local function last_value(f)
	if not f then return nil end
	local all = { f() }
	if #all == 0 then return nil end
	return all[#all].value
end


-- Helpers -------------------------------------------------------------------
local function bit_set(v, mask)
	return math.floor(v / mask) % 2 == 1
end

local function malformed(pinfo, tree, text)
	tree:add_proto_expert_info(ef.malformed, text)
	pinfo.cols.info:append(" [Malformed: " .. text .. "]")
end

-- Anything beyond `used` bytes is shown raw and flagged.
local function trailing(tvb, tree, used, what)
	local extra = tvb:len() - used
	if extra > 0 then
		local item = tree:add(pf.body, tvb(used, extra))
		item:add_proto_expert_info(ef.trailing,
			string.format("%d byte(s) after the %s", extra, what))
	end
end

-- Returns opcode, flags byte, dqpn, psn.
local function dissect_bth(tvb, tree)
	local t = tree:add(pf.bth, tvb(0, BTH_LEN))
	t:set_text("Base transport header (BTH)")
	t:add(pf.opcode, tvb(0, 1))
	t:add(pf.key, tvb(1, 4))
	t:add(pf.dqpn, tvb(5, 3))
	local fl = t:add(pf.flags, tvb(8, 1))
	fl:add(pf.f_ack_req, tvb(8, 1))
	fl:add(pf.f_retx, tvb(8, 1))
	fl:add(pf.f_ts, tvb(8, 1))
	fl:add(pf.f_rsvd, tvb(8, 1))
	t:add(pf.psn, tvb(9, 3))
	return tvb(0, 1):uint(), tvb(8, 1):uint(), tvb(5, 3):uint(), tvb(9, 3):uint()
end

local function dissect_data(tvb, pinfo, tree, op, flags)
	local has_ts = bit_set(flags, F_TS)
	local has_imm = op == OP.WRITE_LAST_IMM or op == OP.WRITE_ONLY_IMM
	local hdr = BTH_LEN + METH_LEN + RETH_LEN
	if has_ts then hdr = hdr + TSETH_LEN end
	if has_imm then hdr = hdr + IMM_LEN end
	local len = tvb:len()
	if len < hdr then
		malformed(pinfo, tree, string.format(
			"%d bytes, headers of this data packet need %d", len, hdr))
		if len > BTH_LEN then tree:add(pf.body, tvb(BTH_LEN)) end
		return
	end

	local off = BTH_LEN
	local t = tree:add(pf.meth, tvb(off, METH_LEN))
	t:set_text("MRC extended transport header (METH)")
	t:add(pf.wimm_msn, tvb(off, 2))
	t:add(pf.msn, tvb(off + 2, 2))
	off = off + METH_LEN

	if has_ts then
		t = tree:add(pf.tseth, tvb(off, TSETH_LEN))
		t:set_text("Timestamp extension (TSETH)")
		t:add(pf.send_ts, tvb(off, 2))
		t:add(pf.ts_rsvd, tvb(off + 2, 2))
		off = off + TSETH_LEN
	end

	t = tree:add(pf.reth, tvb(off, RETH_LEN))
	t:set_text("RDMA extended transport header (RETH)")
	t:add(pf.vaddr, tvb(off, 8))
	t:add(pf.rkey, tvb(off + 8, 4))
	t:add(pf.length, tvb(off + 12, 4))
	off = off + RETH_LEN

	if has_imm then
		tree:add(pf.imm, tvb(off, IMM_LEN))
		off = off + IMM_LEN
	end

	local plen = len - off
	if plen > 0 then
		tree:add(pf.payload_len, tvb(off, plen), plen):set_generated()
		tree:add(pf.payload, tvb(off, plen))
	else
		-- Only the headers: what a trimming switch forwards.
		local it = tree:add(pf.payload_len, tvb(0, off), 0)
		it:set_generated()
		it = tree:add(pf.trimmed, tvb(0, off), true)
		it:set_generated()
		it:add_proto_expert_info(ef.trimmed)
		local dscp = last_value(ip_dscp) or last_value(ipv6_dscp)
		if dscp and dscp_marks[dscp] then
			tree:add(pf.trim_mark, tvb(0, off), dscp):set_generated()
		end
		pinfo.cols.info:append(" [trimmed]")
	end
end

local function dissect_sack(tvb, pinfo, tree, psn)
	local len = tvb:len()
	if len < BTH_LEN + SACKH_LEN then
		malformed(pinfo, tree, string.format(
			"%d bytes, a SACK needs %d", len, BTH_LEN + SACKH_LEN))
		if len > BTH_LEN then tree:add(pf.body, tvb(BTH_LEN)) end
		return
	end
	local o = BTH_LEN
	local t = tree:add(pf.sack, tvb(o, SACKH_LEN))
	t:set_text("SACK extension")
	t:add(pf.sack_cack_rsvd, tvb(o, 1))
	t:add(pf.sack_cack, tvb(o + 1, 3))
	t:add(pf.sack_ev, tvb(o + 4, 4))
	t:add(pf.sack_off, tvb(o + 8, 2))
	t:add(pf.sack_m, tvb(o + 10, 1))
	t:add(pf.sack_m_rsvd, tvb(o + 10, 1))
	t:add(pf.sack_rsvd, tvb(o + 11, 1))
	local bm = t:add(pf.sack_bitmap, tvb(o + 12, 8))
	t:add(pf.sack_ts_echo, tvb(o + 20, 2))
	t:add(pf.sack_ooo, tvb(o + 22, 2))
	t:add(pf.sack_rcv, tvb(o + 24, 4))
	t:add(pf.sack_rcv_b, tvb(o + 24, 4),
	      UInt64(tvb(o + 24, 4):uint()) * 256):set_generated()
	t:add(pf.sack_penalty, tvb(o + 28, 1))
	t:add(pf.sack_rsvd2, tvb(o + 29, 1))
	t:add(pf.sack_hold, tvb(o + 30, 2))
	t:add(pf.sack_hold_ns, tvb(o + 30, 2), tvb(o + 30, 2):uint() * 128):set_generated()

	-- Bit i acknowledges PSN cack + 1 + bitmap_off + i (24-bit arithmetic).
	local cack = tvb(o + 1, 3):uint()
	local boff = tvb(o + 8, 2):uint()
	local words = { tvb(o + 16, 4):uint(), tvb(o + 12, 4):uint() }  -- lo, hi
	local acked = {}
	for i = 0, 63 do
		local w = words[math.floor(i / 32) + 1]
		if math.floor(w / 2 ^ (i % 32)) % 2 == 1 then
			acked[#acked + 1] = (cack + 1 + boff + i) % 0x1000000
		end
	end
	local brange = tvb(o + 12, 8)
	bm:add(pf.sack_count, brange, #acked):set_generated()
	local strs = {}
	for i, p in ipairs(acked) do
		bm:add(pf.sack_acked, brange, p):set_generated()
		strs[i] = tostring(p)
	end
	bm:add(pf.sack_list, brange,
	       #strs > 0 and table.concat(strs, ",") or "none"):set_generated()

	pinfo.cols.info:append(string.format(" CACK=%d acked=%d", cack, #acked))
	trailing(tvb, tree, BTH_LEN + SACKH_LEN, "SACK extension")
end

local function dissect_nack(tvb, pinfo, tree)
	local len = tvb:len()
	if len < BTH_LEN + NACKH_LEN then
		malformed(pinfo, tree, string.format(
			"%d bytes, a NACK needs %d", len, BTH_LEN + NACKH_LEN))
		if len > BTH_LEN then tree:add(pf.body, tvb(BTH_LEN)) end
		return
	end
	local o = BTH_LEN
	local t = tree:add(pf.nack, tvb(o, NACKH_LEN))
	t:set_text("NACK extension")
	t:add(pf.nack_cack_rsvd, tvb(o, 1))
	t:add(pf.nack_cack, tvb(o + 1, 3))
	t:add(pf.nack_ev, tvb(o + 4, 4))
	local r = tvb(o + 8, 1):uint()
	local rname = nack_reasons[r] or string.format("unknown 0x%02x", r)
	local it = t:add(pf.nack_reason, tvb(o + 8, 1))
	it:add_proto_expert_info(ef.nack, "NACK " .. rname)
	t:add(pf.nack_m, tvb(o + 9, 1))
	t:add(pf.nack_ts_echo, tvb(o + 10, 2))
	pinfo.cols.info:append(string.format(" CACK=%d %s", tvb(o + 1, 3):uint(), rname))
	trailing(tvb, tree, BTH_LEN + NACKH_LEN, "NACK extension")
end

-- The time fields are written and read by one host in its own byte
-- order (little endian on every host we run on).
local function dissect_ep(tvb, pinfo, tree, op)
	local len = tvb:len()
	if len < BTH_LEN + EPH_LEN then
		malformed(pinfo, tree, string.format(
			"%d bytes, an endpoint packet needs %d", len, BTH_LEN + EPH_LEN))
		if len > BTH_LEN then tree:add(pf.body, tvb(BTH_LEN)) end
		return
	end
	local o = BTH_LEN
	local t = tree:add(pf.ep, tvb(o, EPH_LEN))
	t:set_text("Endpoint header")
	local kind = tvb(o, 1):uint()
	t:add(pf.ep_kind, tvb(o, 1))
	t:add(pf.ep_plane, tvb(o + 1, 1))
	if kind == 2 then t:add(pf.ep_status, tvb(o + 2, 1)) end
	t:add(pf.ep_flags, tvb(o + 3, 1))
	t:add(pf.ep_req_id, tvb(o + 4, 4))
	t:add(pf.ep_ev, tvb(o + 8, 4))
	t:add(pf.ep_reply_port, tvb(o + 12, 2))
	t:add_le(pf.ep_service, tvb(o + 16, 4))
	t:add_le(pf.ep_t_tx, tvb(o + 24, 8))
	t:add_le(pf.ep_t_rx, tvb(o + 32, 8))
	if kind == 1 then
		pinfo.cols.info:append(string.format(" EV probe id=%d EV=0x%x plane=%d",
			tvb(o + 4, 4):uint(), tvb(o + 8, 4):uint(), tvb(o + 1, 1):uint()))
	elseif kind == 2 then
		pinfo.cols.info:append(string.format(" port status plane=%d %s",
			tvb(o + 1, 1):uint(), tvb(o + 2, 1):uint() == 1 and "up" or "down"))
	end
	trailing(tvb, tree, BTH_LEN + EPH_LEN, "endpoint header")
end

local function dissect_probe(tvb, pinfo, tree, flags)
	local it = tree:add(pf.probe, tvb(0, BTH_LEN), true)
	it:set_generated()
	if not bit_set(flags, F_ACK_REQ) then
		it:add_proto_expert_info(ef.probe_no_ack)
	end
	trailing(tvb, tree, BTH_LEN, "probe's BTH")
end

-- A path discovery probe: 4 zero bytes to the MRC port, sent with TTL 2 so
-- that it expires at the spine (docs/WIRE.md 8a). Also what an ICMP Time
-- Exceeded quotes, so the path is read off the quote's source port.
local PATH_PROBE_LEN = 4

local function is_path_probe(tvb)
	return tvb:len() == PATH_PROBE_LEN and tvb(0, PATH_PROBE_LEN):uint() == 0
end

local function dissect_path_probe(tvb, pinfo, root)
	local ev = pinfo.src_port
	root:add(pf.path_probe, tvb(), true)
	root:add(pf.path_probe_ev, ev):set_generated()
	root:append_text(string.format(", EV path probe, EV 0x%04x", ev))
	pinfo.cols.info:set(string.format("EV path probe EV=0x%04x", ev))
end

-- Entry point ---------------------------------------------------------------
-- RoCEv2 ICRC (docs/WIRE.md section 12) -------------------------------------
-- With the preference on, DATA, SACK, NACK and PROBE end in 4 bytes of
-- ICRC (a trimmed header has lost them with its payload). The check needs
-- XOR: bit32 (Lua 5.2) or LuaBitOp's bit (Wireshark's own); without
-- either the ICRC is shown, not checked.
local bits = rawget(_G, "bit32") or rawget(_G, "bit")
local ip_proto = field_or_nil("ip")
local ipv6_proto = field_or_nil("ipv6")
local udp_proto = field_or_nil("udp")

local crc_table
local function crc_table_init()
	crc_table = {}
	for i = 0, 255 do
		local c = i
		for _ = 1, 8 do
			if c % 2 == 1 then
				c = bits.bxor(bits.rshift(c, 1), 0xEDB88320)
			else
				c = bits.rshift(c, 1)
			end
		end
		crc_table[i] = c
	end
end

local function u32(x)
	if x < 0 then return x + 4294967296 end
	return x
end

local function crc_byte(crc, b)
	return bits.bxor(crc_table[bits.band(bits.bxor(crc, b), 0xff)],
		bits.rshift(crc, 8))
end

-- The last (innermost) occurrence of a protocol's tree item, or nil.
local function last_info(f)
	if not f then return nil end
	local all = { f() }
	return all[#all]
end

-- The bytes of the IP and UDP headers before MRC's, their variant fields
-- set to ones, behind 8 bytes of 0xFF for the LRH; nil when not at hand.
local function icrc_outer_bytes()
	local ip4, ip6, udp = last_info(ip_proto), last_info(ipv6_proto), last_info(udp_proto)
	local ip, ip_len
	if ip4 and (not ip6 or ip4.offset > ip6.offset) then
		ip, ip_len = ip4, 20
	elseif ip6 then
		ip, ip_len = ip6, 40
	end
	if not ip or not udp or ip.len < ip_len or udp.len < 8 then return nil end
	local out = { 255, 255, 255, 255, 255, 255, 255, 255 }
	local ipb, udpb = ip.range:bytes(), udp.range:bytes()
	for i = 0, ip_len - 1 do out[#out + 1] = ipb:get_index(i) end
	if ip_len == 20 then
		out[8 + 2] = 255			-- TOS: DSCP and ECN
		out[8 + 9] = 255			-- TTL
		out[8 + 11], out[8 + 12] = 255, 255	-- header checksum
	else
		out[8 + 1] = bits.bor(out[8 + 1], 0x0f)	-- traffic class, flow label
		out[8 + 2], out[8 + 3], out[8 + 4] = 255, 255, 255
		out[8 + 8] = 255			-- hop limit
	end
	for i = 0, 7 do out[#out + 1] = udpb:get_index(i) end
	out[#out - 1], out[#out] = 255, 255	-- UDP checksum
	return out
end

-- The ICRC of the MRC bytes in tvb(0, n): nil when it cannot be computed.
local function icrc_of(tvb, n)
	if not bits then return nil end
	local outer = icrc_outer_bytes()
	if not outer then return nil end
	if not crc_table then crc_table_init() end
	local crc = 0xFFFFFFFF
	for _, b in ipairs(outer) do crc = crc_byte(crc, b) end
	local body = tvb(0, n):bytes()
	for i = 0, n - 1 do
		-- BTH byte 4 (InfiniBand's resv8a) is not covered.
		crc = crc_byte(crc, i == 4 and 255 or body:get_index(i))
	end
	return u32(bits.bnot(crc))
end

local function data_header_len(op, flags)
	local n = BTH_LEN + METH_LEN + RETH_LEN
	if bit_set(flags, F_TS) then n = n + TSETH_LEN end
	if op == OP.WRITE_LAST_IMM or op == OP.WRITE_ONLY_IMM then n = n + IMM_LEN end
	return n
end

-- Does this packet end in an ICRC (the preference on, an opcode that
-- carries one, and more than a trimmed DATA header's bytes)?
local function has_icrc(tvb, op, flags)
	if not mrc.prefs.icrc then return false end
	local len = tvb:len()
	if op >= OP.WRITE_FIRST and op <= OP.WRITE_ONLY_IMM then
		return len >= data_header_len(op, flags) + 4
	end
	return (op == OP.SACK or op == OP.NACK or op == OP.PROBE) and len >= BTH_LEN + 4
end

-- Shows and checks the trailer; returns the tvb without it.
local function take_icrc(tvb, pinfo, tree)
	local n = tvb:len() - 4
	local got = tvb(n, 4):le_uint()
	local it = tree:add(pf.icrc, tvb(n, 4), got)
	local want = icrc_of(tvb, n)
	if want == nil then
		it:add_proto_expert_info(ef.icrc_unchecked)
	else
		local g = it:add(pf.icrc_good, tvb(n, 4), want == got)
		g:set_generated()
		if want ~= got then
			g:add_proto_expert_info(ef.icrc_bad,
				string.format("ICRC 0x%08x, the packet's is 0x%08x", got, want))
			pinfo.cols.info:append(" [bad ICRC]")
		end
	end
	return tvb(0, n):tvb()
end

function mrc.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	pinfo.cols.protocol = "MRC"
	local root = tree:add(mrc, tvb())

	if is_path_probe(tvb) then
		dissect_path_probe(tvb, pinfo, root)
		return len
	end
	if len < BTH_LEN then
		pinfo.cols.info:set(string.format("MRC: %d bytes", len))
		malformed(pinfo, root, string.format(
			"%d bytes, shorter than the %d-byte BTH", len, BTH_LEN))
		if len > 0 then root:add(pf.body, tvb()) end
		return len
	end

	local op, flags, dqpn, psn = dissect_bth(tvb, root)
	local name = opcode_names[op] or string.format("OPCODE_0x%02X", op)
	pinfo.cols.info:set(string.format("%s QP=0x%06x PSN=%d", name, dqpn, psn))
	if bit_set(flags, F_RETX) then pinfo.cols.info:append(" [retx]") end
	if bit_set(flags, F_ACK_REQ) then pinfo.cols.info:append(" [ack_req]") end
	root:append_text(string.format(", %s, QP 0x%06x, PSN %d", name, dqpn, psn))
	if has_icrc(tvb, op, flags) then
		tvb = take_icrc(tvb, pinfo, root)
		len = tvb:len()
	end

	if op >= OP.WRITE_FIRST and op <= OP.WRITE_ONLY_IMM then
		dissect_data(tvb, pinfo, root, op, flags)
	elseif op == OP.SACK then
		dissect_sack(tvb, pinfo, root, psn)
	elseif op == OP.NACK then
		dissect_nack(tvb, pinfo, root)
	elseif op == OP.PROBE then
		dissect_probe(tvb, pinfo, root, flags)
	elseif op == OP.EP_REQUEST or op == OP.EP_RESPONSE then
		dissect_ep(tvb, pinfo, root, op)
	else
		local it
		if len > BTH_LEN then
			it = root:add(pf.body, tvb(BTH_LEN))
		else
			it = root
		end
		if opcode_names[op] then
			it:add_proto_expert_info(ef.reserved_op)
		else
			it:add_proto_expert_info(ef.unknown_op,
				string.format("Opcode 0x%02x is not used by MRC", op))
		end
	end
	return len
end

-- Registration --------------------------------------------------------------
local udp_table = DissectorTable.get("udp.port")
local current_port = 0
local displaced = nil	-- whoever had the port before us (InfiniBand on 4791)

local function take_port(port)
	if current_port ~= 0 then
		udp_table:remove(current_port, mrc)
		if displaced then udp_table:add(current_port, displaced) end
	end
	displaced = nil
	current_port = port
	if port ~= 0 then
		local ok, d = pcall(udp_table.get_dissector, udp_table, port)
		if ok and d then displaced = d end
		udp_table:add(port, mrc)
	end
end

take_port(DEFAULT_PORT)

function mrc.prefs_changed()
	if mrc.prefs.udp_port ~= current_port then
		take_port(mrc.prefs.udp_port)
	end
end
