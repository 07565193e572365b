/*
 * symbolize.h -- the frames of the findings named: (module, build-id,
 * offset) -> function, file:line and inlined calls (symbolize.c).
 */
#ifndef CUWARDEN_TOOLS_SYMBOLIZE_H
#define CUWARDEN_TOOLS_SYMBOLIZE_H

#include "audit.h"

/* Fills every frame of every finding, C++ names demangled when demangle
 * (--demangle).  Never fails: a frame that cannot be symbolized keeps
 * module + offset and a note. */
void symbolize_model(au_model_t *m, bool demangle);
void symbolize_done(void);

#endif /* CUWARDEN_TOOLS_SYMBOLIZE_H */
