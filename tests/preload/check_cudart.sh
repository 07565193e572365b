#!/bin/sh
# cudart 12/13 (static, shared, per-thread default stream) reaches the
# driver only through dlsym(libcuda, "cuGetProcAddress_v2") and then
# ~440 cuGetProcAddress lookups by base name: all of it goes through the
# shim.  Needs nvcc (skipped without); runs against the simulated driver,
# where cudart stops after its lookup pass (cuGetExportTable), and prints
# and exits the same with and without the shim.
. "${top_srcdir:-.}/tests/preload/lib.sh"

[ -n "${NVCC:-}" ] && [ -x "$NVCC" ] || { echo "SKIP: no nvcc"; exit 77; }
cudalib=$(dirname "$(dirname "$NVCC")")/lib64
src=$top_srcdir/tests/preload/tp_cudart.cu
built=0
for v in static:-cudart=static shared:-cudart=shared ptds:--default-stream=per-thread; do
	name=${v%%:*}; flag=${v#*:}
	if ! "$NVCC" $flag -o "$WORK/rt_$name" "$src" >"$WORK/nvcc_$name.log" 2>&1; then
		echo "nvcc $flag failed:"; tail -5 "$WORK/nvcc_$name.log"
		continue
	fi
	built=$((built + 1))
	LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$cudalib plain "p$name" "$WORK/rt_$name"; want=$rc
	LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$cudalib CUWARDEN_REPORT=$WORK/$name.json run "s$name" "$WORK/rt_$name"
	expect_rc "$want" "$name cudart"
	cmp -s "$WORK/p$name.out" "$WORK/s$name.out" && pass "$name: stdout unchanged" || fail "$name: stdout differs"
	check "$WORK/$name.json" \
		'cov["dlsym_redirects"] >= 1' \
		'cov["gpa_lookups"] >= 300' \
		'cov["gpa_redirects"] >= 20' \
		'cov["hooks_active"] is True'
done
[ "$built" -gt 0 ] || { echo "SKIP: nvcc could not build a program"; exit 77; }
finish
