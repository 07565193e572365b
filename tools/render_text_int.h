/*
 * render_text_int.h -- the text report's two files, shared by them and
 * nobody else; the contract is render.h.
 *
 *   render_text.c     the report's order, what is shown (-q, -v,
 *                     --show-leak-kinds, --print-limit), the sections
 *                     and summary lines, the line filter and colours
 *   render_finding.c  one finding group: its header line and stacks;
 *                     names escaped (rt_tx)
 *   render_oom.c, render_peak.c, render_growth.c  the OUT OF MEMORY,
 *                     PEAK and GROWING sections
 */
#ifndef CUWARDEN_TOOLS_RENDER_TEXT_INT_H
#define CUWARDEN_TOOLS_RENDER_TEXT_INT_H

#include <stdint.h>
#include <stdio.h>

#include "audit.h"

/* Colour marks: control bytes that no name carries (rt_tx escapes every
 * control character), written by the renderer right after a line's
 * "== " and before its newline; the line filter turns them into SGR
 * sequences when colour is on and drops them when it is off. */
#define RT_ERR "\x01"  /* what counts: bold red */
#define RT_NOTE "\x02" /* what does not (ranges, suppressed): yellow */
#define RT_SUM "\x03"  /* a summary line: bold */
#define RT_OFF "\x04"  /* plain again */

/* A name from a report, escaped for a text line; each result lives
 * until 8 more calls (enough for the names of one fprintf). */
const char *rt_tx(const char *s);
/* Member key of o, a count, with grouped digits into buf; "?" when it is
 * no non-negative integer (a document read as it is: OOM, peaks). */
const char *rt_num(const json_t *o, const char *key, char *buf, size_t size);
/* Frees what rt_tx keeps. */
void rt_tx_done(void);
/* v with its unit, singular or plural; "at least ..." for a saturated
 * sum (fmt_sum).  buf: 96 bytes and the unit's. */
const char *rt_amount(uint64_t v, const char *one, const char *many,
    bool commas, char *buf, size_t size);
/* A stack as a finding's: "at"/"by" lines, symbolized where the tool
 * could, leading static-runtime frames and what is below main left out,
 * at most limit frames (0 all). */
void rt_stack(FILE *out, const au_stack_t *s, int limit);
/* A leak group: header (with what hid it when it is not reported) and
 * allocation stack, at most limit frames (0 all). */
void rt_leak(FILE *out, const au_finding_t *f, int limit);
/* A violation group: header and its three stacks. */
void rt_violation(FILE *out, const au_finding_t *f, int limit);
/* An OOM report's OUT OF MEMORY section (render_oom.c), its stacks at
 * most limit frames (0 all). */
void rt_oom(FILE *out, const au_oom_t *oom, int limit);

#endif /* CUWARDEN_TOOLS_RENDER_TEXT_INT_H */
