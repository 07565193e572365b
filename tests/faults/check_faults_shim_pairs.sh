#!/bin/sh
# The shim's fault matrix with two entry points failed at once, on the
# paths where failures meet (frees of every kind, VMM teardown, contexts:
# tests/faults/faults_lib.sh core).  make check-faults-pairs runs every
# pair of the entry points the program and the shim reach.
FM_PAIRS=${FM_PAIRS:-core} exec "${top_srcdir:?run through make check}/tests/faults/check_faults_shim.sh"
