# shellcheck shell=bash
# Sourced by the MPI tests (tests/e2e/mpi.sh, bench_allreduce.sh): which
# libfabric provider they run Open MPI's mtl ofi over, and whether the
# MPI pieces are there at all.
#
# mpi_provider: $MRC_MPI_PROVIDER when set; else MRC-XDP's "mrc;ofi_rxm"
# when there is the provider (libmrc-fi.so in build/libfabric, or in a
# folder of $FI_PROVIDER_PATH); else libfabric's own "tcp;ofi_rxm", so the
# launcher, the programs and the checks are tested either way. The tests
# print which one ran.
mpi_provider() {
	local d
	if [ -n "${MRC_MPI_PROVIDER:-}" ]; then echo "$MRC_MPI_PROVIDER"; return; fi
	local fpp=${FI_PROVIDER_PATH:-}
	for d in "$ROOT/build/libfabric" ${fpp//:/ }; do
		[ -e "$d/libmrc-fi.so" ] && { echo "mrc;ofi_rxm"; return; }
	done
	echo "tcp;ofi_rxm"
}
is_mrc_provider() { [[ $1 == mrc || $1 == mrc\;* ]]; }

# mpi_missing: what is missing to run MPI in the lab (empty: nothing).
mpi_missing() {
	command -v mpirun > /dev/null || { echo "mpirun (openmpi-bin)"; return; }
	[ -x "$ROOT/build/tests/mpi-allreduce" ] || { echo "build/tests/mpi-allreduce (libopenmpi-dev, make)"; return; }
	command -v fi_info > /dev/null || { echo "fi_info (libfabric-bin)"; return; }
}
