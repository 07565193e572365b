/*
 * cuwarden_annotate.h -- annotations for programs run under the shim.
 *
 * A program (or a library inside it) can name the owner of a CUDA pointer,
 * take and drop references on it, and hand it to another owner.  Under
 * libcuwarden_preload.so (or linked with libcuwarden) the library's
 * contracts then apply to that pointer: freeing it while references are
 * held is a free_while_referenced violation, a transfer while shared a
 * transfer_while_shared one, a release without a retain a
 * refcount_underflow one.
 *
 * The entry points are weak references: a binary using these macros runs
 * unchanged without cuwarden (each macro is then a no-op returning 0).
 * Each returns 0 (CW_OK) on success or a negative CW_E* status, as
 * cuwarden.h's functions do.  ptr is the base address the driver returned
 * (a CUdeviceptr cast to a pointer, or a host pointer).
 */
#ifndef CUWARDEN_ANNOTATE_H
#define CUWARDEN_ANNOTATE_H

#ifdef __cplusplus
extern "C" {
#endif

extern int cw_annotate_owner(const void *ptr, const char *owner)
    __attribute__((weak));
extern int cw_annotate_retain(const void *ptr) __attribute__((weak));
extern int cw_annotate_release(const void *ptr) __attribute__((weak));
extern int cw_annotate_transfer(const void *ptr, const char *new_owner)
    __attribute__((weak));

#define CW_ANNOTATE_OWNER(ptr, owner) \
	(cw_annotate_owner ? cw_annotate_owner((const void *)(ptr), (owner)) : 0)
#define CW_ANNOTATE_RETAIN(ptr) \
	(cw_annotate_retain ? cw_annotate_retain((const void *)(ptr)) : 0)
#define CW_ANNOTATE_RELEASE(ptr) \
	(cw_annotate_release ? cw_annotate_release((const void *)(ptr)) : 0)
#define CW_ANNOTATE_TRANSFER(ptr, owner) \
	(cw_annotate_transfer ? \
	    cw_annotate_transfer((const void *)(ptr), (owner)) : 0)

#ifdef __cplusplus
}
#endif

#endif /* CUWARDEN_ANNOTATE_H */
