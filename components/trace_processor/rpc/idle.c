/*
 * The idle clock of `server http|unix --idle-timeout`: a server stops once
 * no request came for the timeout. With --idle-start auto the clock only
 * runs once the process that started the server is gone (a foreground
 * server is its owner's to stop), unless it had none to begin with (parent
 * pid 1: daemonized or orphaned already), as Perfetto's.
 */
#include <unistd.h>

#include "rpc.h"

static int64_t now_ms(void)
{
	return tb_mono_ns() / 1000000;
}

void tp_idle_init(struct tp_idle_clock *c, const struct tp_idle *cfg)
{
	c->cfg = *cfg;
	c->parent = (int)getppid();
	c->orphaned_mode =
	    cfg->start == TP_IDLE_ORPHANED || (cfg->start == TP_IDLE_AUTO && c->parent > 1);
	c->last_ms = now_ms();
}

void tp_idle_activity(struct tp_idle_clock *c)
{
	c->last_ms = now_ms();
}

bool tp_idle_expired(struct tp_idle_clock *c)
{
	if (c->cfg.timeout_ms == 0)
		return false;
	/* Orphaned: the parent died and we were reparented. Until then the
	 * clock restarts at every look. */
	if (c->orphaned_mode && c->parent > 1 && (int)getppid() == c->parent) {
		c->last_ms = now_ms();
		return false;
	}
	return now_ms() - c->last_ms >= (int64_t)c->cfg.timeout_ms;
}

uint32_t tp_idle_tick_ms(const struct tp_idle_clock *c)
{
	uint32_t t = c->cfg.timeout_ms;
	if (t == 0)
		return 0;
	return t < 50 ? 50 : t > 5000 ? 5000 : t;
}
