/*
 * journal_dump: prints what tracebox's journal reader
 * (components/probes/journald/) finds in journal files, for the tests to
 * set against `journalctl --file` on the same files. Built by build.sh into
 * out/tools/ (not an applet).
 *
 *   journal_dump [--prio N] [--ident ID]... [--unit UNIT]... FILE...
 *       every entry of each file, first to last, that passes the
 *       linux.systemd_journald filters (journal_match_*), one JSON object a
 *       line: {"__REALTIME_TIMESTAMP":"us","__MONOTONIC_TIMESTAMP":"us",
 *       "_BOOT_ID":"hex","__SEQNUM":"n","fields":{"NAME":["hex value",...]},
 *       "undecoded":n}  (values hex-encoded, as they are bytes)
 *   journal_dump --data NAME=VALUE FILE
 *       the same for the entries holding that DATA object, found through
 *       the data hash table and its entry arrays (journalctl's match)
 *   journal_dump --field NAME FILE
 *       each value of field NAME, hex, one a line (journalctl -F), found
 *       through the field hash table
 *
 * The reader's counters go to stderr as one line: entries=N bad_entries=N
 * bad_items=N undecoded=N truncated=N bad_chain=N. Exit 1 when a file
 * cannot be opened as a journal (the message on stderr), else 0: a file that
 * breaks part way is read as far as it goes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "journald/journald.h"

struct dump {
	struct journal_filter flt;
	struct journal_match m;
	VEC(char) line;     /* the "fields" object being built */
	VEC(uint8_t) names; /* NAME\0 of each field in line, to group values */
	unsigned undecoded;
	struct journal_file *f;
};

static void put(struct dump *d, const char *s, size_t n)
{
	vec_reserve(&d->line, n);
	memcpy(d->line.data + d->line.len, s, n);
	d->line.len += n;
}

static void put_hex(struct dump *d, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	vec_reserve(&d->line, 2 * n);
	for (size_t i = 0; i < n; i++) {
		d->line.data[d->line.len++] = hex[p[i] >> 4];
		d->line.data[d->line.len++] = hex[p[i] & 15];
	}
}

/* Fields arrive one value at a time; values of one name are grouped by
 * collecting "NAME\0hex\0" pairs and writing the object at the end. */
static int on_field(void *ctx, const uint8_t *p, size_t n, unsigned flags)
{
	struct dump *d = ctx;
	if (flags & JOURNAL_FIELD_UNDECODED) {
		d->undecoded++;
		return 0;
	}
	probes_journal_match_field(&d->flt, &d->m, p, n);
	const uint8_t *eq = memchr(p, '=', n);
	if (!eq)
		return 0;
	size_t k = (size_t)(eq - p);
	vec_reserve(&d->names, k + 1 + 2 * (n - k - 1) + 1);
	memcpy(d->names.data + d->names.len, p, k);
	d->names.len += k;
	d->names.data[d->names.len++] = 0;
	static const char hex[] = "0123456789abcdef";
	for (size_t i = k + 1; i < n; i++) {
		d->names.data[d->names.len++] = (uint8_t)hex[p[i] >> 4];
		d->names.data[d->names.len++] = (uint8_t)hex[p[i] & 15];
	}
	d->names.data[d->names.len++] = 0;
	return 0;
}

static void print_entry(struct dump *d, const struct journal_entry *e)
{
	char buf[160];
	d->line.len = 0;
	int len = snprintf(buf, sizeof buf,
	                   "{\"__REALTIME_TIMESTAMP\":\"%" PRIu64
	                   "\",\"__MONOTONIC_TIMESTAMP\":\"%" PRIu64 "\",\"__SEQNUM\":\"%" PRIu64
	                   "\",\"_BOOT_ID\":\"",
	                   e->realtime_us, e->monotonic_us, e->seqnum);
	put(d, buf, (size_t)len);
	put_hex(d, e->boot_id, 16);
	put(d, "\",\"fields\":{", 12);
	/* Each distinct name once, with all its values in order. */
	bool first_name = true;
	for (size_t i = 0; i < d->names.len;) {
		const char *name = (const char *)d->names.data + i;
		size_t nl = strlen(name);
		const char *val = name + nl + 1;
		size_t next = i + nl + 1 + strlen(val) + 1;
		bool seen = false;
		for (size_t j = 0; j < i && !seen;) {
			const char *n2 = (const char *)d->names.data + j;
			const char *v2 = n2 + strlen(n2) + 1;
			seen = strcmp(n2, name) == 0;
			j += strlen(n2) + 1 + strlen(v2) + 1;
		}
		if (!seen) {
			if (!first_name)
				put(d, ",", 1);
			first_name = false;
			put(d, "\"", 1);
			put(d, name, nl);
			put(d, "\":[", 3);
			bool first_val = true;
			for (size_t j = i; j < d->names.len;) {
				const char *n2 = (const char *)d->names.data + j;
				const char *v2 = n2 + strlen(n2) + 1;
				if (strcmp(n2, name) == 0) {
					if (!first_val)
						put(d, ",", 1);
					first_val = false;
					put(d, "\"", 1);
					put(d, v2, strlen(v2));
					put(d, "\"", 1);
				}
				j += strlen(n2) + 1 + strlen(v2) + 1;
			}
			put(d, "]", 1);
		}
		i = next;
	}
	len = snprintf(buf, sizeof buf, "},\"undecoded\":%u}\n", d->undecoded);
	put(d, buf, (size_t)len);
	fwrite(d->line.data, 1, d->line.len, stdout);
}

static void dump_entry(struct dump *d, uint64_t off)
{
	struct journal_entry e;
	d->names.len = 0;
	d->undecoded = 0;
	probes_journal_match_begin(&d->flt, &d->m);
	if (probes_journal_file_read_entry(d->f, off, &e, on_field, d) < 0)
		return;
	if (journal_match_ok(&d->m))
		print_entry(d, &e);
}

static int data_entry(void *ctx, uint64_t off)
{
	dump_entry(ctx, off);
	return 0;
}

static int field_value(void *ctx, const uint8_t *p, size_t n, unsigned flags)
{
	const uint8_t *eq = p ? memchr(p, '=', n) : NULL;
	if (!eq)
		return 0;
	for (const uint8_t *q = eq + 1; q < p + n; q++)
		printf("%02x", *q);
	printf("\n");
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: journal_dump [--prio N] [--ident ID]... [--unit UNIT]... FILE...\n"
	                "       journal_dump --data NAME=VALUE FILE\n"
	                "       journal_dump --field NAME FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct dump d = {0};
	VEC(char *) idents = {0}, units = {0};
	const char *data = NULL, *field = NULL;
	int rc = 0, i;

	d.flt.min_prio = 7;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--prio") == 0)
			d.flt.min_prio = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--ident") == 0)
			vec_push(&idents, argv[++i]);
		else if (strcmp(argv[i], "--unit") == 0)
			vec_push(&units, argv[++i]);
		else if (strcmp(argv[i], "--data") == 0)
			data = argv[++i];
		else if (strcmp(argv[i], "--field") == 0)
			field = argv[++i];
		else
			usage();
	}
	if (i >= argc)
		usage();
	d.flt.idents = idents.data;
	d.flt.n_idents = idents.len;
	d.flt.units = units.data;
	d.flt.n_units = units.len;

	struct journal_stats total = {0};
	for (; i < argc; i++) {
		struct journal_file f;
		uint64_t off;
		int r;
		memset(&f, 0, sizeof f);
		d.f = &f;
		if (probes_journal_file_open(&f, argv[i]) < 0) {
			fprintf(stderr, "journal_dump: %s\n", f.err.msg);
			probes_journal_file_close(&f);
			rc = 1;
			continue;
		}
		if (data) {
			r = probes_journal_file_find_data(&f, data, strlen(data), &off);
			if (r == 1)
				r = probes_journal_file_data_entries(&f, off, data_entry, &d);
			if (r < 0)
				fprintf(stderr,
				        "journal_dump: '%s': broken hash table or entry array\n",
				        argv[i]);
		} else if (field) {
			if (probes_journal_file_field_values(&f, field, strlen(field), field_value,
			                                     NULL) < 0)
				fprintf(stderr, "journal_dump: '%s': broken field list\n", argv[i]);
		} else {
			while ((r = probes_journal_file_next(&f, &off)) == 1)
				dump_entry(&d, off);
			if (r < 0)
				fprintf(stderr, "journal_dump: %s\n", f.err.msg);
		}
		total.entries += f.consumed;
		total.bad_entries += f.stats.bad_entries;
		total.bad_items += f.stats.bad_items;
		total.undecoded += f.stats.undecoded;
		total.truncated += f.stats.truncated;
		total.bad_chain += f.stats.bad_chain;
		probes_journal_file_close(&f);
	}
	fprintf(stderr,
	        "entries=%" PRIu64 " bad_entries=%" PRIu64 " bad_items=%" PRIu64
	        " undecoded=%" PRIu64 " truncated=%" PRIu64 " bad_chain=%" PRIu64 "\n",
	        total.entries, total.bad_entries, total.bad_items, total.undecoded, total.truncated,
	        total.bad_chain);
	vec_release(&d.line);
	vec_release(&d.names);
	vec_release(&idents);
	vec_release(&units);
	return rc;
}
