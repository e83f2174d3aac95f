#!/usr/bin/env bash
# MPI over the lab: `mrc-lab mpirun` starts one rank in each of 4 hosts;
# MPI_Allreduce of 1 KiB .. 256 KiB (C, tests/mpi/allreduce.c) and of
# 1 KiB .. 64 KiB (mpi4py, tests/mpi/allreduce.py) over Open MPI's mtl ofi
# and the provider of tests/mpi/provider.sh (MRC-XDP's "mrc;ofi_rxm" when
# built, else libfabric's "tcp;ofi_rxm"; the test says which), every
# element of every result checked by the programs; the same C program
# over btl tcp (bench-allreduce's other system); a spoiled result is
# caught; a provider libfabric does not have is a clear error.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/mpi/provider.sh"

AR=$ROOT/build/tests/mpi-allreduce
PY=$ROOT/tests/mpi/allreduce.py
TESTS="mpi.ranks_on_every_host mpi.c_allreduce_checked mpi.python_allreduce_checked
	mpi.btl_tcp_allreduce_checked mpi.wrong_result_caught mpi.missing_provider_error"
missing=$(mpi_missing)
if [ -n "$missing" ]; then
	for t in $TESTS; do skip "$t" "needs $missing (tools/install-deps.sh, make)"; done
	exit 0
fi
PROV=$(mpi_provider)
echo "  MPI tests over libfabric provider '$PROV'" >&2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT

lab_up --hosts 4 --planes 2
if is_mrc_provider "$PROV"; then
	lab agent start > /dev/null || { echo "mrcd did not start" >&2; exit 1; }
fi
# mpirun over the provider, 4 ranks; output in $tmp/NAME.out/.err, exit status returned.
mpi() {
	local name=$1 rc
	shift
	timeout 120 "$LAB_CMD" mpirun --name "$LAB" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
	rc=$?
	[ $rc -eq 0 ] || { echo "    $name: exit $rc" >&2; tail -n 8 "$tmp/$name.err" | sed 's/^/    /' >&2; }
	return $rc
}
ok_lines() { grep -c ' bytes x [0-9]* on 4 ranks: ok,' "$1"; }

begin mpi.c_allreduce_checked
check "C allreduce 1 KiB..256 KiB over '$PROV' exits 0" \
	mpi c --provider "$PROV" -np 4 "$AR" --min 1k --max 256k
check "every size right" grep -q 'mpi-allreduce: 9 sizes, 1024..262144 bytes, 4 ranks: every result right' "$tmp/c.out"
check "9 sizes ok" eq "$(ok_lines "$tmp/c.out")" 9
end

begin mpi.ranks_on_every_host
check "one rank in each of h1..h4" grep -qx 'ranks on: h1 h2 h3 h4' "$tmp/c.out"
end

begin mpi.python_allreduce_checked
if /usr/bin/python3 -c 'import mpi4py' 2> /dev/null; then
	check "mpi4py allreduce 1 KiB..64 KiB over '$PROV' exits 0" \
		mpi py --provider "$PROV" -np 4 /usr/bin/python3 "$PY" --min 1k --max 64k
	check "every size right" grep -q 'mpi-allreduce.py: 7 sizes, 1024..65536 bytes, 4 ranks: every result right' "$tmp/py.out"
	check "7 sizes ok" eq "$(ok_lines "$tmp/py.out")" 7
	check "one rank in each of h1..h4" grep -qx 'ranks on: h1 h2 h3 h4' "$tmp/py.out"
	end
else
	skip mpi.python_allreduce_checked "needs python3-mpi4py (tools/install-deps.sh)"
fi

begin mpi.btl_tcp_allreduce_checked
check "C allreduce over btl tcp on p1,p2 exits 0" \
	mpi tcp --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include p1,p2 -np 4 "$AR" --min 1k --max 256k
check "every size right" grep -q '9 sizes, 1024..262144 bytes, 4 ranks: every result right' "$tmp/tcp.out"
end

begin mpi.wrong_result_caught
mpi spoiled --provider "$PROV" -np 4 "$AR" --min 1k --max 4k --inject-error 2> /dev/null
rc=$?
check "exit status 1 (got $rc)" eq "$rc" 1
check "the spoiled element is named" grep -q 'rank 1, 1024 bytes, step 0: element 64 is' "$tmp/spoiled.err"
check "the size is reported wrong" grep -q '1024 bytes x 2 on 4 ranks: WRONG' "$tmp/spoiled.out"
check "the verdict says so" grep -q 'WRONG RESULTS' "$tmp/spoiled.out"
end

begin mpi.missing_provider_error
"$LAB_CMD" mpirun --name "$LAB" --provider "nosuch;ofi_rxm" -np 4 "$AR" --max 1k \
	> "$tmp/np.out" 2> "$tmp/np.err"
rc=$?
check "exit status 1 (got $rc)" eq "$rc" 1
check "says the provider is not found" grep -q "libfabric provider 'nosuch;ofi_rxm' not found" "$tmp/np.err"
check "no rank ran" eq "$(grep -c 'ranks on' "$tmp/np.out")" 0
end
