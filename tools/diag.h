/*
 * diag.h -- the tool's diagnostics: one line each on stderr,
 * "cuwarden-audit: error: ..." or "cuwarden-audit: warning: ...".  The
 * whole message is text_escape()d (text.h): its arguments are often names
 * from a report (a format, a member, a path), and it must stay one line
 * and send no escape sequence to the terminal.
 */
#ifndef CUWARDEN_TOOLS_DIAG_H
#define CUWARDEN_TOOLS_DIAG_H

void au_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void au_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CUWARDEN_TOOLS_DIAG_H */
