/*
 * The linux.systemd_journald filters, evaluated as journalctl evaluates its
 * matches: a match is a whole DATA payload ("PRIORITY=3"), matches on one
 * field are alternatives, matches on different fields must all hold, and a
 * field with several values in one entry matches when any value does.
 */
#include "journald.h"

void probes_journal_match_begin(const struct journal_filter *flt, struct journal_match *m)
{
	m->prio = flt->min_prio >= 7;
	m->ident = flt->n_idents == 0;
	m->unit = flt->n_units == 0;
}

static bool is_field(const uint8_t *d, size_t n, const char *name, size_t len)
{
	return n > len && d[len] == '=' && memcmp(d, name, len) == 0;
}

static bool one_of(const uint8_t *v, size_t n, char *const *list, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(list[i]) == n && memcmp(list[i], v, n) == 0)
			return true;
	return false;
}

void probes_journal_match_field(const struct journal_filter *flt, struct journal_match *m,
                                const uint8_t *d, size_t n)
{
	static const char prio[] = "PRIORITY", ident[] = "SYSLOG_IDENTIFIER",
	                  unit[] = "_SYSTEMD_UNIT";
	if (!m->prio && is_field(d, n, prio, sizeof prio - 1)) {
		/* Exactly "PRIORITY=<digit>": journalctl's matches are whole payloads. */
		m->prio = n == sizeof prio + 1 && d[n - 1] >= '0' &&
		          (uint32_t)(d[n - 1] - '0') <= flt->min_prio;
	} else if (!m->ident && is_field(d, n, ident, sizeof ident - 1)) {
		m->ident = one_of(d + sizeof ident, n - sizeof ident, flt->idents, flt->n_idents);
	} else if (!m->unit && is_field(d, n, unit, sizeof unit - 1)) {
		m->unit = one_of(d + sizeof unit, n - sizeof unit, flt->units, flt->n_units);
	}
}
