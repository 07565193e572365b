#!/bin/bash
# The files cuwarden-audit reads -- reports, suppressions, baselines, and
# the modules a report names for symbolization -- are read only when they
# are regular files of a bounded size: a FIFO (which would block the tool
# for ever), a device or a directory is refused with a message that says
# what it is; a module that is not a regular file is left unsymbolized,
# with a note.
. "$top_srcdir/tests/tools/testlib.sh"

A="$DATA/proc_a.json"
T=(timeout -k 5 20)

mkfifo "$WORK/fifo"
mkdir "$WORK/adir"

# Modules named by a report: a FIFO, a directory, a character device.
for what in fifo adir dev; do
	case $what in
	fifo) mod="$WORK/fifo" ;;
	adir) mod="$WORK/adir" ;;
	dev) mod=/dev/zero ;;
	esac
	sed "s|{\"path\": \"/opt/app/libmodel.so\"|{\"path\": \"$mod\"|" "$A" >"$WORK/mod_$what.json"
	grep -q "\"path\": \"$mod\"" "$WORK/mod_$what.json" || exit 99
	run "mod_$what" "${T[@]}" "$AUDIT" report "$WORK/mod_$what.json"
	expect_rc "mod_$what" 23
	expect_in "mod_$what" err "==    at 0x1a2b: ??? (in $mod, not a regular file)"
	expect_in "mod_$what" err "== LEAK SUMMARY: 3,407,872 bytes leaked in 4 allocations (2 groups)"
done

# A report, a suppressions file, a baseline that is not a regular file.
run rep_fifo "${T[@]}" "$AUDIT" report "$WORK/fifo"
expect_rc rep_fifo 125
expect_in rep_fifo err "$WORK/fifo: is a FIFO, not a regular file"
run rep_dev "${T[@]}" "$AUDIT" report /dev/null
expect_rc rep_dev 125
expect_in rep_dev err "/dev/null: is a character device, not a regular file"
run supp_fifo "${T[@]}" "$AUDIT" --suppressions "$WORK/fifo" report "$A"
expect_rc supp_fifo 125
expect_in supp_fifo err "$WORK/fifo: is a FIFO, not a regular file"
run supp_dir "${T[@]}" "$AUDIT" --suppressions "$WORK/adir" report "$A"
expect_rc supp_dir 125
expect_in supp_dir err "$WORK/adir: is a directory, not a regular file"
run base_fifo "${T[@]}" "$AUDIT" --baseline "$WORK/fifo" report "$A"
expect_rc base_fifo 125
expect_in base_fifo err "--baseline: $WORK/fifo: is a FIFO, not a regular file"
run base_dir "${T[@]}" "$AUDIT" --baseline "$WORK/adir" report "$A"
expect_rc base_dir 125
expect_in base_dir err "--baseline: $WORK/adir: is a directory, not a regular file"
expect_not_in base_dir err "invalid JSON"

# The size bounds (sparse files: nothing is read).
truncate -s 17M "$WORK/big.supp"
run supp_big "$AUDIT" --suppressions "$WORK/big.supp" report "$A"
expect_rc supp_big 125
expect_in supp_big err "$WORK/big.supp: 17825792 bytes, more than the 16777216 this tool reads"
truncate -s 1025M "$WORK/big.json"
run rep_big "$AUDIT" report "$WORK/big.json"
expect_rc rep_big 125
expect_in rep_big err "$WORK/big.json: 1074790400 bytes, more than the 1073741824 this tool reads"

finish
