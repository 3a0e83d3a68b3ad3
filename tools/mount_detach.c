/* The FUSE server's fork, reporting to the process that mounted. */
#include "mount_detach.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

int detach_begin(void)
{
	unsigned char status = EXIT_USAGE;
	int pipe_fd[2], wstatus;
	ssize_t got;
	pid_t pid;

	if (pipe(pipe_fd))
		return -1;
	pid = fork();
	if (pid < 0) {
		int saved = errno;

		close(pipe_fd[0]);
		close(pipe_fd[1]);
		errno = saved;
		return -1;
	}
	if (pid == 0) {
		close(pipe_fd[0]);
		/* Out of the caller's session and working directory, so that
		 * a hangup of its terminal or an unmount of its cwd spares
		 * the server. */
		(void)setsid();
		if (chdir("/")) {
			/* Nothing depends on it: the image path is absolute. */
		}
		return pipe_fd[1];
	}
	close(pipe_fd[1]);
	do
		got = read(pipe_fd[0], &status, 1);
	while (got < 0 && errno == EINTR);
	/* No verdict: the server died first; its own status if it left one. */
	if (got != 1) {
		status = EXIT_USAGE;
		if (waitpid(pid, &wstatus, 0) == pid && WIFEXITED(wstatus) && WEXITSTATUS(wstatus))
			status = (unsigned char)WEXITSTATUS(wstatus);
	}
	_exit(status);
}

void detach_done(int fd, int status)
{
	unsigned char byte = (unsigned char)status;
	int null_fd;

	if (!status && (null_fd = open("/dev/null", O_RDWR)) >= 0) {
		(void)dup2(null_fd, STDIN_FILENO);
		(void)dup2(null_fd, STDOUT_FILENO);
		(void)dup2(null_fd, STDERR_FILENO);
		if (null_fd > STDERR_FILENO)
			close(null_fd);
	}
	while (write(fd, &byte, 1) < 0 && errno == EINTR)
		;
	close(fd);
}
