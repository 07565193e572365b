/*
 * ownerpats.h -- the modules never taken for an allocation's owner:
 * CUDA's own libraries, ours, and call trampolines (fnmatch patterns on a
 * module's file name).  The shim's owner (shim/attribution.c, with
 * CUWARDEN_OWNER_SKIP's on top) and the audit tool's owner of a timeline
 * stack (tools/tlseries.c) both use this list.  Only a macro and no
 * includes, so tools/ (which never links libcuwarden) includes it too.
 */
#ifndef CUWARDEN_OWNERPATS_H
#define CUWARDEN_OWNERPATS_H

#define OWNER_CUDA_PATTERNS \
	"libcuda.so*", "libcudart.so*", "libcublas.so*", "libcublasLt.so*", \
	"libcudnn*.so*", "libnccl.so*", "libcuwarden*", \
	/* Call trampolines, never owners: Python's ctypes calls the driver \
	 * through libffi (the owner is then the interpreter). */ \
	"libffi.so*", "_ctypes*.so"

#endif /* CUWARDEN_OWNERPATS_H */
