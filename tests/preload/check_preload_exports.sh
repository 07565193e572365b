#!/bin/sh
# libcuwarden_preload.so exports exactly: every hook of hooks.def, the
# public API (lib/libcuwarden.sym, annotations included), and dlsym
# (GLIBC_2.34 default + GLIBC_2.2.5), _exit and _Exit under glibc's
# version so versioned references bind to it.  No malloc or jemalloc
# symbol, and no DT_NEEDED on any CUDA library.
. "${top_srcdir:-.}/tests/preload/lib.sh"

NM=${NM:-nm}
sed -n 's/^[[:space:]]*\(HOOK\|GPA\)(\(cu[A-Za-z0-9_]*\).*/\2/p' "$top_srcdir/shim/hooks.def" >"$WORK/want"
sed -n 's/^[[:space:]]*\(cw_[a-z_]*\);.*/\1/p' "$top_srcdir/lib/libcuwarden.sym" >>"$WORK/want"
printf '%s\n' 'dlsym@@GLIBC_2.34' 'dlsym@GLIBC_2.2.5' '_exit@@GLIBC_2.2.5' '_Exit@@GLIBC_2.2.5' >>"$WORK/want"
sort -u "$WORK/want" -o "$WORK/want"
$NM -D --defined-only "$SHIM" | awk '$2 != "A" { print $3 }' | sed 's/@@CUWARDEN_0\.1$//' | sort -u >"$WORK/have"
if cmp -s "$WORK/want" "$WORK/have"; then
	pass "exported set is exactly the list ($(wc -l <"$WORK/have") symbols)"
else
	fail "exported set differs (< wanted, > exported)"; diff "$WORK/want" "$WORK/have"
fi
# The version script (generated from hooks.def) lists the same hooks.
sed -n 's/^[[:space:]]*\(cu[A-Za-z0-9_]*\);.*/\1/p' "$top_builddir/preload/libcuwarden_preload.sym" | sort >"$WORK/symhooks"
grep '^cu' "$WORK/want" | sort >"$WORK/defhooks"
cmp -s "$WORK/symhooks" "$WORK/defhooks" && pass "libcuwarden_preload.sym matches hooks.def" || { fail "libcuwarden_preload.sym and hooks.def differ"; diff "$WORK/defhooks" "$WORK/symhooks"; }
$NM -D --defined-only "$SHIM" | grep -E ' (malloc|free|calloc|realloc|mallocx|mallctl|je_.*|cw_je_.*)(@.*)?$' && fail "allocator symbols exported" || pass "no allocator symbol exported"
if command -v readelf >/dev/null 2>&1; then
	readelf -d "$SHIM" | grep NEEDED | grep -Ei 'libcuda|libcudart|libnv' && fail "DT_NEEDED on CUDA" || pass "no DT_NEEDED on CUDA libraries"
fi
finish
