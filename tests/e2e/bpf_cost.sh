#!/usr/bin/env bash
# build/mrc-bpf-cost (tools/bpf-cost): a short run (--repeat 2000, 3
# batches) gives a positive cost for every program in its JSON, with the
# verdicts it checked (XDP_PASS for DATA and the non-MRC packet, XDP_DROP
# for the consumed SACK, TC_ACT_OK for TC), and leaves no pinned maps
# behind and a running mrcd's /sys/fs/bpf/mrc as it was. Needs no lab.
. "$(dirname "$0")/lib.sh"

COST="$ROOT/build/mrc-bpf-cost"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A number > 0 (jq prints null for a missing field).
positive() {
	if awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }' && [ "$1" != null ]; then return 0; fi
	echo "    '$1' is not a positive number" >&2
	return 1
}

ls -A /sys/fs/bpf/mrc > "$tmp/pins.before" 2>/dev/null

begin bpf_cost.json
"$COST" --repeat 2000 --batches 3 --json > "$tmp/out.json" 2> "$tmp/err"
rc=$?
check "exit status 0 (stderr: $(tr '\n' ' ' < "$tmp/err"))" eq "$rc" 0
check "valid JSON" jq -e . "$tmp/out.json" > /dev/null
check "repeat" eq "$(jq .repeat "$tmp/out.json")" 2000
check "batches" eq "$(jq .batches "$tmp/out.json")" 3
for p in mrc_xdp_rx_data mrc_xdp_rx_other mrc_tc_tx_data xdp_pass tc_pass; do
	check "$p ns_per_packet" positive "$(jq ".programs.$p.ns_per_packet" "$tmp/out.json")"
	check "$p: 3 batches" eq "$(jq ".programs.$p.batches_ns | length" "$tmp/out.json")" 3
done
for f in ns_per_sack ns_first_sack ns_first_sack_wakeup; do
	check "mrc_xdp_rx_sack $f" positive "$(jq ".programs.mrc_xdp_rx_sack.$f" "$tmp/out.json")"
done
check "xdp_pass ns_single_run" positive "$(jq .programs.xdp_pass.ns_single_run "$tmp/out.json")"
end

begin bpf_cost.verdicts
v() { jq -r ".programs.$1.verdict" "$tmp/out.json"; }
check "DATA steered" eq "$(v mrc_xdp_rx_data)" XDP_PASS
check "SACK consumed" eq "$(v mrc_xdp_rx_sack)" XDP_DROP
check "non-MRC passed" eq "$(v mrc_xdp_rx_other)" XDP_PASS
check "TC DATA stamped" eq "$(v mrc_tc_tx_data)" TC_ACT_OK
check "trivial XDP" eq "$(v xdp_pass)" XDP_PASS
check "trivial TC" eq "$(v tc_pass)" TC_ACT_OK
end

begin bpf_cost.private_maps
left=$(find /sys/fs/bpf -maxdepth 1 -name "mrc-cost-*" | wc -l)
check "no mrc-cost-* pin directory left" eq "$left" 0
ls -A /sys/fs/bpf/mrc > "$tmp/pins.after" 2>/dev/null
check "/sys/fs/bpf/mrc untouched" cmp -s "$tmp/pins.before" "$tmp/pins.after"
end

begin bpf_cost.usage
check "--help exits 0" "$COST" --help > /dev/null
"$COST" --repeat 0 > /dev/null 2>&1
check "--repeat 0 is a usage error (2)" eq "$?" 2
end
