#!/bin/sh
# The pool and thread tests again with four arenas per pool
# (CUWARDEN_POOL_ARENAS=4): a machine with fewer than 16 CPUs gets one by
# default, and the arena paths (cross-arena frees, shared counters, the
# OOM stages across arenas) must be tested there too.
: "${top_builddir:?run through make check}"
CUWARDEN_POOL_ARENAS=4
export CUWARDEN_POOL_ARENAS
rc=0
for t in check_pool check_threads check_contracts; do
	"$top_builddir/tests/unit/$t" || rc=1
done
exit $rc
