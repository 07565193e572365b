#!/bin/sh
# The library's fault matrix with two entry points failed at once, on the
# paths where failures meet (memory got and given back, barriers, events:
# tests/faults/faults_lib.sh core).  make check-faults-pairs runs every
# pair of the entry points the workload reaches.
FM_PAIRS=${FM_PAIRS:-core} exec "${top_srcdir:?run through make check}/tests/faults/check_faults_lib.sh"
