#!/bin/sh
# The owner of an allocation is the module of the first stack frame
# outside CUDA's own libraries (and cuwarden), resolved when the
# allocation is made: a library dlopen'd, leaking, then dlclose'd before
# exit is still named.  CUWARDEN_OWNER_SKIP adds patterns to skip.
. "${top_srcdir:-.}/tests/preload/lib.sh"

R=$WORK/own.json
CUWARDEN_REPORT=$R run own "$TP/tp_driver" owner "$TP/libtpowner.so"
expect_rc 0 "owner under the shim"
check "$R" \
	'leak(size=77777)["owner"].endswith("/libtpowner.so")' \
	'frame0(leak(size=77777)["stack"]).endswith("/libtpowner.so")' \
	'leak(size=55555)["owner"].endswith("/tp_driver")'

R=$WORK/own2.json
CUWARDEN_OWNER_SKIP='libnothing*:libtpowner.so' CUWARDEN_REPORT=$R run own2 "$TP/tp_driver" owner "$TP/libtpowner.so"
expect_rc 0 "owner with CUWARDEN_OWNER_SKIP"
check "$R" \
	'leak(size=77777)["owner"].endswith("/tp_driver")' \
	'frame0(leak(size=77777)["stack"]).endswith("/libtpowner.so")'
finish
