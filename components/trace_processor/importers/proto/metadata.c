/*
 * Tokenize-time packets that fill `metadata`, as Perfetto's trace processor
 * does. TracePacket.trace_config (33), the TraceConfig the service recorded
 * with:
 *
 *   trace_config_pbtxt   the config in text format (protos_binary_to_text);
 *                        the last config packet wins
 *   unique_session_name  TraceConfig.unique_session_name (22)
 *   trace_uuid           from trace_uuid_msb (27) / trace_uuid_lsb (28) when
 *                        nonzero, unless a TraceUuid packet gave it
 *   trace_attribute.KEY  each of trace_attributes (48), as the packet's
 *
 * and the indexed stat config_write_into_file_discard for each DISCARD
 * buffer of a write_into_file (8) config.
 *
 * TracePacket.trace_attributes (126): `trace_attribute.KEY` = long_value or
 * string_value, the last value of a key winning.
 *
 * TracePacket.system_info (45), traced_probes' linux.system_info and the
 * service's own, describes the packet's machine: its `machine` row (name,
 * uname, num_cpus, fingerprint, manufacturer, SDK, RAM) and, as metadata of
 * that machine: uname as system_name/version/release/machine,
 * android_build_fingerprint (and the incremental build and SDK version
 * parsed from it, `BRAND/PRODUCT/DEVICE:RELEASE/ID/INCREMENTAL:TYPE/TAGS`,
 * unless android_sdk_version is given), the android_* strings,
 * tracing_service_version, timezone_off_mins, system_ram_bytes and
 * system_ram_gb (rounded to the nearest 10^9 bytes).
 */
#include "proto_int.h"

#include <math.h>
#include <string.h>

#include "protos.h"
#include "pb_fields.h"

void tp_proto_trace_config(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	uint64_t msb = 0, lsb = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	int64_t buf = 0, v;
	bool into_file = pb_find_field(p, n, PB_F_TraceConfig_write_into_file, &f) == 1 &&
	                 f.wire == PB_WIRE_VARINT && f.val;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_TraceConfig_buffers && f.wire == PB_WIRE_LEN) {
			struct pb_field fp = {0};
			if (into_file &&
			    pb_find_field(f.data, f.len, PB_F_TraceConfig_BufferConfig_fill_policy,
			                  &fp) == 1 &&
			    fp.val == PB_E_TraceConfig_BufferConfig_FillPolicy_DISCARD) {
				if (!tp_istat_get(tp, TP_ISTAT_config_write_into_file_discard, buf,
				                  &v))
					v = 0;
				tp_istat_set(tp, TP_ISTAT_config_write_into_file_discard, buf,
				             v + 1);
			}
			buf++;
		} else if (f.id == PB_F_TraceConfig_trace_attributes && f.wire == PB_WIRE_LEN) {
			tp_proto_trace_attributes(im, f.data, f.len);
		} else if (f.id == PB_F_TraceConfig_unique_session_name && f.wire == PB_WIRE_LEN)
			tp_metadata_set_str(tp, "unique_session_name",
			                    tp_intern(tp, (const char *)f.data, f.len));
		else if (f.id == PB_F_TraceConfig_trace_uuid_msb && f.wire == PB_WIRE_VARINT)
			msb = f.val;
		else if (f.id == PB_F_TraceConfig_trace_uuid_lsb && f.wire == PB_WIRE_VARINT)
			lsb = f.val;
	}
	if (!im->uuid_from_packet && (msb || lsb)) {
		tp_metadata_set_uuid(tp, msb, lsb);
		im->uuid_from_packet = true;
	}
	vec_clear(&im->trace_config);
	vec_reserve(&im->trace_config, n);
	if (n)
		memcpy(im->trace_config.data, p, n);
	im->trace_config.len = n;
	size_t len;
	char *text = protos_binary_to_text(&perfetto__protos__trace_config__descriptor, p, n, &len);
	tp_metadata_set_str(tp, "trace_config_pbtxt", tp_intern(tp, text, len));
	tb_free(text);
}

/* The SDK level of an Android release string (CDD), or -1. */
static int64_t sdk_of_release(const char *v, size_t n)
{
	static const struct {
		const char *release;
		int sdk;
	} map[] = {{"12", 31},    {"11", 30},  {"10", 29},    {"9", 28},    {"8.1", 27},
	           {"8.0", 26},   {"7.1", 25}, {"7.0", 24},   {"6.0", 23},  {"5.1", 22},
	           {"5.1.1", 22}, {"5.0", 21}, {"5.0.1", 21}, {"5.0.2", 21}};
	if (n && (v[0] == 'S' || v[0] == 'T'))
		return 31;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strlen(map[i].release) == n && !memcmp(map[i].release, v, n))
			return map[i].sdk;
	return -1;
}

static const char *find_from(const char *s, const char *end, char c)
{
	const char *q = s < end ? memchr(s, c, (size_t)(end - s)) : NULL;
	return q;
}

/* android_incremental_build and, when sdk is NULL, the SDK level from the
 * fingerprint. */
static void fingerprint(struct tp *tp, const uint8_t *p, size_t n, int64_t *sdk)
{
	const char *s = (const char *)p, *end = s + n;
	const char *colon = find_from(s, end, ':');
	const char *rel = colon ? find_from(colon, end, '/') : NULL;
	const char *id = rel ? find_from(rel + 1, end, '/') : NULL;
	const char *inc = id ? find_from(id, end, ':') : NULL;
	if (!inc)
		return;
	tp_metadata_set_str(tp, "android_incremental_build",
	                    tp_intern(tp, id + 1, (size_t)(inc - (id + 1))));
	*sdk = sdk_of_release(colon + 1, (size_t)(rel - (colon + 1)));
}

/* N of "Perfetto vN.x..." / "Perfetto vN-...", or -1. */
static int service_major(const uint8_t *p, size_t n)
{
	static const char prefix[] = "Perfetto v";
	size_t i = sizeof prefix - 1;
	int v = 0;
	if (n <= i || memcmp(p, prefix, i) != 0)
		return -1;
	for (; i < n && p[i] >= '0' && p[i] <= '9' && v < 100000; i++)
		v = v * 10 + (p[i] - '0');
	return i < n && (p[i] == '.' || p[i] == '-') && i > sizeof prefix - 1 ? v : -1;
}

void tp_proto_system_info(struct proto_importer *im, const uint8_t *p, size_t n)
{
	static const char *const uts[] = {NULL, "system_name", "system_version", "system_release",
	                                  "system_machine"};
	static const char *const strs[] = {
	    [PB_F_SystemInfo_android_build_fingerprint] = "android_build_fingerprint",
	    [PB_F_SystemInfo_tracing_service_version] = "tracing_service_version",
	    [PB_F_SystemInfo_android_soc_model] = "android_soc_model",
	    [PB_F_SystemInfo_android_hardware_revision] = "android_hardware_revision",
	    [PB_F_SystemInfo_android_storage_model] = "android_storage_model",
	    [PB_F_SystemInfo_android_ram_model] = "android_ram_model",
	    [PB_F_SystemInfo_android_guest_soc_model] = "android_guest_soc_model",
	    [PB_F_SystemInfo_android_device_manufacturer] = "android_device_manufacturer",
	    [PB_F_SystemInfo_android_serial_console] = "android_serial_console",
	};
	struct tp *tp = im->tp;
	struct tp_machine_table *mt = &tp->t.machine;
	uint32_t m = tp->machine;
	int64_t fp_sdk = -1, sdk = -1;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire == PB_WIRE_LEN && f.id == PB_F_SystemInfo_utsname) {
			/* utsname: the metadata of the fields present, the
			 * machine's sysname, version, release, arch (all four,
			 * absent ones NULL). */
			uint32_t ids[5] = {0};
			struct pb_reader ur;
			struct pb_field uf = {0};
			pb_reader_init_field(&ur, &f);
			while (pb_next(&ur, &uf)) {
				if (uf.id < 1 || uf.id > 4 || uf.wire != PB_WIRE_LEN)
					continue;
				ids[uf.id] = tp_intern(tp, (const char *)uf.data, uf.len);
				tp_metadata_set_str(tp, uts[uf.id], ids[uf.id]);
			}
			mt->sysname[m] = ids[1];
			mt->version[m] = ids[2];
			mt->release[m] = ids[3];
			mt->arch[m] = ids[4];
		} else if (f.wire == PB_WIRE_LEN && f.id < sizeof strs / sizeof strs[0] &&
		           strs[f.id]) {
			uint32_t v = tp_intern(tp, (const char *)f.data, f.len);
			tp_metadata_set_str(tp, strs[f.id], v);
			if (f.id == PB_F_SystemInfo_android_build_fingerprint) {
				mt->android_build_fingerprint[m] = v;
				fingerprint(tp, f.data, f.len, &fp_sdk);
			} else if (f.id == PB_F_SystemInfo_tracing_service_version) {
				im->service_major = service_major(f.data, f.len);
			} else if (f.id == PB_F_SystemInfo_android_device_manufacturer) {
				mt->android_device_manufacturer[m] = v;
			}
		} else if (f.wire == PB_WIRE_LEN && f.id == PB_F_SystemInfo_machine_name) {
			mt->name[m] = tp_intern(tp, (const char *)f.data, f.len);
		} else if (f.wire == PB_WIRE_VARINT &&
		           f.id == PB_F_SystemInfo_android_sdk_version) {
			sdk = (int64_t)f.val;
		} else if (f.wire == PB_WIRE_VARINT && f.id == PB_F_SystemInfo_timezone_off_mins) {
			tp_metadata_set_int(tp, "timezone_off_mins", (int32_t)f.val);
		} else if (f.wire == PB_WIRE_VARINT && f.id == PB_F_SystemInfo_num_cpus) {
			mt->num_cpus[m] = (uint32_t)f.val;
			/* num_cpus: the sorter waits for each cpu's ftrace */
			im->num_cpus = f.val < TP_MAX_CPUS ? (uint32_t)f.val : TP_MAX_CPUS;
		} else if (f.wire == PB_WIRE_VARINT && f.id == PB_F_SystemInfo_system_ram_bytes) {
			int64_t gb = (int64_t)llround((double)(int64_t)f.val / 1e9);
			tp_metadata_set_int(tp, "system_ram_bytes", (int64_t)f.val);
			tp_metadata_set_int(tp, "system_ram_gb", gb);
			mt->system_ram_bytes[m] = (int64_t)f.val;
			mt->system_ram_gb[m] = gb;
		}
	}
	if (sdk >= 0 || fp_sdk >= 0) {
		tp_metadata_set_int(tp, "android_sdk_version", sdk >= 0 ? sdk : fp_sdk);
		mt->android_sdk_version[m] = sdk >= 0 ? sdk : fp_sdk;
	}
}

void tp_proto_trace_attributes(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_TraceAttributes_attribute || f.wire != PB_WIRE_LEN)
			continue;
		struct pb_reader ar;
		struct pb_field af = {0}, key = {0}, val = {0};
		pb_reader_init_field(&ar, &f);
		while (pb_next(&ar, &af)) {
			if (af.id == PB_F_TraceAttributes_Attribute_key && af.wire == PB_WIRE_LEN)
				key = af;
			else if ((af.id == PB_F_TraceAttributes_Attribute_long_value &&
			          af.wire == PB_WIRE_VARINT) ||
			         (af.id == PB_F_TraceAttributes_Attribute_string_value &&
			          af.wire == PB_WIRE_LEN))
				val = af;
		}
		if (!val.id)
			continue;
		proto_scratch_reset(im);
		tp_proto_scratch_add(im, "trace_attribute.", 16);
		if (key.len)
			tp_proto_scratch_add(im, key.data, key.len);
		tp_proto_scratch_add(im, "", 1);
		if (val.id == PB_F_TraceAttributes_Attribute_long_value)
			tp_metadata_set_int(tp, im->scratch.data, (int64_t)val.val);
		else
			tp_metadata_set_str(tp, im->scratch.data,
			                    tp_intern(tp, (const char *)val.data, val.len));
	}
}
