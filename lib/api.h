/*
 * api.h -- what the layer above tells the public calls of api.c at run
 * time (lib/ is compiled once: it never asks whether it is in the shim).
 */
#ifndef CUWARDEN_API_H
#define CUWARDEN_API_H

/* The mode cw_report writes ("audit", "pool"), asked of fn when a report
 * is made; NULL (the default) writes "library".  Set once, before any
 * thread can call cw_report (the shim's constructor). */
void api_set_mode_source(const char *(*fn)(void));

#endif /* CUWARDEN_API_H */
