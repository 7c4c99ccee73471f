/*
 * Tests for components/perfetto_cmd: the light config (decoded back with
 * protobuf-c and checked field by field), the -t/-b/-s value parsing,
 * config decoding (binary, --txt, the --txt hint, the random UUID) and the
 * output file (Trace.packet framing, temporary file, --no-clobber).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc.h"
#include "perfetto_cmd_int.h"
#include "test.h"
#include "perf_int.h"
#include "pb.h"
#include "pb_fields.h"

static Perfetto__Protos__TraceConfig *light(const struct perfetto_cmd_light_opts *o)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	struct tb_err err = {0};
	Perfetto__Protos__TraceConfig *cfg;
	if (perfetto_cmd_light_config(o, &buf, &len, &err) != 0) {
		fprintf(stderr, "light config: %s\n", err.msg);
		return NULL;
	}
	cfg = perfetto__protos__trace_config__unpack(protos_allocator(), len, buf);
	tb_free(buf);
	return cfg;
}

static const Perfetto__Protos__DataSourceConfig *ds(const Perfetto__Protos__TraceConfig *c,
                                                    size_t i)
{
	return i < c->n_data_sources ? c->data_sources[i]->config : NULL;
}

TEST(perfetto_cmd_light_config_defaults)
{
	struct perfetto_cmd_light_opts o = {0};
	Perfetto__Protos__TraceConfig *c = light(&o);
	const Perfetto__Protos__DataSourceConfig *d;
	bool ok;
	CHECK(c);
	ok = c->has_duration_ms && c->duration_ms == 10000 && c->n_buffers == 1 &&
	     c->buffers[0]->has_size_kb && c->buffers[0]->size_kb == 32 * 1024 &&
	     c->has_flush_period_ms && c->flush_period_ms == 30000 && c->has_max_file_size_bytes &&
	     c->max_file_size_bytes == 0 && !c->has_write_into_file && c->n_data_sources == 3;
	if (ok) {
		d = ds(c, 0);
		ok = strcmp(d->name, "linux.ftrace") == 0 && d->ftrace_config &&
		     d->ftrace_config->n_ftrace_events == 0 &&
		     d->ftrace_config->n_atrace_categories == 0 &&
		     d->ftrace_config->n_atrace_apps == 0 &&
		     d->ftrace_config->has_symbolize_ksyms && d->ftrace_config->symbolize_ksyms &&
		     !d->has_target_buffer;
	}
	if (ok) {
		d = ds(c, 1);
		ok = strcmp(d->name, "linux.process_stats") == 0 && d->has_target_buffer &&
		     d->target_buffer == 0 && !d->ftrace_config;
	}
	if (ok) {
		d = ds(c, 2);
		ok = strcmp(d->name, "linux.system_info") == 0 && d->has_target_buffer &&
		     d->target_buffer == 0;
	}
	perfetto_cmd_config_free(c);
	CHECK(ok);
}

TEST(perfetto_cmd_light_config_events)
{
	const char *apps[] = {"com.example"};
	const char *events[] = {"sched/sched_switch", "gfx", "power/cpu_idle", "disk"};
	struct perfetto_cmd_light_opts o = {
	    .time = "1500ms",
	    .buffer = "64k",
	    .max_file_size = "1m",
	    .apps = apps,
	    .n_apps = 1,
	    .events = events,
	    .n_events = 4,
	};
	Perfetto__Protos__TraceConfig *c = light(&o);
	const Perfetto__Protos__DataSourceConfig *d;
	const Perfetto__Protos__FtraceConfig *f;
	int bad = 0;
	CHECK(c);
	bad |= !(c->duration_ms == 1500 && c->buffers[0]->size_kb == 64) << 0;
	bad |=
	    !(c->has_write_into_file && c->write_into_file && c->max_file_size_bytes == 1024 * 1024)
	    << 1;
	bad |= !(c->n_data_sources == 5) << 2;
	if (!bad) {
		bad |= !(strcmp(ds(c, 0)->name, "android.surfaceflinger.frametimeline") == 0) << 3;
		d = ds(c, 1);
		f = d->ftrace_config;
		bad |=
		    !(strcmp(d->name, "linux.ftrace") == 0 && f && f->n_ftrace_events == 2 &&
		      strcmp(f->ftrace_events[0], "sched/sched_switch") == 0 &&
		      strcmp(f->ftrace_events[1], "power/cpu_idle") == 0 &&
		      f->n_atrace_categories == 2 && strcmp(f->atrace_categories[0], "gfx") == 0 &&
		      strcmp(f->atrace_categories[1], "disk") == 0 && f->n_atrace_apps == 1 &&
		      strcmp(f->atrace_apps[0], "com.example") == 0 && f->symbolize_ksyms)
		    << 4;
		bad |= !(strcmp(ds(c, 2)->name, "linux.process_stats") == 0) << 5;
		bad |= !(strcmp(ds(c, 3)->name, "linux.system_info") == 0) << 6;
		d = ds(c, 4);
		bad |= !(strcmp(d->name, "linux.sys_stats") == 0 && d->sys_stats_config &&
		         d->sys_stats_config->diskstat_period_ms == 1000)
		       << 7;
	}
	perfetto_cmd_config_free(c);
	CHECK_EQ(bad, 0);
}

TEST(perfetto_cmd_light_config_bad_flags)
{
	struct perfetto_cmd_light_opts o = {.time = "10x"};
	struct tb_err err = {0};
	uint8_t *buf = NULL;
	size_t len;
	CHECK_EQ(perfetto_cmd_light_config(&o, &buf, &len, &err), -EINVAL);
	CHECK_STR_EQ(err.msg, "--time argument is invalid");
	CHECK(buf == NULL);
	o.time = NULL;
	o.buffer = "32";
	tb_err_clear(&err);
	CHECK_EQ(perfetto_cmd_light_config(&o, &buf, &len, &err), -EINVAL);
	CHECK_STR_EQ(err.msg, "--buffer argument is invalid");
	o.buffer = "8gb"; /* 8 GiB = 2^23 KiB fits size_kb */
	o.max_file_size = "1tb";
	tb_err_clear(&err);
	CHECK_EQ(perfetto_cmd_light_config(&o, &buf, &len, &err), -EINVAL);
	CHECK_STR_EQ(err.msg, "--size argument is invalid");
	o.max_file_size = NULL;
	o.time = "2000000h"; /* over uint32 milliseconds */
	tb_err_clear(&err);
	CHECK_EQ(perfetto_cmd_light_config(&o, &buf, &len, &err), -EINVAL);
	CHECK_STR_EQ(err.msg, "--time argument is invalid");
}

TEST(perfetto_cmd_parse_time_and_size)
{
	uint64_t v;
	CHECK_EQ(perfetto_cmd_parse_time_ms("0", &v), 0);
	CHECK_UEQ(v, 0);
	CHECK_EQ(perfetto_cmd_parse_time_ms("", &v), 0);
	CHECK_UEQ(v, 0);
	CHECK_EQ(perfetto_cmd_parse_time_ms("500ms", &v), 0);
	CHECK_UEQ(v, 500);
	CHECK_EQ(perfetto_cmd_parse_time_ms("10s", &v), 0);
	CHECK_UEQ(v, 10000);
	CHECK_EQ(perfetto_cmd_parse_time_ms("2m", &v), 0);
	CHECK_UEQ(v, 120000);
	CHECK_EQ(perfetto_cmd_parse_time_ms("1h", &v), 0);
	CHECK_UEQ(v, 3600000);
	CHECK_EQ(perfetto_cmd_parse_time_ms("10", &v), -EINVAL);
	CHECK_EQ(perfetto_cmd_parse_time_ms("s", &v), -EINVAL);
	CHECK_EQ(perfetto_cmd_parse_time_ms("1d", &v), -EINVAL);
	CHECK_EQ(perfetto_cmd_parse_size_kb("32mb", &v), 0);
	CHECK_UEQ(v, 32768);
	CHECK_EQ(perfetto_cmd_parse_size_kb("64k", &v), 0);
	CHECK_UEQ(v, 64);
	CHECK_EQ(perfetto_cmd_parse_size_kb("1g", &v), 0);
	CHECK_UEQ(v, 1024 * 1024);
	CHECK_EQ(perfetto_cmd_parse_size_kb("2kb", &v), 0);
	CHECK_UEQ(v, 2);
	CHECK_EQ(perfetto_cmd_parse_size_kb("0", &v), 0);
	CHECK_UEQ(v, 0);
	CHECK_EQ(perfetto_cmd_parse_size_kb("1tb", &v), -EINVAL);
	CHECK_EQ(perfetto_cmd_parse_size_kb("-1m", &v), -EINVAL);
	CHECK_EQ(perfetto_cmd_parse_size_kb("99999999999999999999k", &v), -EINVAL);
}

TEST(perfetto_cmd_config_decode_modes)
{
	static const char text[] = "duration_ms: 1234\nbuffers { size_kb: 512 }\n";
	/* buffers { size_kb: 512 } duration_ms: 1234 */
	static const uint8_t bin[] = {0x0A, 0x03, 0x08, 0x80, 0x04, 0x18, 0xD2, 0x09};
	Perfetto__Protos__TraceConfig *c = NULL;
	struct tb_err err = {0};
	bool ok;

	CHECK_EQ(perfetto_cmd_config_decode("c", bin, sizeof bin, PERFETTO_CMD_BINARY, &c, &err),
	         0);
	ok = c->duration_ms == 1234 && c->n_buffers == 1 && c->buffers[0]->size_kb == 512;
	perfetto_cmd_config_free(c);
	CHECK(ok);

	CHECK_EQ(perfetto_cmd_config_decode("c", (const uint8_t *)text, strlen(text),
	                                    PERFETTO_CMD_TXT, &c, &err),
	         0);
	ok = c->duration_ms == 1234 && c->n_buffers == 1 && c->buffers[0]->size_kb == 512;
	CHECK(!c->has_trace_uuid_msb);
	perfetto_cmd_config_set_uuid(c);
	ok = ok && c->has_trace_uuid_msb && c->has_trace_uuid_lsb &&
	     (c->trace_uuid_msb != 0 || c->trace_uuid_lsb != 0);
	perfetto_cmd_config_free(c);
	CHECK(ok);

	CHECK_EQ(perfetto_cmd_config_decode("c", (const uint8_t *)text, strlen(text),
	                                    PERFETTO_CMD_BINARY, &c, &err),
	         -EINVAL);
	CHECK(c == NULL);
	CHECK(strstr(err.msg, "The trace config is invalid, bailing out.") != NULL);
	CHECK(strstr(err.msg, "Try adding --txt to the cmdline.") != NULL);

	tb_err_clear(&err);
	CHECK_EQ(perfetto_cmd_config_decode("c", (const uint8_t *)"\xff\xff", 2,
	                                    PERFETTO_CMD_BINARY, &c, &err),
	         -EINVAL);
	CHECK(strstr(err.msg, "--txt") == NULL);

	tb_err_clear(&err);
	CHECK_EQ(perfetto_cmd_config_decode("c", NULL, 0, PERFETTO_CMD_BINARY, &c, &err), -EINVAL);
	CHECK_STR_EQ(err.msg, "The TraceConfig is empty");

	tb_err_clear(&err);
	CHECK_EQ(perfetto_cmd_config_decode("c.pbtx", (const uint8_t *)"no_such_field: 1\n", 17,
	                                    PERFETTO_CMD_TXT, &c, &err),
	         -EINVAL);
	CHECK(strncmp(err.msg, "c.pbtx:1:", 9) == 0);
	CHECK_EQ(perfetto_cmd_config_decode("c.pbtx", (const uint8_t *)"no_such_field: 1\n", 17,
	                                    PERFETTO_CMD_TXT_LOSSY, &c, &err),
	         0);
	perfetto_cmd_config_free(c);
}

TEST(perfetto_cmd_pack_strips_output_path)
{
	Perfetto__Protos__TraceConfig cfg = PERFETTO__PROTOS__TRACE_CONFIG__INIT;
	Perfetto__Protos__TraceConfig *back;
	uint8_t *buf;
	size_t len;
	bool ok;
	cfg.has_write_into_file = cfg.write_into_file = true;
	cfg.output_path = "/tmp/x";
	cfg.has_duration_ms = true;
	cfg.duration_ms = 7;
	buf = perfetto_cmd_config_pack_for_service(&cfg, &len);
	back = perfetto__protos__trace_config__unpack(protos_allocator(), len, buf);
	tb_free(buf);
	CHECK(back);
	/* write_into_file goes to traced (with our fd); the path stays ours. */
	ok = back->write_into_file && back->output_path == NULL && back->duration_ms == 7;
	perfetto_cmd_config_free(back);
	CHECK(ok);
	CHECK(cfg.write_into_file && cfg.output_path != NULL);
}

/* Only linux.perf sources without a scope follow the workload. */
TEST(perfetto_cmd_config_points_unscoped_perf_at_the_workload)
{
	static const char text[] =
	    "data_sources { config { name: \"linux.perf\" perf_event_config {\n"
	    "  callstack_sampling { kernel_frames: false } } } }\n"
	    "data_sources { config { name: \"linux.perf\" perf_event_config {\n"
	    "  callstack_sampling { scope { target_cmdline: \"x\" } } } } }\n"
	    "data_sources { config { name: \"linux.perf\" perf_event_config { target_pid: 5 } } }\n"
	    "data_sources { config { name: \"linux.perf\" legacy_config: \"mine\" } }\n"
	    "data_sources { config { name: \"linux.perf\" } }\n"
	    "data_sources { config { name: \"linux.ftrace\" } }\n";
	Perfetto__Protos__TraceConfig *c = NULL;
	struct tb_err err = {0};
	CHECK_EQ(perfetto_cmd_config_decode("c", (const uint8_t *)text, strlen(text),
	                                    PERFETTO_CMD_TXT, &c, &err),
	         0);
	struct perfetto_cmd_perf_directives d = {.workload_pid = 4242};
	CHECK_EQ(perfetto_cmd_config_perf_directives(c, &d), 5);
	CHECK_STR_EQ(c->data_sources[0]->config->legacy_config, "workload_pid=4242");
	CHECK(c->data_sources[1]->config->legacy_config == NULL);
	CHECK(c->data_sources[2]->config->legacy_config == NULL);
	CHECK_STR_EQ(c->data_sources[3]->config->legacy_config, "mine workload_pid=4242");
	CHECK_STR_EQ(c->data_sources[4]->config->legacy_config, "workload_pid=4242");
	CHECK(c->data_sources[5]->config->legacy_config == NULL);
	/* --no-symbolize and --control reach every linux.perf source */
	d = (struct perfetto_cmd_perf_directives){.no_symbolize = true, .control = "/t/s"};
	CHECK_EQ(perfetto_cmd_config_perf_directives(c, &d), 5);
	CHECK_STR_EQ(c->data_sources[1]->config->legacy_config, "no_symbolize control=/t/s");
	CHECK_STR_EQ(c->data_sources[0]->config->legacy_config,
	             "workload_pid=4242 no_symbolize control=/t/s");
	CHECK(c->data_sources[5]->config->legacy_config == NULL);
	CHECK_EQ(perfetto_cmd_config_sample_hz(c), 10);
	perfetto_cmd_config_free(c);
}

/* The status line's counts, from a trace file laid out as the service
 * writes it: samples with and without a callstack, skipped ones (not in
 * scope: not counted), kernel losses, and a packet too large to hold. */
TEST(perfetto_cmd_trace_counts_of_a_file)
{
	struct perf_emitter e;
	struct pb_writer w, t;
	struct pb_reader r;
	struct pb_field f = {0};
	struct perf_frame fr = {.mapping_path = "/bin/x", .rel_pc = 0x10, .function_name = "f"};
	struct perfetto_cmd_trace_counts c;
	struct tb_err err = {0};
	char path[256];

	perf_emitter_init(&e, 6, PERF_COUNTER_SW_CPU_CLOCK, 1000, 0);
	pb_writer_init_growable(&w);
	perf_emit_start(&e, &w, 100);
	for (int i = 0; i < 5; i++)
		perf_emit_sample(&e, &w, 200 + (uint64_t)i, 0, 10, 11, 2, &fr, 1);
	perf_emit_sample(&e, &w, 300, 0, 10, 11, 2, NULL, 0);
	perf_emit_skipped(&e, &w, 310, 1, 20, 21, 2, PERF_SKIP_NOT_IN_SCOPE);
	perf_emit_skipped(&e, &w, 320, 1, 10, 11, 2, PERF_SKIP_UNWIND_ENQUEUE);
	perf_emit_lost(&e, &w, 330, 1, 7);
	perf_emit_lost(&e, &w, 340, 0, 2);
	pb_writer_init_growable(&t);
	pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
	while (pb_next(&r, &f)) {
		unsigned p = pb_begin_nested(&t, PB_F_Trace_packet);
		pb_put_raw(&t, f.data, f.len);
		pb_put_uint32(&t, PB_F_TracePacket_trusted_packet_sequence_id, 1);
		pb_end_nested(&t, p);
	}
	/* a 20 MiB packet (a field TracePacket does not declare, as
	 * for_testing's bytes) is skipped over, not held */
	enum { UNDECLARED_FIELD = 900 };
	size_t big = 20u << 20;
	uint8_t *blob = tb_calloc(1, big);
	unsigned p = pb_begin_nested(&t, PB_F_Trace_packet);
	pb_put_bytes(&t, UNDECLARED_FIELD, blob, big);
	pb_end_nested(&t, p);
	tb_free(blob);
	perf_emit_sample(&e, &w, 400, 0, 10, 11, 2, &fr, 1); /* after it: still counted */
	pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
	f = (struct pb_field){0};
	for (size_t n = 0; pb_next(&r, &f);)
		if (++n == 13) { /* the sample just emitted */
			p = pb_begin_nested(&t, PB_F_Trace_packet);
			pb_put_raw(&t, f.data, f.len);
			pb_end_nested(&t, p);
		}
	snprintf(path, sizeof path, "/tmp/tb-perfetto-cmd-counts-%d", (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(tb_write_all(fd, pb_writer_data(&t), pb_writer_size(&t)), 0);
	close(fd);
	CHECK_EQ(perfetto_cmd_trace_counts(path, &c, &err), 0);
	unlink(path);
	CHECK_UEQ(c.samples, 7);
	CHECK_UEQ(c.samples_without_callsite, 1);
	CHECK_UEQ(c.samples_skipped, 1);
	CHECK_UEQ(c.lost_records, 9);
	perfetto_cmd_trace_counts_mem(pb_writer_data(&t), pb_writer_size(&t), &c);
	CHECK_UEQ(c.samples, 7);
	pb_writer_release(&t);
	pb_writer_release(&w);
	perf_emitter_release(&e);
}

static void control_stop(void *ctx)
{
	(*(int *)ctx)++;
}

/* Read what is waiting on fd (non-blocking) into buf. */
static const char *drain(int fd, char *buf, size_t cap)
{
	ssize_t n = read(fd, buf, cap - 1);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* --control as a workload and one traced_perf instance see it: commands
 * on the CTL fifo, passed on to the instance's socket, answered on ACK
 * only once the instance answered; enable waits for every data source. */
TEST(perfetto_cmd_control_protocol)
{
	char dir[] = "/tmp/tb-control-XXXXXX", spec[256], ctl_path[96], ack_path[96], buf[256];
	struct tb_err err = {0};
	struct loop *l;
	int stops = 0;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(ctl_path, sizeof ctl_path, "%s/ctl", dir);
	snprintf(ack_path, sizeof ack_path, "%s/ack", dir);
	snprintf(spec, sizeof spec, "fifo:%s,%s", ctl_path, ack_path);
	struct perfetto_cmd_control *c = perfetto_cmd_control_new(spec, &err);
	CHECK(c != NULL);
	if (!c)
		return;
	perfetto_cmd_control_env(c, buf, sizeof buf);
	CHECK_STR_EQ(buf, spec);
	l = loop_new(&err);
	CHECK_EQ(perfetto_cmd_control_attach(c, l, 1, control_stop, &stops), 0);
	int ctl = open(ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	int ack = open(ack_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	CHECK(ctl >= 0 && ack >= 0);
	/* the instance connects and says hello */
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", perfetto_cmd_control_socket(c));
	int peer = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK_EQ(connect(peer, (struct sockaddr *)&sa, sizeof sa), 0);
	CHECK_EQ(tb_write_all(peer, "hello\n", 6), 0);
	tb_set_nonblock(peer, true);
	for (int i = 0; i < 5; i++)
		loop_run_once(l, 10);
	/* ping is answered at once; enable waits for the data sources */
	CHECK_EQ(tb_write_all(ctl, "ping\nenable\n", 12), 0);
	for (int i = 0; i < 5; i++)
		loop_run_once(l, 10);
	CHECK_STR_EQ(drain(ack, buf, sizeof buf), "ack\n");
	CHECK_STR_EQ(drain(peer, buf, sizeof buf), "");
	perfetto_cmd_control_started(c);
	for (int i = 0; i < 5; i++)
		loop_run_once(l, 10);
	CHECK_STR_EQ(drain(peer, buf, sizeof buf), "enable\n");
	CHECK_STR_EQ(drain(ack, buf, sizeof buf), ""); /* not before the instance */
	CHECK_EQ(tb_write_all(peer, "ack\n", 4), 0);
	for (int i = 0; i < 5; i++)
		loop_run_once(l, 10);
	CHECK_STR_EQ(drain(ack, buf, sizeof buf), "ack\n");
	/* NUL ends a word too; unknown words get err; stop ends the capture */
	CHECK_EQ(tb_write_all(ctl, "disable\0bogus\nstop\n", 19), 0);
	for (int i = 0; i < 5; i++)
		loop_run_once(l, 10);
	CHECK_STR_EQ(drain(peer, buf, sizeof buf), "disable\n");
	CHECK_EQ(tb_write_all(peer, "ack\n", 4), 0);
	for (int i = 0; i < 5; i++)
		loop_run_once(l, 10);
	CHECK_STR_EQ(drain(ack, buf, sizeof buf), "ack\nerr\nack\n");
	CHECK_EQ(stops, 1);
	/* after the capture: answered, no effect */
	perfetto_cmd_control_stopped(c);
	CHECK_EQ(tb_write_all(ctl, "enable\n", 7), 0);
	for (int i = 0; i < 5; i++)
		loop_run_once(l, 10);
	CHECK_STR_EQ(drain(ack, buf, sizeof buf), "ack\n");
	CHECK_STR_EQ(drain(peer, buf, sizeof buf), "");
	perfetto_cmd_control_detach(c);
	close(peer);
	close(ctl);
	close(ack);
	loop_free(l);
	perfetto_cmd_control_free(c);
	/* the fifos it made and its socket folder are gone */
	CHECK(access(ctl_path, F_OK) < 0 && access(ack_path, F_OK) < 0);
	rmdir(dir);
	/* a spec that is not fifo:... */
	tb_err_clear(&err);
	CHECK(perfetto_cmd_control_new("pipe:x", &err) == NULL);
	CHECK(strstr(err.msg, "fifo:CTL[,ACK]") != NULL);
}

TEST(perfetto_cmd_output_framing_and_no_clobber)
{
	char path[128];
	struct perfetto_cmd_out o;
	struct tb_err err = {0};
	char *data = NULL;
	size_t len = 0;
	uint8_t big[300];
	bool ok;

	memset(big, 0xAB, sizeof big);
	snprintf(path, sizeof path, "/tmp/tb-perfetto-cmd-%d.pftrace", (int)getpid());
	unlink(path);
	CHECK_EQ(perfetto_cmd_out_open(&o, path, true, 0, &err), 0);
	CHECK(access(path, F_OK) != 0); /* only the temporary file exists */
	CHECK_EQ(perfetto_cmd_out_packet(&o, (const uint8_t *)"\x08\x01", 2, &err), 0);
	CHECK_EQ(perfetto_cmd_out_packet(&o, big, sizeof big, &err), 0);
	CHECK_EQ(perfetto_cmd_out_finish(&o, &err), 0);
	CHECK_EQ(tb_read_file(path, &data, &len, 1 << 20, &err), 0);
	ok = len == 4 + 3 + sizeof big && memcmp(data, "\x0a\x02\x08\x01\x0a\xac\x02", 7) == 0 &&
	     (uint8_t)data[7] == 0xAB;
	tb_free(data);
	CHECK(ok);

	CHECK_EQ(perfetto_cmd_out_open(&o, path, true, 0, &err), -EEXIST);
	CHECK(strstr(err.msg, "--no-clobber") != NULL);

	/* A capped output drops what does not fit; abort leaves no file. */
	unlink(path);
	CHECK_EQ(perfetto_cmd_out_open(&o, path, false, 100, &err), 0);
	CHECK_EQ(perfetto_cmd_out_packet(&o, big, sizeof big, &err), 0);
	CHECK_EQ(perfetto_cmd_out_packet(&o, (const uint8_t *)"\x08\x01", 2, &err), 0);
	ok = o.dropped == 1 && o.packets == 1 && o.bytes == 4;
	perfetto_cmd_out_abort(&o);
	CHECK(ok);
	CHECK(access(path, F_OK) != 0);
}

/* A capture cut off (traced died mid write_into_file): the file is cut
 * after its last whole record and kept; with no whole record it goes. */
TEST(perfetto_cmd_output_finish_partial)
{
	char path[128];
	struct perfetto_cmd_out o;
	struct tb_err err = {0};
	uint8_t big[300];
	uint64_t kept = 99;
	struct stat st;

	memset(big, 0xCD, sizeof big);
	snprintf(path, sizeof path, "/tmp/tb-perfetto-cmd-partial-%d.pftrace", (int)getpid());
	unlink(path);
	CHECK_EQ(perfetto_cmd_out_open(&o, path, false, 0, &err), 0);
	/* Records as the service writes them into our fd, then what a writer
	 * killed mid-record leaves: a header and half a body. */
	CHECK_EQ(write(o.fd, "\x0a\x02\x08\x01\x0a\xac\x02", 7), 7);
	CHECK_EQ(write(o.fd, big, sizeof big), (ssize_t)sizeof big);
	CHECK_EQ(write(o.fd, "\x0a\xac\x02\xcd\xcd", 5), 5);
	CHECK_EQ(perfetto_cmd_out_finish_partial(&o, &kept, &err), 0);
	CHECK_UEQ(kept, 4 + 3 + sizeof big);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_UEQ(st.st_size, kept);
	unlink(path);

	/* Only a broken header: nothing to keep, no file. */
	CHECK_EQ(perfetto_cmd_out_open(&o, path, false, 0, &err), 0);
	CHECK_EQ(write(o.fd, "\x0a\xff", 2), 2);
	CHECK_EQ(perfetto_cmd_out_finish_partial(&o, &kept, &err), -ENODATA);
	CHECK_UEQ(kept, 0);
	CHECK(access(path, F_OK) != 0);
}

/* The "--" that starts a workload is found past option values, and a "--"
 * that is an option's value does not count. */
TEST(perfetto_cmd_workload_split_finds_the_separator)
{
	char *a1[] = {"perfetto", "-t", "1s", "-o", "x", "--", "make", "-j4", NULL};
	char *a2[] = {"perfetto", "-o", "--", "-t", "1s", NULL};
	char *a3[] = {"perfetto", "--out", "--", "--", "true", NULL};
	char *a4[] = {"perfetto", "--out=x", "sched/sched_switch", "--", "true", NULL};
	char *a5[] = {"perfetto", "-do", "--", "--txt", NULL};
	char *a6[] = {"perfetto", "--ou", "--", "x", NULL};
	char *a7[] = {"perfetto", "--", NULL};
	CHECK_EQ(perfetto_cmd_workload_split(8, a1), 5);
	CHECK_EQ(perfetto_cmd_workload_split(5, a2), 5);
	CHECK_EQ(perfetto_cmd_workload_split(5, a3), 3);
	CHECK_EQ(perfetto_cmd_workload_split(5, a4), 3);
	CHECK_EQ(perfetto_cmd_workload_split(4, a5), 4);
	CHECK_EQ(perfetto_cmd_workload_split(4, a6), 4);
	CHECK_EQ(perfetto_cmd_workload_split(2, a7), 1);
}

static int run_workload(char **argv)
{
	struct perfetto_cmd_workload w;
	int st;
	perfetto_cmd_workload_init(&w, argv);
	perfetto_cmd_workload_start(&w);
	st = perfetto_cmd_workload_wait(&w, NULL);
	return w.exited ? st : -1;
}

/* Statuses as a shell reports them: exit code, 128 + signal, 127 for a
 * command not found, 126 for one that cannot be executed. */
TEST(perfetto_cmd_workload_statuses)
{
	char *ok[] = {"true", NULL};
	char *seven[] = {"sh", "-c", "exit 7", NULL};
	char *killed[] = {"sh", "-c", "kill -KILL $$", NULL};
	char *missing[] = {"/nonexistent/tb-no-such-command", NULL};
	char *noexec[] = {"/dev/null", NULL};
	struct perfetto_cmd_workload w;

	CHECK_EQ(run_workload(ok), 0);
	CHECK_EQ(run_workload(seven), 7);
	CHECK_EQ(run_workload(killed), 128 + 9);
	CHECK_EQ(run_workload(missing), 127);
	CHECK_EQ(run_workload(noexec), 126);
	/* interrupted before it started: never runs */
	perfetto_cmd_workload_init(&w, ok);
	perfetto_cmd_workload_cancel(&w, SIGINT);
	perfetto_cmd_workload_start(&w);
	CHECK(!w.started);
	CHECK_EQ(perfetto_cmd_workload_wait(&w, NULL), 130);
}
