/*
 * text.h -- text from outside (a report, a file name) made safe for a
 * text line: the UTF-8 rules the tool applies (json.h's json_utf8 uses
 * them for JSON strings).
 */
#ifndef CUWARDEN_TOOLS_TEXT_H
#define CUWARDEN_TOOLS_TEXT_H

#include <stddef.h>

/* The length (1..4) of the valid UTF-8 sequence at s, 0 if none starts
 * there. */
size_t utf8_seq(const unsigned char *s);
/* s for a text line (newly allocated): control characters written as
 * \n, \t, \r, \xNN, the C1 controls as \u00NN, bytes that are not UTF-8
 * as \xNN, a backslash as two; NULL gives "". */
char *text_escape(const char *s);

#endif /* CUWARDEN_TOOLS_TEXT_H */
