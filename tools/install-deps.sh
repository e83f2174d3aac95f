#!/usr/bin/env bash
# Install every Debian package that building, testing and the demo need.
# Idempotent: packages already present are skipped, so it is cheap to call
# from `make test` / `make demo` on every run.
set -euo pipefail

PACKAGES=(
	make gcc pkg-config            # userspace build
	clang llvm                     # BPF objects (clang -target bpf, llvm-strip)
	libbpf-dev libxdp-dev          # skeletons, libbpf, libxdp dispatcher
	libelf-dev zlib1g-dev          # libbpf's own link dependencies
	libfabric-dev libfabric-bin    # the libfabric provider; fi_info, fi_pingpong
	bpftool xdp-tools              # skeleton generation, xdp-loader
	dpkg-dev                       # make deb: dpkg-shlibdeps
	iproute2 util-linux procps     # ip/tc, unshare/flock, sysctl
	ethtool                        # the lab segments UDP GSO at the last hop
	iputils-ping                   # reachability checks
	jq                             # JSON checks in the test suite
	python3-minimal                # small helpers in tests (clocks, crafted streams)
	iperf3                         # TCP baselines in tests and benchmarks
	gnuplot-nox                    # PNG plots of benchmarks
	tshark                         # dissector test (skipped when absent)
	openmpi-bin libopenmpi-dev     # MPI over the lab (tests/mpi, bench-allreduce)
	python3-mpi4py                 # the mpi4py allreduce test
)

missing=()
for pkg in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
	[ "${1:-}" = "-q" ] || echo "install-deps: all ${#PACKAGES[@]} packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root (or: sudo $0) to install them" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer "no" up front.
echo "wireshark-common wireshark-common/install-setuid boolean false" |
	debconf-set-selections 2>/dev/null || true
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
