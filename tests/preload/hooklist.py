#!/usr/bin/env python3
"""Compares shim/hooks.def with the toolkit's cuda.h.

usage: hooklist.py CUDA_H HOOKS_DEF

For every base name the shim hooks (cuMemAlloc for cuMemAlloc_v2,
cuMemAllocAsync for cuMemAllocAsync_ptsz), every variant cuda.h declares
(versioned _vN, per-thread _ptsz/_ptds, the un-suffixed v1) must be in
hooks.def, except the legacy 32-bit ABIs listed below; and every hooked
name must be one cuda.h declares (a typo is caught here, not at run time).
Exit 0 when they agree, 1 otherwise.
"""
import re
import sys

# v1 ABIs with 32-bit sizes or 32-bit device pointers (CUdeviceptr_v1):
# no 64-bit program can use them for real memory; not hooked on purpose.
LEGACY = {
    "cuMemAlloc", "cuMemAllocPitch", "cuMemFree", "cuMemAllocHost",
    "cuMemGetInfo", "cuMemGetAddressRange", "cuArrayCreate",
    "cuArray3DCreate", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD",
    "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyDtoDAsync",
    "cuMemsetD8", "cuMemsetD16", "cuMemsetD32",
}


def base(name):
    name = re.sub(r"_(ptsz|ptds)$", "", name)
    return re.sub(r"_v\d+$", "", name)


def main(cuda_h, hooks_def):
    text = open(cuda_h).read()
    declared = set(re.findall(r"CUDAAPI\s+(cu\w+)\s*\(", text))
    inline = set(re.findall(r"static\s+inline\s+CUresult\s+(cu\w+)\s*\(",
                            text))
    for m in re.finditer(r"__CUDA_API_PT(SZ|DS)\((cu\w+)\)", text):
        declared.add(m.group(2) + ("_ptsz" if m.group(1) == "SZ"
                                   else "_ptds"))
    # "#define cuMemAlloc cuMemAlloc_v2": the exported name of the ABI
    for m in re.finditer(r"^\s*#\s*define\s+(cu\w+)\s+(cu\w+)\s*$", text,
                         re.M):
        declared.add(m.group(2))
    declared -= inline
    hooked = re.findall(r"^\s*(?:HOOK|GPA)\((cu\w+)", open(hooks_def).read(),
                        re.M)
    bad = 0
    dup = {h for h in hooked if hooked.count(h) > 1}
    for h in sorted(dup):
        print("hooks.def: %s listed twice" % h)
        bad += 1
    hooked = set(hooked)
    for h in sorted(hooked - declared):
        print("hooks.def: %s is not declared in %s" % (h, cuda_h))
        bad += 1
    bases = {base(h) for h in hooked}
    for d in sorted(declared):
        if base(d) in bases and d not in hooked and d not in LEGACY:
            print("hooks.def: %s is missing (cuda.h declares it; %s is "
                  "hooked)" % (d, base(d)))
            bad += 1
    print("%d hooked, %d base names, %d problems" % (len(hooked), len(bases),
                                                     bad))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(99)
    sys.exit(main(sys.argv[1], sys.argv[2]))
