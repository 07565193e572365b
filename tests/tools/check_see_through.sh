#!/bin/bash
# Seeing through the caches (lib/seethrough.h): cuwarden-audit
# --see-through and CUWARDEN_SEE_THROUGH=1 with the shim alone, on a
# Python script that prints the variables it sees, with a stub cupy
# package (its cuda.set_allocator and set_pinned_memory_allocator record
# their calls; its import sets its "pools" as CuPy's does) and a user's
# sitecustomize.py that must still run: the preamble, the values, the
# hook run after cupy's own import, a variable the user set kept (and
# said), --mode given kept, -q, a shim with no hook beside it, a second
# copy of the hook on the path, children silent, and pool mode in the
# report (CUWARDEN_MODE=audit winning over it).
. "$top_srcdir/tests/tools/testlib.sh"

SHIM="$top_builddir/preload/.libs/libcuwarden_preload.so"
P="$top_builddir/tests/tools/cuprog"
HOOK="$top_builddir/preload/python/sitecustomize.py"
for f in "$SHIM" "$P" "$HOOK"; do
	[ -e "$f" ] || { echo "harness: $f not built"; exit 99; }
done
# The interpreter itself, not a wrapper script (pyenv's) that would be
# audited as processes of its own.
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) ||
    { echo "SKIP: no python3"; exit 77; }
HOOKDIR=$(cd "$top_builddir/preload/python" && pwd -P)
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR" "$WORK/site/cupy" "$WORK/user" "$WORK/copy"

cat >"$WORK/site/cupy/__init__.py" <<'EOF'
# A stub of CuPy: its import ends by setting its memory pools, as
# cupy/__init__.py does.
from . import cuda
cuda.set_allocator("pool")
cuda.set_pinned_memory_allocator("pinned-pool")
EOF
cat >"$WORK/site/cupy/cuda.py" <<'EOF'
calls = []
def set_allocator(allocator=None):
    calls.append(("set_allocator", allocator))
def set_pinned_memory_allocator(allocator=None):
    calls.append(("set_pinned_memory_allocator", allocator))
EOF
cat >"$WORK/user/sitecustomize.py" <<'EOF'
import builtins
builtins.USER_SITECUSTOMIZE_RAN = True
EOF
cp "$HOOK" "$WORK/copy/sitecustomize.py"
cat >"$WORK/show.py" <<'EOF'
import builtins, os, subprocess, sys
for v in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING",
          "XLA_PYTHON_CLIENT_ALLOCATOR",
          "XLA_PYTHON_CLIENT_PREALLOCATE",
          "NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "CUWARDEN_MODE",
          "PYTHONPATH"):
    print("%s=%s" % (v, os.environ.get(v, "<unset>")))
print("user sitecustomize ran:", getattr(builtins, "USER_SITECUSTOMIZE_RAN",
                                         False))
import cupy
print("cupy calls:", cupy.cuda.calls)
sys.stdout.flush()
if len(sys.argv) > 1:  # a child Python, which says nothing more
    subprocess.run([sys.executable, "-c", "import cupy"], check=True)
EOF

ALL="PYTORCH_CUDA_ALLOC_CONF PYTORCH_NO_CUDA_MEMORY_CACHING XLA_PYTHON_CLIENT_ALLOCATOR
XLA_PYTHON_CLIENT_PREALLOCATE NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT
CUWARDEN_MODE CUWARDEN_SEE_THROUGH"
# shellcheck disable=SC2086
unset $ALL
export PYTHONPATH="$WORK/user:$WORK/site"
OFF="cupy calls: [('set_allocator', 'pool'), ('set_pinned_memory_allocator', 'pinned-pool'), ('set_allocator', None), ('set_pinned_memory_allocator', None)]"
ON="cupy calls: [('set_allocator', 'pool'), ('set_pinned_memory_allocator', 'pinned-pool')]"

# The tool: the preamble, one line per setting, before the program's own
# output; the program sees them; the hook ran after cupy's import; the
# user's sitecustomize ran too.
run tool "$AUDIT" --see-through "$PY" "$WORK/show.py"
expect_rc tool 0
expect_block tool err "cuwarden-audit: see-through: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (PyTorch: caching allocator off: a cudaMallocAsync per tensor, stream-ordered, as fast as the cache)
cuwarden-audit: see-through: PYTORCH_NO_CUDA_MEMORY_CACHING=1 (PyTorch: where PYTORCH_CUDA_ALLOC_CONF is kept: no cache, a cudaMalloc per tensor)
cuwarden-audit: see-through: XLA_PYTHON_CLIENT_ALLOCATOR=platform (JAX: BFC allocator off: an allocation per buffer)
cuwarden-audit: see-through: XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX: no preallocated 75% of the GPU)
cuwarden-audit: see-through: NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT=0 (Numba: deallocations not batched: each array freed when it dies)
cuwarden-audit: see-through: CUWARDEN_MODE=pool (cuwarden: pool mode: the allocations served fast)
cuwarden-audit: see-through: PYTHONPATH=$HOOKDIR:$WORK/user:$WORK/site (CuPy: its memory pools off at import, by sitecustomize.py)
cuwarden-audit: see-through: built-in suppressions not applied: leak:libc10_cuda.so, leak:libxla*.so*, leak:xla_extension*.so*, leak:*xla_cuda*plugin*.so*, leak:libjax_common*.so* (they hide every tensor of these frameworks)"
expect_block tool out "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
PYTORCH_NO_CUDA_MEMORY_CACHING=1
XLA_PYTHON_CLIENT_ALLOCATOR=platform
XLA_PYTHON_CLIENT_PREALLOCATE=false
NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT=0
CUWARDEN_MODE=pool
PYTHONPATH=$HOOKDIR:$WORK/user:$WORK/site
user sitecustomize ran: True
$OFF"
[ "$(grep -c 'see-through' "$WORK/tool.err")" = 8 ] ||
    fail "tool: not eight see-through lines"

# Without --see-through: nothing of it.
run plain "$AUDIT" "$PY" "$WORK/show.py"
expect_rc plain 0
expect_not_in plain err "see-through"
expect_in plain out "PYTORCH_NO_CUDA_MEMORY_CACHING=<unset>"
expect_in plain out "PYTORCH_CUDA_ALLOC_CONF=<unset>"
expect_in plain out "CUWARDEN_MODE=<unset>"
expect_in plain out "user sitecustomize ran: True"
expect_in plain out "$ON"
run no "$AUDIT" --see-through --see-through=no "$PY" "$WORK/show.py"
expect_rc no 0
expect_not_in no err "see-through"
expect_in no out "$ON"

# The user's value wins, and is said: from the environment, and --mode.
run user env PYTORCH_NO_CUDA_MEMORY_CACHING=0 XLA_PYTHON_CLIENT_ALLOCATOR= \
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
    "$AUDIT" --mode audit --see-through "$PY" "$WORK/show.py"
expect_rc user 0
expect_in user err "cuwarden-audit: see-through: PYTORCH_NO_CUDA_MEMORY_CACHING=0 kept, from the environment (see-through would set 1)"
expect_in user err "cuwarden-audit: see-through: XLA_PYTHON_CLIENT_ALLOCATOR= kept, from the environment (see-through would set platform)"
expect_in user err "cuwarden-audit: see-through: CUWARDEN_MODE=audit kept, given on the command line (see-through would set pool)"
expect_in user err "cuwarden-audit: see-through: XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX"
expect_in user out "PYTORCH_NO_CUDA_MEMORY_CACHING=0"
expect_in user err "cuwarden-audit: see-through: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True kept, from the environment (see-through would set backend:cudaMallocAsync)"
expect_in user out "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
expect_in user out "XLA_PYTHON_CLIENT_ALLOCATOR="
expect_in user out "CUWARDEN_MODE=audit"
expect_in user out "$OFF"
run usermode env CUWARDEN_MODE=audit "$AUDIT" --see-through "$PY" "$WORK/show.py"
expect_in usermode err "see-through: CUWARDEN_MODE=audit kept, from the environment"
expect_in usermode out "CUWARDEN_MODE=audit"
run same env XLA_PYTHON_CLIENT_PREALLOCATE=false "$AUDIT" --see-through "$PY" "$WORK/show.py"
expect_in same err "cuwarden-audit: see-through: XLA_PYTHON_CLIENT_PREALLOCATE=false, from the environment (JAX: no preallocated 75% of the GPU)"

# -q: settings made, nothing said.
run quiet "$AUDIT" -q --see-through "$PY" "$WORK/show.py"
expect_rc quiet 0
expect_not_in quiet err "see-through"
expect_in quiet out "PYTORCH_NO_CUDA_MEMORY_CACHING=1"
expect_in quiet out "$OFF"

# A second copy of the hook on the path (another installation): no loop,
# the pools turned off once, the user's sitecustomize still run.
run copy env PYTHONPATH="$WORK/copy:$WORK/user:$WORK/site" \
    "$AUDIT" --see-through "$PY" "$WORK/show.py"
expect_rc copy 0
expect_in copy out "user sitecustomize ran: True"
expect_in copy out "$OFF"

# No sitecustomize of the user's: the hook alone.
run alone env PYTHONPATH="$WORK/site" "$AUDIT" --see-through "$PY" \
    "$WORK/show.py"
expect_rc alone 0
expect_in alone out "user sitecustomize ran: False"
expect_in alone out "$OFF"

# A shim with no hook beside it: a warning, the rest set.  A
# sitecustomize.py of some other package there is not taken for it.
mkdir -p "$WORK/bare/python"
cp "$SHIM" "$WORK/bare/"
printf 'import builtins\nbuiltins.FOREIGN_SITECUSTOMIZE = True\n' >"$WORK/bare/python/sitecustomize.py"
run bare "$AUDIT" --preload "$WORK/bare/libcuwarden_preload.so" \
    --see-through "$PY" "$WORK/show.py"
expect_rc bare 0
expect_in bare err "cuwarden-audit: warning: see-through: CuPy's hook (sitecustomize.py) is not beside the shim"
expect_in bare out "PYTORCH_NO_CUDA_MEMORY_CACHING=1"
expect_in bare out "$ON"
expect_not_in bare out "$WORK/bare/python"
run shimbare env CUWARDEN_SEE_THROUGH=1 LD_PRELOAD="$WORK/bare/libcuwarden_preload.so" \
    "$PY" "$WORK/show.py"
expect_rc shimbare 0
expect_in shimbare err "cuwarden: warning: see-through: CuPy's hook (sitecustomize.py) "
expect_not_in shimbare out "$WORK/bare/python"
expect_in shimbare out "$ON"

# The shim alone: the same settings, said by the first process only (its
# child inherits them), the hook beside the shim.
run shim env CUWARDEN_SEE_THROUGH=1 LD_PRELOAD="$SHIM" "$PY" "$WORK/show.py" child
expect_rc shim 0
expect_block shim err "cuwarden: see-through: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (PyTorch: caching allocator off: a cudaMallocAsync per tensor, stream-ordered, as fast as the cache)
cuwarden: see-through: PYTORCH_NO_CUDA_MEMORY_CACHING=1 (PyTorch: where PYTORCH_CUDA_ALLOC_CONF is kept: no cache, a cudaMalloc per tensor)
cuwarden: see-through: XLA_PYTHON_CLIENT_ALLOCATOR=platform (JAX: BFC allocator off: an allocation per buffer)
cuwarden: see-through: XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX: no preallocated 75% of the GPU)
cuwarden: see-through: NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT=0 (Numba: deallocations not batched: each array freed when it dies)
cuwarden: see-through: CUWARDEN_MODE=pool (cuwarden: pool mode: the allocations served fast)
cuwarden: see-through: PYTHONPATH=$HOOKDIR first (CuPy: its memory pools off at import, by sitecustomize.py)"
[ "$(grep -c 'see-through' "$WORK/shim.err")" = 7 ] ||
    fail "shim: not seven see-through lines (a child spoke?)"
expect_block shim out "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
PYTORCH_NO_CUDA_MEMORY_CACHING=1
XLA_PYTHON_CLIENT_ALLOCATOR=platform
XLA_PYTHON_CLIENT_PREALLOCATE=false
NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT=0
CUWARDEN_MODE=pool
PYTHONPATH=$HOOKDIR:$WORK/user:$WORK/site
user sitecustomize ran: True
$OFF"
run shimuser env CUWARDEN_SEE_THROUGH=1 NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT=10 \
    LD_PRELOAD="$SHIM" "$PY" "$WORK/show.py"
expect_rc shimuser 0
expect_in shimuser err "cuwarden: see-through: NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT=10 kept, set already (see-through would set 0)"
expect_in shimuser out "NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT=10"
expect_in shimuser out "$OFF"
run shimpath env CUWARDEN_SEE_THROUGH=1 PYTHONPATH="$HOOKDIR:$WORK/site" \
    LD_PRELOAD="$SHIM" "$PY" "$WORK/show.py"
expect_rc shimpath 0
expect_in shimpath err "cuwarden: see-through: PYTHONPATH has $HOOKDIR already (CuPy"
expect_not_in shimpath err "warning"
expect_in shimpath out "PYTHONPATH=$HOOKDIR:$WORK/site"
expect_in shimpath out "$OFF"
run shimoff env CUWARDEN_SEE_THROUGH=0 LD_PRELOAD="$SHIM" "$PY" "$WORK/show.py"
expect_rc shimoff 0
expect_not_in shimoff err "see-through"
expect_in shimoff out "$ON"

# Pool mode: asked for by CUWARDEN_SEE_THROUGH unless CUWARDEN_MODE says
# otherwise; a leak still found under the tool.
mode_of() {
	rm -f "$WORK"/r.*.json
	env "$@" CUWARDEN_REPORT="$WORK/r.%p.json" LD_PRELOAD="$SHIM" "$P" \
	    leak >/dev/null 2>&1
	grep -ho '"mode": *"[a-z]*"' "$WORK"/r.*.json | sed 's/.*"\([a-z]*\)"$/\1/'
}
[ "$(mode_of CUWARDEN_SEE_THROUGH=1)" = pool ] ||
    fail "CUWARDEN_SEE_THROUGH=1: not pool mode"
[ "$(mode_of CUWARDEN_SEE_THROUGH=1 CUWARDEN_MODE=audit)" = audit ] ||
    fail "CUWARDEN_SEE_THROUGH=1 CUWARDEN_MODE=audit: not audit mode"
[ "$(mode_of CUWARDEN_SEE_THROUGH=0)" = audit ] ||
    fail "CUWARDEN_SEE_THROUGH=0: not audit mode"
run leak "$AUDIT" --see-through --keep-reports "$WORK/kept" "$P" leak
expect_rc leak 23
expect_in leak err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
grep -q '"mode": *"pool"' "$WORK"/kept/* || fail "leak: the report is not pool mode's"

# The built-in rules of the caches are left out: a leak in a module named
# as PyTorch's allocator (a copy of cuprog) is suppressed by them, and
# reported under --see-through; --no-builtin-suppressions says nothing of
# them.
cp "$P" "$WORK/libc10_cuda.so"
run c10 "$AUDIT" "$WORK/libc10_cuda.so" leak
expect_rc c10 0
expect_in c10 err "== LEAK SUMMARY: 0 bytes leaked in 0 allocations"
run c10see "$AUDIT" --see-through "$WORK/libc10_cuda.so" leak
expect_rc c10see 23
expect_in c10see err "== LEAK SUMMARY: 2,097,152 bytes leaked in 2 allocations (1 group)"
run c10nob "$AUDIT" --see-through --no-builtin-suppressions "$WORK/libc10_cuda.so" leak
expect_rc c10nob 23
expect_not_in c10nob err "built-in suppressions not applied"

# Not with `report`.
run rep "$AUDIT" --see-through report "$DATA/proc_a.json"
expect_rc rep 125
expect_in rep err "the shim and run options apply only when running a program"

finish
