/* The library's few warnings on stderr (a build or extraction goes on). */
#ifndef EK_UTIL_WARN_H
#define EK_UTIL_WARN_H

/* "erofskit: warning: MESSAGE\n" on stderr, with control bytes of the
 * message (names from archives and images among them) shown as \xNN so
 * that a terminal shows them rather than acts on them. */
void warn_user(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
