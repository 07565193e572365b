/*
 * vtypes.h -- the table of violation types: the one place a broken
 * contract is listed.  The vtype_t enum (violation.h), the report's names
 * (violation_name), the log's phrases and the audit tool's SARIF violation
 * rules (tools/render_sarif.c) are generated from VTYPE_LIST; add or
 * change a type here and nowhere else (doc/contracts.md explains each).
 * Only macros and no includes, so tools/ includes it too.
 *
 * VTYPE_LIST(X) calls X(ENUM, name, rule, text, phrase) once per type, in
 * enum order (V_<ENUM> = 0, 1, ...):
 *   ENUM    the enum's suffix: V_INVALID_FREE, ...
 *   name    the report's name ("invalid_free"): JSON "type", suppressions,
 *           and the SARIF rule id "cuwarden.violation.<name>"
 *   rule    the SARIF rule's PascalCase name
 *   text    the SARIF rule's description
 *   phrase  what the log says is wrong, after "<api>(0x...) of <kind>
 *           memory (N bytes)" (and an out_of_bounds's range); what the
 *           call then did, where the phrase does not say it, is the
 *           violation's outcome (violation.h)
 */
#ifndef CUWARDEN_VTYPES_H
#define CUWARDEN_VTYPES_H

#define VTYPE_LIST(X) \
	X(INVALID_FREE, "invalid_free", "InvalidFree", \
	    "A pointer or handle that was never allocated was freed.", \
	    "was never allocated") \
	X(DOUBLE_FREE, "double_free", "DoubleFree", \
	    "An allocation was freed twice.", \
	    "already freed") \
	X(INTERIOR_FREE, "interior_free", "InteriorFree", \
	    "A pointer inside a live allocation, not its base, was freed.", \
	    "is an interior pointer, not the base") \
	X(MISMATCHED_FREE, "mismatched_free", "MismatchedFree", \
	    "Memory was freed with the wrong family of call (e.g. " \
	    "cuMemFreeHost on device memory).", \
	    "freed with the wrong function for its kind") \
	X(FREE_WHILE_REFERENCED, "free_while_referenced", \
	    "FreeWhileReferenced", \
	    "An allocation was freed while references (views) were still " \
	    "held.", \
	    "while references are still held") \
	X(TRANSFER_WHILE_SHARED, "transfer_while_shared", \
	    "TransferWhileShared", \
	    "Ownership was transferred while more than one reference was " \
	    "held.", \
	    "transfer refused: references are held") \
	X(REFCOUNT_UNDERFLOW, "refcount_underflow", "RefcountUnderflow", \
	    "More references were released than retained.", \
	    "released more often than retained") \
	X(USE_AFTER_FREE, "use_after_free", "UseAfterFree", \
	    "A freed allocation was used.", \
	    "used after it was freed") \
	X(OUT_OF_BOUNDS, "out_of_bounds", "OutOfBounds", \
	    "A copy or memset reached outside its allocation.", \
	    "outside it") \
	X(FAILED_FREE, "failed_free", "FailedFree", \
	    "The driver failed to free an allocation; its memory stays lost.", \
	    "the driver did not free it")

#endif /* CUWARDEN_VTYPES_H */
