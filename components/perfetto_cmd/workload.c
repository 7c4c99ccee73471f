/*
 * The workload of a gated capture (`perfetto [flags] -- CMD [ARGS...]`, and
 * tracebox's autostart mode): the command the trace is taken around. The
 * session (session.c) starts it once every data source has started and stops
 * the trace when it exits; this file runs it like a shell runs a simple
 * command: fork, exec through PATH with the client's stdio, and a status of
 * the exit code, 128 + the signal that killed it, 127 when the command is not
 * found and 126 when it cannot be executed.
 *
 * Signals: the client keeps SIGINT, SIGTERM and SIGCHLD blocked (they arrive
 * through a loop's signalfd); the child gets the mask the client started
 * with, SIGPIPE back to its default, and SIGCHLD at its default even when the
 * client was started with it ignored (an ignored SIGCHLD would auto-reap the
 * workload and hide its status, and break the workload's own waits). A
 * SIGINT/SIGTERM sent to the client with kill(2) is passed on to the
 * workload; one the terminal generated (^C) already reached the workload,
 * which shares the client's process group, so it is not sent twice.
 */
#include "perfetto_cmd_int.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

void perfetto_cmd_workload_init(struct perfetto_cmd_workload *w, char *const *argv)
{
	memset(w, 0, sizeof *w);
	w->argv = argv;
	w->pid = -1;
	w->gate_fd = -1;
	sigemptyset(&w->child_mask);
}

int perfetto_cmd_workload_block_signals(struct perfetto_cmd_workload *w)
{
	sigset_t set;
	if (w->blocked)
		return 0;
	w->blocked = true;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	/* Inherited SIG_IGN would auto-reap the workload (waitpid: ECHILD) and
	 * be passed on to it; both the client and the workload get the default. */
	signal(SIGCHLD, SIG_DFL);
	return -pthread_sigmask(SIG_BLOCK, &set, &w->child_mask);
}

static void set_exited(struct perfetto_cmd_workload *w, int status)
{
	w->exited = true;
	w->pid = -1;
	w->status = status;
}

/* A waitpid status as a shell reports it. */
static int shell_status(int st)
{
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* In the child: become the command. */
static _Noreturn void exec_command(struct perfetto_cmd_workload *w)
{
	int e;
	signal(SIGPIPE, SIG_DFL);
	pthread_sigmask(SIG_SETMASK, &w->child_mask, NULL);
	execvp(w->argv[0], w->argv);
	e = errno;
	fprintf(stderr, "perfetto: cannot run '%s': %s\n", w->argv[0], strerror(e));
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

pid_t perfetto_cmd_workload_prepare(struct perfetto_cmd_workload *w)
{
	int gate[2];
	pid_t pid;
	char go = 0;

	if (w->started || w->exited || w->pid > 0)
		return w->pid;
	if (pipe2(gate, O_CLOEXEC) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(gate[0]);
		close(gate[1]);
		return -1;
	}
	if (pid == 0) {
		/* Signals stay blocked while held: one that arrives now is
		 * delivered at the exec, as if it came just after. */
		close(gate[1]);
		while (read(gate[0], &go, 1) < 0 && errno == EINTR)
			;
		if (go != 'g')
			_exit(125); /* the recorder went away: run nothing */
		close(gate[0]);
		exec_command(w);
	}
	close(gate[0]);
	w->pid = pid;
	w->gate_fd = gate[1];
	return pid;
}

void perfetto_cmd_workload_start(struct perfetto_cmd_workload *w)
{
	pid_t pid;

	if (w->started || w->exited)
		return;
	w->started = true;
	if (w->gate_fd >= 0) {
		(void)tb_write_all(w->gate_fd, "g", 1);
		tb_close(&w->gate_fd);
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "perfetto: cannot run '%s': %s\n", w->argv[0], strerror(errno));
		set_exited(w, 126);
		return;
	}
	if (pid == 0)
		exec_command(w);
	w->pid = pid;
}

void perfetto_cmd_workload_cancel(struct perfetto_cmd_workload *w, int signo)
{
	if (w->started || w->exited)
		return;
	if (w->pid > 0) {
		/* Prepared, never released: it ran nothing of the command. */
		tb_close(&w->gate_fd);
		kill(w->pid, SIGKILL);
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	set_exited(w, 128 + signo);
}

bool perfetto_cmd_workload_reap(struct perfetto_cmd_workload *w)
{
	int st;
	pid_t r;

	if (w->exited)
		return true;
	if (w->pid <= 0)
		return false;
	do
		r = waitpid(w->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	if (r < 0) /* not our child any more: nothing to report */
		set_exited(w, 127);
	else if (WIFEXITED(st) || WIFSIGNALED(st))
		set_exited(w, shell_status(st));
	else
		return false; /* stopped or continued: still running */
	return true;
}

void perfetto_cmd_workload_forward(struct perfetto_cmd_workload *w, struct loop *l, int signo)
{
	if (w->pid > 0 && !w->exited && loop_signal_code(l) != SI_KERNEL)
		kill(w->pid, signo);
}

static void wait_on_signal(struct loop *l, int signo, void *ctx)
{
	struct perfetto_cmd_workload *w = ctx;
	if (signo == SIGCHLD) {
		if (perfetto_cmd_workload_reap(w))
			loop_quit(l, 0);
		return;
	}
	perfetto_cmd_workload_forward(w, l, signo);
}

int perfetto_cmd_workload_wait(struct perfetto_cmd_workload *w,
                               struct perfetto_cmd_control *control)
{
	struct tb_err err = {0};
	struct loop *l;

	if (perfetto_cmd_workload_reap(w) || w->pid <= 0)
		return w->exited ? w->status : 127;
	l = loop_new(&err);
	if (!l || loop_add_signal(l, SIGCHLD, wait_on_signal, w) ||
	    loop_add_signal(l, SIGINT, wait_on_signal, w) ||
	    loop_add_signal(l, SIGTERM, wait_on_signal, w)) {
		/* No loop: wait without forwarding signals. */
		int st = 0;
		pid_t r;
		do
			r = waitpid(w->pid, &st, 0);
		while (r < 0 && errno == EINTR);
		set_exited(w, r < 0 ? 127 : shell_status(st));
	} else if (!perfetto_cmd_workload_reap(w)) {
		/* The capture is over: control commands are acknowledged, so a
		 * workload waiting for an answer does not hang. */
		if (control && perfetto_cmd_control_attach(control, l, 0, NULL, NULL) == 0)
			perfetto_cmd_control_stopped(control);
		/* SIGCHLD is blocked, so an exit since the reap above is pending. */
		loop_run(l);
		if (control)
			perfetto_cmd_control_detach(control);
	}
	if (l)
		loop_free(l);
	return w->status;
}
