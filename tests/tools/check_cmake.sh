#!/bin/bash
# The CMake package configuration (cmake/, doc/audit.md "In CI"): this
# build, installed with DESTDIR (so found where it is staged, not where it
# was configured to go), gives find_package(cuwarden) the imported targets
# cuwarden::cuwarden (include directory, library, -ldl and the thread
# library) and cuwarden::audit; a program built with it runs on the
# simulated driver; the version file answers 0, 0.1 and 0.1.0, not 0.2,
# 1.0 or a newer version.  check_install.sh builds it against a real
# prefix.  Skipped (77) only where cmake is not installed.
. "$top_srcdir/tests/tools/testlib.sh"
. "$TT/installlib.sh"

command -v cmake >/dev/null 2>&1 || { echo "cmake is not installed: skipped"; exit 77; }
stage_install
version=$(sed -n 's/^VERSION = //p' "$top_builddir/Makefile")
[ -f "$stage$prefix/lib/cmake/cuwarden/cuwarden-config.cmake" ] ||
    fail "no $prefix/lib/cmake/cuwarden/cuwarden-config.cmake installed"
[ -f "$stage$prefix/lib/cmake/cuwarden/cuwarden-config-version.cmake" ] ||
    fail "no $prefix/lib/cmake/cuwarden/cuwarden-config-version.cmake installed"

consumer_ok staged "$stage$prefix"
grep -qxF "version=$version" "$WORK/staged/found.txt" ||
    fail "staged: cuwarden_VERSION is not $version"

# The versions it answers (this one is 0.x: its own minor version).
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
for want in "$major" "$major.$minor" "$version"; do
	consumer "want$want" "$stage$prefix" -DWANT_VERSION="$want"
	expect_rc "want$want" 0
done
for want in "$major.$((minor + 1))" "$((major + 1)).0" "99"; do
	consumer "want$want" "$stage$prefix" -DWANT_VERSION="$want"
	[ "$rc" != 0 ] || fail "find_package(cuwarden $want) found $version"
	expect_in "want$want" log "considered but not accepted"
done

# A tree that lacks what its configuration names is not found.
cp -a "$stage" "$WORK/broken"
rm "$WORK/broken$prefix/include/cuwarden.h"
consumer broken "$WORK/broken$prefix"
[ "$rc" != 0 ] || fail "broken: found without cuwarden.h"
# (cmake wraps the reason's lines)
tr -s ' \n' '  ' <"$WORK/broken.log" >"$WORK/broken.flat"
expect_in broken flat "names files that are not there: $WORK/broken$prefix/include/cuwarden.h"

finish
