#!/bin/bash
# A process's place in a distributed job, as the shim reads it from the
# launcher's environment (lib/jobenv.h; doc/report-schema.md, "The job"):
#   - each launcher's variables (torchrun, Open MPI, PMI, Slurm) give the
#     report's "job": launcher, id, step, rank, local rank, world size;
#   - nested launchers: the innermost wins (torchrun under srun, mpirun in
#     a Slurm allocation), the job id falling back on SLURM_JOB_ID;
#     torchrun's default run id "none" is no id; a value that is not a
#     number is unset;
#   - "gpus": CUDA_VISIBLE_DEVICES as set (set empty is not unset), and
#     device 0 with its UUID from the driver (cuDeviceGetUuid_v2);
#   - %r %h %j in CUWARDEN_REPORT, their fallbacks without a launcher
#     (pidPID, nojob), a job id's unsafe bytes made '_';
#   - the text report's first line says "rank R of N".
. "$top_srcdir/tests/tools/testlib.sh"

P="$top_builddir/tests/tools/rankprog"
SHIM="$top_builddir/preload/.libs/libcuwarden_preload.so"
PY=$(command -v python3) || { echo "python3 is not installed"; exit 77; }
for f in "$P" "$SHIM"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done
HOST=$(uname -n)

# shim NAME REPORT-PATTERN VAR=VALUE...: rankprog under the shim, its
# environment cleared of every launcher's variables but those given.
shim() {
	local name=$1 pat=$2
	shift 2
	run "$name" env -u RANK -u LOCAL_RANK -u WORLD_SIZE -u TORCHELASTIC_RUN_ID \
	    -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_LOCAL_RANK \
	    -u OMPI_COMM_WORLD_SIZE -u OMPI_MCA_ess_base_jobid -u PMIX_NAMESPACE \
	    -u PMI_RANK -u PMI_SIZE -u PMIX_RANK -u MPI_LOCALRANKID \
	    -u SLURM_PROCID -u SLURM_LOCALID -u SLURM_NTASKS -u SLURM_JOB_ID \
	    -u SLURM_STEP_ID -u CUDA_VISIBLE_DEVICES \
	    CUWARDEN_REPORT="$WORK/$pat" LD_PRELOAD="$SHIM" "$@" "$P"
}

# job FILE EXPECTED: the report's "job" (and gpus' cuda_visible_devices)
# as a Python literal.
job() {
	"$PY" - "$WORK/$1" "$2" <<'PYEOF' || fail "$1: its job"
import ast, json, sys
d = json.load(open(sys.argv[1]))
want = ast.literal_eval(sys.argv[2])
got = dict(d["job"], visible=d["gpus"]["cuda_visible_devices"])
if got != want:
    print("got ", got)
    print("want", want)
    sys.exit(1)
used = d["gpus"]["used"]
assert [u["device"] for u in used] == [0], used
assert used[0]["uuid"] == "GPU-66616b65-6375-6461-2d75-7569642d0000", used
PYEOF
}

shim torch 'torch.%r.%j.json' RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 TORCHELASTIC_RUN_ID=run7 \
    CUDA_VISIBLE_DEVICES=0,1
job torch.1.run7.json "{'launcher': 'torchrun', 'id': 'run7', 'step': None, 'rank': 1, 'local_rank': 1, 'world_size': 2, 'visible': '0,1'}"
shim ompi 'ompi.%r.%j.%h.json' OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_LOCAL_RANK=1 \
    OMPI_COMM_WORLD_SIZE=4 OMPI_MCA_ess_base_jobid=123456
job "ompi.3.123456.$HOST.json" "{'launcher': 'openmpi', 'id': '123456', 'step': None, 'rank': 3, 'local_rank': 1, 'world_size': 4, 'visible': None}"
shim ompi5 'ompi5.%j.json' OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 \
    PMIX_NAMESPACE='prterun-x/1@1'
job ompi5.prterun-x_1@1.json "{'launcher': 'openmpi', 'id': 'prterun-x/1@1', 'step': None, 'rank': 0, 'local_rank': None, 'world_size': 1, 'visible': None}"
shim pmi 'pmi.%r.json' PMI_RANK=5 PMI_SIZE=8 MPI_LOCALRANKID=1 CUDA_VISIBLE_DEVICES=
job pmi.5.json "{'launcher': 'pmi', 'id': None, 'step': None, 'rank': 5, 'local_rank': 1, 'world_size': 8, 'visible': ''}"
shim pmix 'pmix.%r.json' PMIX_RANK=2 PMIX_NAMESPACE=ns1
job pmix.2.json "{'launcher': 'pmi', 'id': 'ns1', 'step': None, 'rank': 2, 'local_rank': None, 'world_size': None, 'visible': None}"
shim slurm 'slurm.%j.%r.json' SLURM_PROCID=6 SLURM_LOCALID=2 SLURM_NTASKS=16 \
    SLURM_JOB_ID=4242 SLURM_STEP_ID=0
job slurm.4242.6.json "{'launcher': 'slurm', 'id': '4242', 'step': '0', 'rank': 6, 'local_rank': 2, 'world_size': 16, 'visible': None}"
# torchrun under srun: torchrun's rank, Slurm's job id (torchrun's "none").
shim nested 'nested.%j.%r.json' SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_JOB_ID=99 \
    RANK=7 LOCAL_RANK=3 WORLD_SIZE=8 TORCHELASTIC_RUN_ID=none
job nested.99.7.json "{'launcher': 'torchrun', 'id': '99', 'step': None, 'rank': 7, 'local_rank': 3, 'world_size': 8, 'visible': None}"
# A rank that is not a number: no launcher; RANK alone is not torchrun.
shim junk 'junk.%r.%j.json' RANK=1x WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=-1
ls "$WORK" | grep -qx 'junk\.pid[0-9]*\.nojob\.json' || fail "junk: no junk.pidPID.nojob.json"
f=$(ls "$WORK" | grep -x 'junk\.pid[0-9]*\.nojob\.json' | head -1)
[ -n "$f" ] && job "$f" "{'launcher': None, 'id': None, 'step': None, 'rank': None, 'local_rank': None, 'world_size': None, 'visible': None}"
shim none 'none.%r.json' RANK=3
ls "$WORK" | grep -qx 'none\.pid[0-9]*\.json' || fail "none: RANK alone gave a rank"

# The text report's first line.
shim text 'text.%r.txt' CUWARDEN_REPORT_FORMAT=text OMPI_COMM_WORLD_RANK=2 \
    OMPI_COMM_WORLD_SIZE=4
grep -q '^cuwarden .* report: pid [0-9]* (parent [0-9]*), rank 2 of 4, mode audit, ' \
    "$WORK/text.2.txt" || { fail "text: no 'rank 2 of 4'"; head -1 "$WORK/text.2.txt"; }
shim text1 'text1.%r.txt' CUWARDEN_REPORT_FORMAT=text PMIX_RANK=1
grep -q '), rank 1, mode audit, ' "$WORK/text1.1.txt" || { fail "text1: no 'rank 1,'"; head -1 "$WORK/text1.1.txt"; }
shim text0 'text0.txt' CUWARDEN_REPORT_FORMAT=text
grep -q '), mode audit, ' "$WORK/text0.txt" || fail "text0: a rank without a launcher"

finish
