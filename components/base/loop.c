/*
 * The event loop every daemon runs on: one epoll set holding user fds, one
 * timerfd per timer (CLOCK_BOOTTIME, so timeouts include suspend like trace
 * time does), and one signalfd for every signal routed through the loop.
 * Posted tasks run at the start of the next iteration.
 *
 * A one-shot timer of zero delay (a producer's commit batch, a deferred
 * error, the next step of a long read) needs no timerfd: it waits on the
 * `due` list and fires at the start of the next iteration, after the posted
 * tasks, as a 1 ns timerfd would have at the next epoll_wait, without the
 * five syscalls (create, arm, watch, unwatch, close) a timerfd costs. The
 * due list owns those sources: cancelling one only marks it dead.
 *
 * Each registration is a heap `struct loop_src` whose address is the epoll
 * user data. Removing one (loop_del_fd, loop_cancel_timer, a one-shot timer
 * firing) takes it out of epoll and the lookup maps, marks it dead and parks
 * it on a graveyard list that is freed only after the current batch has been
 * dispatched. A later event in the same batch that still points at it sees
 * `dead` and is skipped, so callbacks may remove anything at any time, and a
 * new registration that reuses the fd number is a different object.
 */
#include "base.h"

#include <errno.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

_Static_assert(LOOP_IN == EPOLLIN && LOOP_OUT == EPOLLOUT && LOOP_ERR == EPOLLERR &&
                   LOOP_HUP == EPOLLHUP,
               "LOOP_* must be the epoll bits");

#define MAX_EVENTS 64

enum src_kind { SRC_FD, SRC_TIMER, SRC_SIGNAL };

struct loop_src {
	struct loop_src *next_dead;
	enum src_kind kind;
	bool dead;
	bool periodic;
	bool immediate; /* a zero-delay one-shot timer on the due list, no fd */
	int fd;
	uint64_t timer_id;
	loop_fd_fn fd_cb;
	loop_timer_fn timer_cb;
	void *ctx;
};

struct loop_task {
	loop_task_fn cb;
	void *ctx;
};
VEC_DEFINE(loop_task_vec, struct loop_task);

VEC_DEFINE(loop_src_vec, struct loop_src *);

struct loop_sig {
	loop_signal_fn cb;
	void *ctx;
};

struct loop {
	int epfd;
	struct loop_src *sig_src; /* the signalfd, once a signal is added */
	struct hmap fds;          /* user fd -> struct loop_src * */
	struct hmap timers;       /* timer id -> struct loop_src * */
	uint64_t next_timer_id;
	sigset_t sigmask; /* signals routed through the signalfd */
	sigset_t unblock; /* of those, the ones we blocked ourselves */
	struct loop_sig sigs[NSIG];
	int sig_code; /* si_code of the signal being dispatched, else 0 */
	struct loop_task_vec posted;
	struct loop_task_vec running;
	struct loop_src_vec due, due_running; /* immediate timers */
	struct loop_src *graveyard;
	bool quit;
	int quit_code;
	struct tb_err err;
};

struct loop *loop_new(struct tb_err *err)
{
	struct loop *l = tb_calloc(1, sizeof *l);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		tb_err_errno(err, -errno, "cannot create epoll instance");
		tb_free(l);
		return NULL;
	}
	hmap_init(&l->fds);
	hmap_init(&l->timers);
	l->next_timer_id = 1;
	sigemptyset(&l->sigmask);
	sigemptyset(&l->unblock);
	return l;
}

static void free_graveyard(struct loop *l)
{
	while (l->graveyard) {
		struct loop_src *s = l->graveyard;
		l->graveyard = s->next_dead;
		tb_free(s);
	}
}

/* Take s out of epoll and park it until the batch is over. Timer and signal
 * fds are ours and closed here; user fds are the caller's. */
static void bury(struct loop *l, struct loop_src *s)
{
	TB_DCHECK(!s->dead);
	if (s->immediate) { /* the due list frees it */
		s->dead = true;
		return;
	}
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	if (s->kind != SRC_FD)
		tb_close(&s->fd);
	s->dead = true;
	s->next_dead = l->graveyard;
	l->graveyard = s;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	for (size_t i = hmap_next(&l->fds, 0); i != HMAP_END; i = hmap_next(&l->fds, i + 1))
		bury(l, (struct loop_src *)(uintptr_t)l->fds.slots[i].val);
	for (size_t i = hmap_next(&l->timers, 0); i != HMAP_END; i = hmap_next(&l->timers, i + 1))
		bury(l, (struct loop_src *)(uintptr_t)l->timers.slots[i].val);
	if (l->sig_src)
		bury(l, l->sig_src);
	free_graveyard(l);
	for (size_t i = 0; i < l->due.len; i++)
		tb_free(l->due.data[i]);
	vec_release(&l->due);
	vec_release(&l->due_running);
	/* A signal still pending now gets its normal disposition. */
	pthread_sigmask(SIG_UNBLOCK, &l->unblock, NULL);
	hmap_release(&l->fds);
	hmap_release(&l->timers);
	vec_release(&l->posted);
	vec_release(&l->running);
	close(l->epfd);
	tb_free(l);
}

struct tb_err *loop_err(struct loop *l)
{
	return &l->err;
}

static struct loop_src *src_new(enum src_kind kind, int fd, void *ctx)
{
	struct loop_src *s = tb_calloc(1, sizeof *s);
	s->kind = kind;
	s->fd = fd;
	s->ctx = ctx;
	return s;
}

static int watch(struct loop *l, struct loop_src *s, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = s};
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0)
		return -errno;
	return 0;
}

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn cb, void *ctx)
{
	if (fd < 0)
		return tb_err_set(&l->err, -EBADF, "cannot watch fd %d: bad fd", fd);
	if (hmap_get(&l->fds, (uint64_t)fd, NULL))
		return tb_err_set(&l->err, -EEXIST, "cannot watch fd %d: already watched", fd);
	struct loop_src *s = src_new(SRC_FD, fd, ctx);
	s->fd_cb = cb;
	int r = watch(l, s, events);
	if (r < 0) {
		tb_free(s);
		return tb_err_errno(&l->err, r, "cannot watch fd %d", fd);
	}
	hmap_put_ptr(&l->fds, (uint64_t)fd, s);
	return 0;
}

int loop_mod_fd(struct loop *l, int fd, uint32_t events)
{
	struct loop_src *s = fd >= 0 ? hmap_get_ptr(&l->fds, (uint64_t)fd) : NULL;
	if (!s)
		return tb_err_set(&l->err, -ENOENT, "cannot modify fd %d: not watched", fd);
	struct epoll_event ev = {.events = events, .data.ptr = s};
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
		return tb_err_errno(&l->err, -errno, "cannot modify fd %d", fd);
	return 0;
}

int loop_del_fd(struct loop *l, int fd)
{
	uint64_t v;
	if (fd < 0 || !hmap_del(&l->fds, (uint64_t)fd, &v))
		return -ENOENT;
	bury(l, (struct loop_src *)(uintptr_t)v);
	return 0;
}

static struct timespec ms_to_ts(uint64_t ms)
{
	struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
	                      .tv_nsec = (long)(ms % 1000) * 1000000};
	return ts;
}

uint64_t loop_add_timer(struct loop *l, uint64_t delay_ms, uint64_t period_ms, loop_timer_fn cb,
                        void *ctx)
{
	if (delay_ms == 0 && period_ms == 0) {
		struct loop_src *s = src_new(SRC_TIMER, -1, ctx);
		s->timer_cb = cb;
		s->immediate = true;
		s->timer_id = l->next_timer_id++;
		hmap_put_ptr(&l->timers, s->timer_id, s);
		vec_push(&l->due, s);
		return s->timer_id;
	}
	int fd = timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0) {
		tb_err_errno(&l->err, -errno, "cannot create timer");
		return 0;
	}
	struct itimerspec its = {.it_value = ms_to_ts(delay_ms),
	                         .it_interval = ms_to_ts(period_ms)};
	if (delay_ms == 0)
		its.it_value.tv_nsec = 1; /* a zero it_value would disarm it */
	struct loop_src *s = src_new(SRC_TIMER, fd, ctx);
	s->timer_cb = cb;
	s->periodic = period_ms > 0;
	int r = timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : watch(l, s, EPOLLIN);
	if (r < 0) {
		tb_err_errno(&l->err, r, "cannot arm timer");
		close(fd);
		tb_free(s);
		return 0;
	}
	s->timer_id = l->next_timer_id++;
	hmap_put_ptr(&l->timers, s->timer_id, s);
	return s->timer_id;
}

bool loop_cancel_timer(struct loop *l, uint64_t timer_id)
{
	uint64_t v;
	if (!hmap_del(&l->timers, timer_id, &v))
		return false;
	bury(l, (struct loop_src *)(uintptr_t)v);
	return true;
}

int loop_add_signal(struct loop *l, int signo, loop_signal_fn cb, void *ctx)
{
	sigset_t one, old;
	if (signo <= 0 || signo >= NSIG)
		return tb_err_set(&l->err, -EINVAL, "cannot handle signal %d: out of range", signo);
	sigemptyset(&one);
	sigaddset(&one, signo);
	int r = pthread_sigmask(SIG_BLOCK, &one, &old);
	if (r != 0)
		return tb_err_errno(&l->err, -r, "cannot block signal %d", signo);
	if (!sigismember(&old, signo) && !sigismember(&l->sigmask, signo))
		sigaddset(&l->unblock, signo);
	sigaddset(&l->sigmask, signo);

	int fd =
	    signalfd(l->sig_src ? l->sig_src->fd : -1, &l->sigmask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return tb_err_errno(&l->err, -errno, "cannot create signalfd for signal %d", signo);
	if (!l->sig_src) {
		struct loop_src *s = src_new(SRC_SIGNAL, fd, NULL);
		r = watch(l, s, EPOLLIN);
		if (r < 0) {
			close(fd);
			tb_free(s);
			return tb_err_errno(&l->err, r, "cannot watch signalfd");
		}
		l->sig_src = s;
	}
	l->sigs[signo].cb = cb;
	l->sigs[signo].ctx = ctx;
	return 0;
}

void loop_post(struct loop *l, loop_task_fn cb, void *ctx)
{
	vec_push(&l->posted, ((struct loop_task){cb, ctx}));
}

void loop_quit(struct loop *l, int code)
{
	l->quit = true;
	l->quit_code = code;
}

static int run_timer(struct loop *l, struct loop_src *s)
{
	uint64_t expirations;
	if (read(s->fd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
		return 0; /* spurious (re-armed or raced); nothing expired */
	loop_timer_fn cb = s->timer_cb;
	void *ctx = s->ctx;
	uint64_t id = s->timer_id;
	if (!s->periodic)
		loop_cancel_timer(l, id); /* gone before its callback runs */
	cb(l, id, ctx);
	return 1;
}

static int run_signals(struct loop *l, struct loop_src *s)
{
	struct signalfd_siginfo si;
	int ran = 0;
	while (!s->dead && read(s->fd, &si, sizeof si) == (ssize_t)sizeof si) {
		int signo = (int)si.ssi_signo;
		if (signo > 0 && signo < NSIG && l->sigs[signo].cb) {
			l->sig_code = si.ssi_code;
			l->sigs[signo].cb(l, signo, l->sigs[signo].ctx);
			l->sig_code = 0;
			ran++;
		}
	}
	return ran;
}

int loop_signal_code(const struct loop *l)
{
	return l->sig_code;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
	struct epoll_event evs[MAX_EVENTS];
	int ran = 0;

	/* Tasks posted while these run wait for the next iteration. */
	struct loop_task_vec tmp = l->running;
	l->running = l->posted;
	l->posted = tmp;
	for (size_t i = 0; i < l->running.len; i++) {
		l->running.data[i].cb(l, l->running.data[i].ctx);
		ran++;
	}
	vec_clear(&l->running);

	/* Immediate timers; ones added meanwhile wait for the next iteration. */
	struct loop_src_vec due = l->due_running;
	l->due_running = l->due;
	l->due = due;
	for (size_t i = 0; i < l->due_running.len; i++) {
		struct loop_src *s = l->due_running.data[i];
		if (!s->dead) {
			hmap_del(&l->timers, s->timer_id, NULL);
			s->dead = true;
			s->timer_cb(l, s->timer_id, s->ctx);
			ran++;
		}
		tb_free(s);
	}
	vec_clear(&l->due_running);

	/* Work done (as a due timerfd would have ended the wait) or queued:
	 * only collect what is ready. */
	if (ran || l->posted.len || l->due.len || l->quit)
		timeout_ms = 0;
	int n = epoll_wait(l->epfd, evs, MAX_EVENTS, timeout_ms);
	if (n < 0) {
		if (errno == EINTR)
			return ran;
		return tb_err_errno(&l->err, -errno, "epoll_wait failed");
	}
	for (int i = 0; i < n; i++) {
		struct loop_src *s = evs[i].data.ptr;
		if (s->dead)
			continue;
		switch (s->kind) {
		case SRC_FD:
			s->fd_cb(l, s->fd, evs[i].events, s->ctx);
			ran++;
			break;
		case SRC_TIMER:
			ran += run_timer(l, s);
			break;
		case SRC_SIGNAL:
			ran += run_signals(l, s);
			break;
		}
	}
	free_graveyard(l);
	return ran;
}

int loop_run(struct loop *l)
{
	while (!l->quit) {
		int r = loop_run_once(l, -1);
		if (r < 0)
			return r;
	}
	l->quit = false;
	return l->quit_code;
}
