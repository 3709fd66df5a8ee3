// SPDX-License-Identifier: MIT
/*
 * peak_rss - runs a command and writes its peak resident set size (KiB,
 * getrusage's ru_maxrss of the child) to FILE. Standard streams pass
 * through untouched, so it can sit in a pipeline (ctrace-bpf -o - | ...).
 *
 *   peak_rss FILE COMMAND [ARGS...]
 *
 * Exits with the command's status (128 + signal if it was killed).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *f;

	if (argc < 3) {
		fputs("usage: peak_rss FILE COMMAND [ARGS...]\n", stderr);
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
		perror("peak_rss");
		return 1;
	}
	f = fopen(argv[1], "w");
	if (f) {
		fprintf(f, "%ld\n", ru.ru_maxrss);
		fclose(f);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
