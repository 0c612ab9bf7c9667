#!/usr/bin/env bash
# Installs the Debian packages sched needs to build, test and benchmark.
# Everything comes from Debian's archive; nothing is downloaded from elsewhere.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  clang-format             # style check in the test command
  clang libclang-rt-dev    # fuzz targets: libFuzzer and the sanitizers
  liblua5.4-dev            # policy host
  libzmq3-dev cppzmq-dev   # wire transport
  munge libmunge-dev       # who sends each request (docs/security.md)
  libsodium-dev            # SHA-256 binding a request to its credential
  libmsgpack-cxx-dev       # wire encoding
  libhwloc-dev             # node topology
  libglpk-dev              # sched.lp
  libsqlite3-dev           # state journal
  libcli11-dev             # command line
  libspdlog-dev            # logging
  libcivetweb-dev          # schedd's HTTP server: /metrics and the web view
  chromium chromium-driver # the web view's test in headless Chromium (WebDriver)
  help2man                 # man pages from the programs' --help (dist/)
  libtomlplusplus-dev      # config and native workloads
  nlohmann-json3-dev       # JSON output
  libgtest-dev libgmock-dev libbenchmark-dev
  # MPI (issue 16): `sched run --mpi` tested with Debian's MPICH (mpicc.mpich);
  # Open MPI and PMIx for the PMIx server to come. Both MPIs side by side: the
  # tests name each one's wrapper (mpicc.mpich, mpicc.openmpi), never mpicc.
  mpich libmpich-dev openmpi-bin libopenmpi-dev libpmix-dev
  # The negotiation protocol's independent test client (docs/negotiation.md),
  # run with Debian's /usr/bin/python3.
  python3 python3-zmq python3-msgpack
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
