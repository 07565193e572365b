# cuwarden see-through (lib/seethrough.h; doc/audit.md, "Seeing through
# the caches"): CuPy's memory pools turned off as soon as cupy is imported,
# so that every CuPy array is one CUDA allocation the shim sees.  CuPy has
# no environment variable for it; cupy.cuda.set_allocator(None) and
# cupy.cuda.set_pinned_memory_allocator(None) are its documented way.
#
# cuwarden-audit --see-through (or the shim, with CUWARDEN_SEE_THROUGH=1)
# puts this file's directory first on PYTHONPATH, so Python's site module
# imports it as sitecustomize.  It hides the sitecustomize that would have
# been imported instead (the user's, or the distribution's, such as
# Debian's /etc/python3.X/sitecustomize.py): that one is run next, as
# sitecustomize, after the hook is in place.
#
# Installed as $(pkglibdir)/python/sitecustomize.py, beside the shim.  Its
# first line must begin "# cuwarden see-through " (SEE_THROUGH_HOOK_MARK):
# the tool and the shim take no other file for the hook.

import sys

# The directories of every copy of this file already run in this
# interpreter (an installed copy and a build tree's may both be on the
# path): none of them is chained to again.
_SEEN = "_cuwarden_see_through_dirs"


class _PoolsOffLoader:
    """cupy's own loader, which then turns its memory pools off."""

    def __init__(self, loader, finder):
        self._loader = loader
        self._finder = finder

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        # The module keeps its own loader; this one only runs it.
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        _pools_off(module)


class _CupyFinder:
    """Finds cupy as the finders after it would, with _PoolsOffLoader."""

    def find_spec(self, name, path=None, target=None):
        if name != "cupy":
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PoolsOffLoader(spec.loader, self)
        return spec


def _pools_off(cupy):
    try:
        cupy.cuda.set_allocator(None)
        cupy.cuda.set_pinned_memory_allocator(None)
    except Exception as e:  # never break the program's import
        sys.stderr.write("cuwarden: warning: see-through: CuPy's memory "
                         "pools could not be turned off: %s\n" % (e,))


def _chain(here):
    """Runs the sitecustomize this one hides, if any, as sitecustomize."""
    import importlib.machinery
    import importlib.util
    import os

    seen = getattr(sys, _SEEN, None)
    if seen is None:
        seen = []
        setattr(sys, _SEEN, seen)
    seen.append(here)
    path = [p for p in sys.path
            if os.path.realpath(p or os.curdir) not in seen]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _install():
    import os

    here = os.path.dirname(os.path.realpath(__file__))
    if "cupy" not in sys.modules and not any(
            isinstance(f, _CupyFinder) or type(f).__name__ == "_CupyFinder"
            for f in sys.meta_path):
        sys.meta_path.insert(0, _CupyFinder())
    _chain(here)


_install()
