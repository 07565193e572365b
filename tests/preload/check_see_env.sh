#!/bin/sh
# CUWARDEN_SEE_THROUGH=1 with the shim alone sets its variables in the
# constructor (shim/seethrough.c).  The program's libraries were
# initialized before it, and may have left threads reading the
# environment: the array they read must never be freed under them, as
# setenv's realloc did (tp_env, libtpenv.so).
. "${top_srcdir:-.}/tests/preload/lib.sh"

plain env.plain "$TP/tp_env"
expect_rc 0 "tp_env without the shim"
CUWARDEN_SEE_THROUGH=1 run env.see "$TP/tp_env"
expect_rc 0 "tp_env under CUWARDEN_SEE_THROUGH=1: the earlier environment array stays whole"
cat "$WORK/env.see.out"
grep -qx 'PYTORCH_NO_CUDA_MEMORY_CACHING=1' "$WORK/env.see.out" &&
	pass "the see-through variables are set" ||
	fail "PYTORCH_NO_CUDA_MEMORY_CACHING not set: $(cat "$WORK/env.see.out")"
PYTHONPATH=/tp/a CUWARDEN_SEE_THROUGH=1 run env.path sh -c 'echo "$PYTHONPATH"'
expect_rc 0 "sh under CUWARDEN_SEE_THROUGH=1"
case $(cat "$WORK/env.path.out") in
*/python:/tp/a) pass "PYTHONPATH: the hook's directory first, the old value after" ;;
*) fail "PYTHONPATH is $(cat "$WORK/env.path.out")" ;;
esac
finish
