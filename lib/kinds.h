/*
 * kinds.h -- the table of allocation kinds: the one place a kind is
 * listed.  The kind_t enum (types.h), the report's names (kind_name), the
 * leak predicate (report_kind_leaks) and the audit tool's SARIF leak rules
 * (tools/render_sarif.c) are all generated from KIND_LIST; add or change a
 * kind here and nowhere else.  Only macros and no includes, so tools/
 * (which never links libcuwarden) includes it too.
 *
 * KIND_LIST(X) calls X(ENUM, name, leaks, host, line, rule, text) once per kind, in
 * enum order (KIND_<ENUM> = 0, 1, ...):
 *   ENUM   the enum's suffix: KIND_DEVICE, ...
 *   name   the report's name ("device"): JSON "kind", text reports, logs,
 *          and the SARIF rule id "cuwarden.leak.<name>"
 *   leaks  1 when a live record of the kind is reported; 0 for views (no
 *          memory of their own: the allocation they refer to is reported)
 *          and mappings (a mapping holds no memory: its physical handle
 *          and its reservation are the leaks)
 *   host   1 for host memory (pinned, registered): reports label it
 *          "host", every other kind by its device
 *   line   1 when its bytes count in the timeline's lines of memory
 *          over time (peaks, series, the totals past the limit); 0 for
 *          address ranges, mappings and views (no memory of their own)
 *          and IPC mappings (another process's memory)
 *   rule   the SARIF rule's PascalCase name, or NULL for no rule (views;
 *          va, whose live records are address ranges with a rule of
 *          their own); mappings keep theirs
 *   text   the SARIF rule's full description, or NULL
 * The first three equal cw_kind_t (lib/cuwarden.h; checked in buf.c).
 */
#ifndef CUWARDEN_KINDS_H
#define CUWARDEN_KINDS_H

#define KIND_LIST(X) \
	X(DEVICE, "device", 1, 0, 1, "DeviceMemoryLeak", \
	    "Device memory (cuMemAlloc, cuMemAllocPitch) was still " \
	    "allocated when the process ended.") \
	X(MANAGED, "managed", 1, 0, 1, "ManagedMemoryLeak", \
	    "Managed (unified) memory (cuMemAllocManaged) was still " \
	    "allocated when the process ended.") \
	X(PINNED, "pinned", 1, 1, 1, "PinnedMemoryLeak", \
	    "Pinned host memory (cuMemHostAlloc, cuMemAllocHost) was still " \
	    "allocated when the process ended.") \
	X(REGISTERED, "registered", 1, 1, 1, "RegisteredMemoryLeak", \
	    "Host memory registered with cuMemHostRegister was still " \
	    "registered when the process ended.") \
	X(ASYNC, "async", 1, 0, 1, "AsyncMemoryLeak", \
	    "Stream-ordered memory (cuMemAllocAsync, " \
	    "cuMemAllocFromPoolAsync) was never freed.") \
	X(VMM, "vmm", 1, 0, 1, "VmmPhysicalMemoryLeak", \
	    "Physical memory from cuMemCreate was never released.") \
	/* an address range, not memory: its own category and SARIF rule \
	 * (cuwarden.address_range, tools/render_sarif.c) */ \
	X(VA, "va", 1, 0, 0, NULL, NULL) \
	X(MAPPING, "mapping", 0, 0, 0, "VmmMappingLeak", \
	    "A cuMemMap mapping was never unmapped.") \
	/* cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate */ \
	X(ARRAY, "array", 1, 0, 1, "ArrayLeak", \
	    "A CUDA array was never destroyed.") \
	X(IPC, "ipc", 1, 0, 0, "IpcMappingLeak", \
	    "Memory opened with cuIpcOpenMemHandle was never closed.") \
	/* cw_view: no memory of its own */ \
	X(VIEW, "view", 0, 0, 0, NULL, NULL) \
	X(GRAPH, "graph", 1, 0, 1, "GraphMemoryLeak", \
	    "Graph memory (an allocation node, or cuMemAllocAsync captured " \
	    "into a graph) made live by a launch was never freed.")

#endif /* CUWARDEN_KINDS_H */
