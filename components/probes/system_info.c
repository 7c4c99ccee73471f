/*
 * linux.system_info: the CpuInfo packet (TracePacket.cpu_info = 67) Perfetto's
 * SystemInfoDataSource writes once at start. SystemInfo (utsname, page size,
 * RAM, ...) is not this data source's: the service writes it at the start of
 * every trace (components/traced/service_packets.c), as traced does.
 *
 * /proc/cpuinfo is groups of "key\t: value" lines, one group per CPU, ended
 * by an empty line. "processor" names the CPU; "Processor" (arm's global
 * model string, upper-case P) is the processor name of every CPU, else
 * "unknown" (Perfetto ignores x86's "model name"). The arm "CPU implementer/
 * architecture/variant/part/revision" keys form arm_identifier when all five
 * are present. Per CPU, from SYS/devices/system/cpu/cpuN/: cpu_capacity, and
 * frequencies from cpufreq/scaling_available_frequencies or else the first
 * column of cpufreq/stats/time_in_state.
 *
 *   CpuInfo { cpus=1 { processor=1, frequencies=2 (kHz), capacity=3,
 *                      arm_identifier=4 {implementer=1, architecture=2,
 *                      variant=3, part=4, revision=5} } }
 */
#include "probes_int.h"
#include "pb_fields.h"

#include <stdio.h>
#include <stdlib.h>

#define CPUINFO_MAX ((size_t)1 << 20)

static char *read_text(const char *dir, const char *rel)
{
	char path[512], *buf = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	if (tb_read_file(path, &buf, &len, CPUINFO_MAX, NULL) != 0)
		return NULL;
	return buf;
}

static void write_frequencies(struct pb_writer *w, const char *sys_root, unsigned cpu)
{
	char rel[128];
	char *text;
	bool time_in_state = false;

	snprintf(rel, sizeof rel, "devices/system/cpu/cpu%u/cpufreq/scaling_available_frequencies",
	         cpu);
	if (!(text = read_text(sys_root, rel))) {
		snprintf(rel, sizeof rel, "devices/system/cpu/cpu%u/cpufreq/stats/time_in_state",
		         cpu);
		if (!(text = read_text(sys_root, rel)))
			return;
		time_in_state = true;
	}
	for (const char *p = text; *p;) {
		char *end;
		unsigned long f = strtoul(p, &end, 10);
		if (end == p) {
			p++;
			continue;
		}
		if (f && f <= UINT32_MAX)
			pb_put_uint32(w, PB_F_CpuInfo_Cpu_frequencies, (uint32_t)f);
		p = end;
		if (time_in_state) /* "freq time\n": skip the time column */
			p += strcspn(p, "\n");
	}
	tb_free(text);
}

struct arm_id {
	long v[5]; /* implementer, architecture, variant, part, revision; -1 unset */
};

static void write_cpu(struct pb_writer *w, const char *sys_root, unsigned cpu,
                      const char *processor, const struct arm_id *arm)
{
	char rel[128], *cap;
	unsigned h = pb_begin_nested(w, PB_F_CpuInfo_cpus);
	int have = 0;

	pb_put_string(w, PB_F_CpuInfo_Cpu_processor, processor);
	snprintf(rel, sizeof rel, "devices/system/cpu/cpu%u/cpu_capacity", cpu);
	if ((cap = read_text(sys_root, rel))) {
		char *end;
		unsigned long c = strtoul(cap, &end, 10);
		if (end != cap && c <= UINT32_MAX)
			pb_put_uint32(w, PB_F_CpuInfo_Cpu_capacity, (uint32_t)c);
		tb_free(cap);
	}
	write_frequencies(w, sys_root, cpu);
	for (int i = 0; i < 5; i++)
		have += arm->v[i] >= 0;
	if (have == 5) {
		unsigned a = pb_begin_nested(w, PB_F_CpuInfo_Cpu_arm_identifier);
		_Static_assert(PB_F_CpuInfo_ArmCpuIdentifier_revision ==
		                   PB_F_CpuInfo_ArmCpuIdentifier_implementer + 4,
		               "ArmCpuIdentifier's fields are arm_id's, in order");
		for (int i = 0; i < 5; i++)
			pb_put_uint32(w, PB_F_CpuInfo_ArmCpuIdentifier_implementer + (uint32_t)i,
			              (uint32_t)arm->v[i]);
		pb_end_nested(w, a);
	}
	pb_end_nested(w, h);
}

void probes_system_info_write_cpu_info(struct pb_writer *w, const char *proc_root,
                                       const char *sys_root)
{
	static const struct {
		const char *key;
		int base;
	} arm_keys[5] = {{"CPU implementer", 16},
	                 {"CPU architecture", 10},
	                 {"CPU variant", 16},
	                 {"CPU part", 16},
	                 {"CPU revision", 10}};
	char *text = read_text(proc_root ? proc_root : "/proc", "cpuinfo");
	char processor[256] = "unknown";
	struct arm_id arm;
	long cpu = -1;
	unsigned h = pb_begin_nested(w, PB_F_TracePacket_cpu_info);

	if (!sys_root)
		sys_root = "/sys";
	memset(&arm, 0xff, sizeof arm);
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n"), kl;
		const char *colon = memchr(p, ':', n), *v;
		if (n == 0) {
			if (cpu >= 0)
				write_cpu(w, sys_root, (unsigned)cpu, processor, &arm);
			cpu = -1;
			memset(&arm, 0xff, sizeof arm);
		} else if (colon) {
			kl = (size_t)(colon - p);
			while (kl && (p[kl - 1] == ' ' || p[kl - 1] == '\t'))
				kl--;
			v = colon + 1;
			while (*v == ' ')
				v++;
			if (kl == 9 && memcmp(p, "Processor", 9) == 0) {
				size_t vl = (size_t)(p + n - v);
				if (vl >= sizeof processor)
					vl = sizeof processor - 1;
				memcpy(processor, v, vl);
				processor[vl] = '\0';
			} else if (kl == 9 && memcmp(p, "processor", 9) == 0) {
				cpu = strtol(v, NULL, 10);
			} else {
				for (int i = 0; i < 5; i++)
					if (strlen(arm_keys[i].key) == kl &&
					    memcmp(p, arm_keys[i].key, kl) == 0)
						arm.v[i] = strtol(v, NULL, arm_keys[i].base);
			}
		}
		p += n;
		if (*p == '\n')
			p++;
	}
	pb_end_nested(w, h);
	tb_free(text);
}
