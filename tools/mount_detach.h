/*
 * The FUSE server into the background only once it has opened its image.
 *
 * libfuse's fuse_daemonize() lets the mounting process exit 0 as soon as
 * the child exists.  The server reopens the image after the fork (threads
 * do not survive it), and that open can fail where the first one did not:
 * a remote blob found not to match its digest in between, a file replaced.
 * Then the mount vanished with its error on /dev/null and the user's
 * command had said yes.  Here the mounting process waits for the server's
 * verdict and exits with it, the error still on the user's terminal.
 */
#ifndef EROFSKIT_TOOLS_MOUNT_DETACH_H
#define EROFSKIT_TOOLS_MOUNT_DETACH_H

/* Forks.  In the child (the server) returns a descriptor to hand to
 * detach_done(), or -1 with errno set when it could not fork.  The parent
 * never returns: it exits with the status the child reports, or, if the
 * child dies first, with failure. */
int detach_begin(void);

/* The server's verdict: 0 to go on serving (standard input, output and
 * error then go to /dev/null), else the exit status the mounting process
 * takes.  Closes fd. */
void detach_done(int fd, int status);

#endif
