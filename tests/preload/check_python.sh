#!/bin/sh
# Python frames in every stack (doc/stacks.md, "Python frames"): a leak
# made from a Python script through ctypes shows the script's frames --
# file, function, line, innermost first, exactly the interpreter's own
# frames at the call -- from nested functions, a method, a thread and a
# generator; the owner is the script, not the interpreter.  Every Python
# 3.11, 3.12 or 3.13 found (python3, Debian's /usr/bin/python3 when it is
# another, and those CW_TEST_PYTHONS names, space-separated) is tried; one
# of another version is skipped.  The test hook
# CUWARDEN_PYTHON_TEST_VERSION makes the interpreter look unsupported:
# native frames only, and the report says why, once.
. "${top_srcdir:-.}/tests/preload/lib.sh"

SCRIPT=$top_srcdir/tests/preload/py_frames.py
AUDIT=$top_builddir/tools/cuwarden-audit
tried=0

# schema WHAT DOC: the merged document against tests/tools/audit.schema.json
# (skipped where python3-jsonschema is missing).
schema() {
	"$PY" "$top_srcdir/tests/tools/check_json.py" \
		"$top_srcdir/tests/tools/audit.schema.json" "$2"
	case $? in
	0) pass "$1: merged document valid" ;;
	77) echo "skip: $1: no jsonschema module to validate the merged document" ;;
	*) fail "$1: merged document invalid" ;;
	esac
}
for py in "$PY" /usr/bin/python3 ${CW_TEST_PYTHONS-}; do
	command -v "$py" >/dev/null 2>&1 || continue
	real=$("$py" -c 'import sys; print(sys.executable)' 2>/dev/null) || continue
	case " ${seen-} " in *" $real "*) continue ;; esac
	seen="${seen-} $real"
	ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	case $ver in 3.11|3.12|3.13) ;; *) echo "python $real is $ver: not tried"; continue ;; esac
	tried=$((tried + 1))
	n=py$tried
	R=$WORK/$n.json
	CUWARDEN_REPORT=$R run $n "$py" "$SCRIPT" "$WORK/$n.expect.json"
	expect_rc 0 "$real ($ver): allocations through ctypes"
	check "$R" \
		"r['python'] == {'frames': True, 'version': '$ver'}" \
		"len(leaks()) == 5" \
		"all(pyf(leak(size=s)['stack']) == json.load(open('$WORK/$n.expect.json'))[str(s)] for s in (41001, 41002, 41003, 41004, 41005))" \
		"[f[1:] for f in pyf(leak(size=41005)['stack'])[:4]] == [['alloc', 31], ['far.<locals>.<lambda>', 79], ['gr\u00f6\u00dfe.<locals>.\u51fd\u6570', 3305], ['gr\u00f6\u00dfe', 3306]]" \
		"pyf(leak(size=41005)['stack'])[2][0] == 'gen/\u00fcn\u00efcode_\u51fd\u6570_\U0001f600.py'" \
		"all(leak(size=s)['owner'] == '$SCRIPT' for s in (41001, 41002, 41003, 41004))" \
		"[f[1] for f in pyf(leak(size=41001)['stack'])][:4] == ['alloc', 'outer.<locals>.inner', 'middle', 'outer']" \
		"pyf(leak(size=41003)['stack'])[1][1] == 'worker'" \
		"pyf(leak(size=41004)['stack'])[1][1] == 'chunks'" \
		"'module' in leak(size=41001)['stack'][0]"
	# The text report: file:line function.
	run $n.text "$AUDIT" report "$R"
	line=$(grep -n 'w = where(); rc' "$SCRIPT" | cut -d: -f1)
	if grep -q "==    by $SCRIPT:$line alloc \[python\]" "$WORK/$n.text.err"; then
		pass "$ver: text report names $SCRIPT:$line alloc"
	else
		fail "$ver: no '$SCRIPT:$line alloc' frame in the text report:"
		head -30 "$WORK/$n.text.err"
	fi
	# The merged document (the schema knows Python frames), SARIF, HTML.
	run $n.merge "$AUDIT" --json "$WORK/$n.merged.json" --sarif "$WORK/$n.sarif" \
		--html "$WORK/$n.html" report "$R"
	schema "$ver" "$WORK/$n.merged.json"
	check "$WORK/$n.merged.json" \
		"pyf([l for l in r['leaks'] if l['size'] == 41001][0]['stack']) == json.load(open('$WORK/$n.expect.json'))['41001']"
	grep -q "\"uri\": *\"[^\"]*py_frames.py\"" "$WORK/$n.sarif" &&
		pass "$ver: SARIF names the script as a physical location" ||
		fail "$ver: SARIF: no location in py_frames.py"
	grep -q '"python": *{"file"' "$WORK/$n.html" &&
		pass "$ver: the HTML page carries the Python frames" ||
		fail "$ver: no Python frame in the HTML page"
	grep -q "leaked by $SCRIPT " "$WORK/$n.text.err" &&
		pass "$ver: text report: owner is the script" ||
		fail "$ver: owner in the text report: $(grep 'leaked by' "$WORK/$n.text.err" | head -2)"

	# Unsupported (the test hook): native frames, and the reason once.
	R=$WORK/$n.unsup.json
	CUWARDEN_PYTHON_TEST_VERSION=0x030e0000 CUWARDEN_REPORT=$R \
		run $n.unsup "$py" "$SCRIPT" "$WORK/$n.unsup.expect.json"
	expect_rc 0 "$ver as if 3.14: allocations through ctypes"
	check "$R" \
		"r['python'] == {'frames': False, 'version': '3.14', 'reason': 'python 3.14 not supported'}" \
		"len(leaks()) == 5" \
		"all(pyf(l['stack']) == [] for l in leaks())" \
		"all('python' in os.path.basename(l['owner']) for l in leaks())"
	run $n.unsup.text "$AUDIT" -v report "$R"
	grep -q "==      native frames only, no Python frames: python 3.14 not supported" "$WORK/$n.unsup.text.err" &&
		pass "$ver as if 3.14: the text report says why, under the process" ||
		fail "$ver as if 3.14: no reason in the text report: $(grep -A2 PROCESSES "$WORK/$n.unsup.text.err")"
	run $n.unsup.merge "$AUDIT" --json "$WORK/$n.unsup.merged.json" report "$R"
	schema "$ver as if 3.14" "$WORK/$n.unsup.merged.json"
	check "$WORK/$n.unsup.merged.json" \
		"r['processes'][0]['python']['reason'] == 'python 3.14 not supported'"
	# The wrong layout (3.12's on 3.11's structures): found out by reads
	# that cannot fault, frames off with the reason, no crash.
	other=0x030c0000; [ "$ver" = 3.12 ] && other=0x030b0000
	R=$WORK/$n.wrong.json
	CUWARDEN_PYTHON_TEST_VERSION=$other CUWARDEN_REPORT=$R \
		run $n.wrong "$py" "$SCRIPT" "$WORK/$n.wrong.expect.json"
	expect_rc 0 "$ver with another version's layout"
	check "$R" \
		"r['python']['frames'] is False" \
		"r['python']['reason'].endswith('layout check failed')" \
		"len(leaks()) == 5" \
		"all(pyf(l['stack']) == [] for l in leaks())"
	# Eight threads at once (tests/preload/py_threads.py).
	R=$WORK/$n.threads.json
	CUWARDEN_REPORT=$R run $n.threads "$py" "$top_srcdir/tests/preload/py_threads.py"
	expect_rc 0 "$ver: 8 threads allocating through ctypes"
	check "$R" \
		"len(leaks()) == 8" \
		"all([f[1] for f in pyf(leak(size=60000 + k)['stack'])] == ['one', 'work', 'Thread.run', 'Thread._bootstrap_inner', 'Thread._bootstrap'] for k in range(8))" \
		"cov['allocations'] == 8 * 301"
	R=$WORK/$n.off.json
	CUWARDEN_PYTHON_FRAMES=0 CUWARDEN_REPORT=$R \
		run $n.off "$py" "$SCRIPT" "$WORK/$n.off.expect.json"
	expect_rc 0 "$ver with CUWARDEN_PYTHON_FRAMES=0"
	check "$R" "r['python']['frames'] is False" \
		"r['python']['reason'] == 'CUWARDEN_PYTHON_FRAMES=0'" \
		"all(pyf(l['stack']) == [] for l in leaks())"
	# Embedded and unloaded (tests/preload/tp_pyunload.c): a C program
	# dlopens this interpreter's libpython, runs it, allocates, finalizes
	# and dlcloses it, then allocates again.  Each capture calls into the
	# interpreter, so the shim keeps the library loaded: no crash.
	lib=$("$py" -c 'import sysconfig, os; v = sysconfig.get_config_var; print(os.path.join(v("LIBDIR") or "", v("INSTSONAME") or ""))' 2>/dev/null)
	case $lib in
	*.so*) ;;
	*) lib= ;;
	esac
	if [ -z "$lib" ] || [ ! -f "$lib" ]; then
		echo "skip: $ver: no shared libpython to embed"
	else
		plain $n.unload "$TP/tp_pyunload" "$lib"
		expect_rc 0 "$ver: libpython embedded and dlclosed without the shim"
		grep -qx unloaded "$WORK/$n.unload.out" ||
			echo "note: $ver: $lib stays loaded after dlclose even without the shim"
		R=$WORK/$n.unload.json
		# An embedded interpreter leaks by design at Py_Finalize (as a
		# python3 host does: lib.sh): no LeakSanitizer for this one.
		saved=${ASAN_OPTIONS-}
		[ -n "$SANITIZED" ] && ASAN_OPTIONS="$saved:detect_leaks=0"
		CUWARDEN_REPORT=$R run $n.unload.shim "$TP/tp_pyunload" "$lib"
		[ -n "$SANITIZED" ] && ASAN_OPTIONS=$saved
		expect_rc 0 "$ver: libpython embedded and dlclosed, then an allocation, under the shim"
		check "$R" \
			"sorted(l['size'] for l in leaks()) == [4096, 8192]" \
			"r['python'] == {'frames': True, 'version': '$ver'}"
	fi
done
[ "$tried" -gt 0 ] || { echo "SKIP: no python 3.11, 3.12 or 3.13"; exit 77; }
finish
