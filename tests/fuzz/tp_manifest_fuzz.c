/*
 * Fuzz target for the trace manifest (components/trace_processor/importers/
 * manifest/): the input is
 *  - parsed as a JSON tree and as a manifest (tp_manifest_parse), whose
 *    fields are then walked;
 *  - loaded by a trace processor as the manifest of a tar archive built
 *    here around it, with a JSON member "a.json" and a protobuf member
 *    "b.pb" (host and embedded machine 7 packets, clock snapshots and a
 *    slice), so the plan (machines, clock edges, shifts) and the proto
 *    importer's hooks run on whatever the manifest says.
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/tp_manifest/ in every CI build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../components/trace_processor/tp_int.h"
#include "importers/manifest/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* {"traceEvents":[one X event]} */
static const char json_member[] =
    "{\"traceEvents\":[{\"pid\":10,\"tid\":10,\"ts\":2000,\"dur\":500,\"ph\":\"X\","
    "\"name\":\"a_slice\"}]}";

/* A protobuf trace (traceconv binary of):
 *   packet { clock_snapshot { clocks { clock_id: 6 timestamp: 1000 }
 *                             clocks { clock_id: 1 timestamp: 5000 } } }
 *   packet { machine_id: 7 clock_snapshot { clocks { clock_id: 6 timestamp: 9000 } } }
 *   packet { trusted_packet_sequence_id: 1 timestamp: 2000
 *            track_event { type: TYPE_INSTANT name: "b" track_uuid: 0 } }
 *   packet { machine_id: 7 trusted_packet_sequence_id: 2 timestamp: 9500
 *            track_event { type: TYPE_INSTANT name: "vm" track_uuid: 0 } } */
static const uint8_t proto_member[] = {
    0x0a, 0x99, 0x80, 0x80, 0x00, 0x32, 0x94, 0x80, 0x80, 0x00, 0x0a, 0x85, 0x80, 0x80, 0x00,
    0x08, 0x06, 0x10, 0xe8, 0x07, 0x0a, 0x85, 0x80, 0x80, 0x00, 0x08, 0x01, 0x10, 0x88, 0x27,
    0x0a, 0x92, 0x80, 0x80, 0x00, 0x90, 0x06, 0x07, 0x32, 0x8a, 0x80, 0x80, 0x00, 0x0a, 0x85,
    0x80, 0x80, 0x00, 0x08, 0x06, 0x10, 0xa8, 0x46, 0x0a, 0x92, 0x80, 0x80, 0x00, 0x50, 0x01,
    0x40, 0xd0, 0x0f, 0x5a, 0x88, 0x80, 0x80, 0x00, 0x48, 0x03, 0xba, 0x01, 0x01, 0x62, 0x58,
    0x00, 0x0a, 0x96, 0x80, 0x80, 0x00, 0x90, 0x06, 0x07, 0x50, 0x02, 0x40, 0x9c, 0x4a, 0x5a,
    0x89, 0x80, 0x80, 0x00, 0x48, 0x03, 0xba, 0x01, 0x02, 0x76, 0x6d, 0x58, 0x00};

static size_t tar_member(uint8_t *out, const char *name, const uint8_t *p, size_t n)
{
	uint8_t *h = out;
	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	snprintf((char *)h + 124, 12, "%011o", (unsigned)n);
	memcpy(h + 136, "00000000000", 11);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	memcpy(out + 512, p, n);
	size_t padded = (n + 511) / 512 * 512;
	memset(out + 512 + n, 0, padded - n);
	return 512 + padded;
}

static void walk(const struct tp_manifest *m)
{
	size_t total = m->trace_clock + (m->tt_file ? strlen(m->tt_file) : 0);
	for (size_t i = 0; i < m->nfiles; i++) {
		const struct tp_mf_file *f = &m->files[i];
		total += strlen(f->path) + (f->machine ? strlen(f->machine) : 0);
		for (size_t j = 0; j < f->nmachines; j++)
			total += strlen(f->machines[j].name);
		total += f->sync_file ? strlen(f->sync_file) : 0;
	}
	for (size_t i = 0; i < m->nattrs; i++)
		total += strlen(m->attrs[i].key) + (m->attrs[i].is_int ? 0 : strlen(m->attrs[i].s));
	if (total == SIZE_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	char err[512];
	struct tp_manifest *m = NULL;
	if (tp_manifest_parse(data, size, &m, err, sizeof err) == 0) {
		walk(m);
		tp_manifest_free(m);
	} else if (!err[0]) {
		abort(); /* every failure says why */
	}

	size_t cap = 3 * 512 + size + sizeof json_member + sizeof proto_member + 3 * 512 + 1024;
	uint8_t *tar = calloc(1, cap);
	size_t len = 0;
	len += tar_member(tar + len, "perfetto_manifest.json", data, size);
	len +=
	    tar_member(tar + len, "a.json", (const uint8_t *)json_member, sizeof json_member - 1);
	len += tar_member(tar + len, "b.pb", proto_member, sizeof proto_member);
	len += 1024; /* two zero blocks */
	struct tp *tp = tp_new(NULL);
	if (tp_parse(tp, tar, len) == 0)
		tp_end_of_file(tp);
	tp_free(tp);
	free(tar);
	return 0;
}
