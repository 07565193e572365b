/*
 * lasterr.h -- the thread-local detail behind cw_last_error(), and the
 * status strings of cw_strerror().  Owner: core.
 */
#ifndef CUWARDEN_LASTERR_H
#define CUWARDEN_LASTERR_H

#include "cuwarden.h"

/* Sets the calling thread's last error and returns status, so that
 * `return lasterr_set(CW_EINVAL, __func__, "size is 0");` reads well.
 * The message is formatted without malloc. */
int lasterr_set(int status, const char *function, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The calling thread's record, to add detail after lasterr_set (rule,
 * buf, address, cuda_error, sizes). */
cw_error_t *lasterr_get(void);
void lasterr_clear(void);

#endif /* CUWARDEN_LASTERR_H */
