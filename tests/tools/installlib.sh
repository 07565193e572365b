# installlib.sh -- an installed cuwarden for the tests (sourced after
# testlib.sh): this build staged with DESTDIR (check_cmake.sh,
# check_ci.sh), a program built by CMake against an installation
# (tests/tools/cmake; check_cmake.sh, check_install.sh).

# stage_install: this build installed with DESTDIR=$WORK/stage, as make
# check leaves it (nothing is rebuilt); sets $stage and $prefix (the
# configured one, under $stage).
stage_install() {
	unset MAKEFLAGS MFLAGS MAKELEVEL
	stage=$WORK/stage
	make -C "$top_builddir" install DESTDIR="$stage" >"$WORK/install.log" 2>&1 || {
		echo "harness: make install DESTDIR failed"
		tail -30 "$WORK/install.log"
		exit 99
	}
	prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
}

# consumer NAME PREFIX [cmake args...]: configures and builds the consumer
# in $WORK/NAME with CMAKE_PREFIX_PATH=PREFIX; status in $rc, the output
# in $WORK/NAME.log, what the package gave in $WORK/NAME/found.txt.
consumer() {
	local name=$1 prefix=$2
	shift 2
	{
		cmake -S "$TT/cmake" -B "$WORK/$name" \
		    -DCMAKE_PREFIX_PATH="$prefix" "$@" &&
		cmake --build "$WORK/$name"
	} >"$WORK/$name.log" 2>&1
	rc=$?
}

# consumer_ok NAME PREFIX: the consumer builds against PREFIX, every path
# the package gave lies under PREFIX, and it runs (simulated driver).
consumer_ok() {
	local name=$1 prefix=$2 f
	consumer "$name" "$prefix"
	if [ "$rc" != 0 ]; then
		fail "$name: cmake against $prefix failed"
		tail -30 "$WORK/$name.log" | sed 's/^/    | /'
		return
	fi
	f="$WORK/$name/found.txt"
	for line in "include=$prefix/include" \
	    "library=$prefix/lib/libcuwarden.so" \
	    "audit=$prefix/bin/cuwarden-audit" \
	    "audit_var=$prefix/bin/cuwarden-audit" \
	    "deps=Threads::Threads;dl"; do
		grep -qxF -- "$line" "$f" ||
		    { fail "$name: \"$line\" not in found.txt"; sed 's/^/    | /' "$f"; }
	done
	"$WORK/$name/consumer" >"$WORK/$name.run" 2>&1 ||
	    { fail "$name: the consumer failed"; sed 's/^/    | /' "$WORK/$name.run"; }
	grep -qxF "consumer: ok" "$WORK/$name.run" ||
	    fail "$name: the consumer did not say ok"
}
