#!/bin/sh
# quickstart.sh -- install the build dependencies (Debian, as root), build
# cuwarden, and run its main job: the leak audit of the bundled example
# program examples/leaky, on the real GPU where there is one, otherwise on
# the simulated CUDA driver (tests/fakecuda).  Says which.
set -eu
cd "$(dirname "$0")"

PKGS="build-essential autoconf automake libtool pkg-config binutils check libsubunit-dev
 libjemalloc-dev libunwind-dev libdw-dev libelf-dev libjansson-dev python3 python3-jsonschema
 python3-yaml valgrind chromium nodejs clang libclang-rt-14-dev cmake groff-base
 openmpi-bin"
if command -v apt-get >/dev/null 2>&1; then
	missing=$(for p in $PKGS; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"; done)
	if [ -n "$missing" ]; then
		echo "quickstart: installing $(echo $missing)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq $missing >/dev/null
	fi
fi

[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure
make -j"$(nproc)"
# The simulated driver and the example are test-tree programs.
make -j"$(nproc)" tests/fakecuda/libcuda.so.1 examples/leaky

if nvidia-smi -L >/dev/null 2>&1; then
	echo "quickstart: GPU found: auditing examples/leaky on the real CUDA driver"
	env -u LD_LIBRARY_PATH tools/cuwarden-audit --error-exitcode 23 examples/leaky || rc=$?
else
	echo "quickstart: no GPU here: auditing examples/leaky on the SIMULATED CUDA driver (tests/fakecuda)"
	LD_LIBRARY_PATH="$PWD/tests/fakecuda" tools/cuwarden-audit --error-exitcode 23 examples/leaky || rc=$?
fi
case ${rc:-0} in
23) echo "quickstart: the audit found the leaks examples/leaky plants (exit 23, as expected)"; exit 0 ;;
0)  echo "quickstart: the audit found nothing, but examples/leaky leaks: something is wrong" >&2; exit 1 ;;
*)  echo "quickstart: the audit failed (exit $rc)" >&2; exit "$rc" ;;
esac
