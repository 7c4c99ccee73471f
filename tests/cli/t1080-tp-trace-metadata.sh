# The service's own packets as Perfetto's trace processor imports them:
# trace_stats and ftrace_stats into `stats` (single and per-buffer / per-cpu
# indexed rows), trace_config, system_info, trace_uuid and service events
# into `metadata`, and the uuid a trace without one gets from a hash of its
# first 4 KiB. Traces are written as text and encoded by `traceconv binary`.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox

q() { "$bin" trace_processor_shell query "$1" "$2" 2>"$TMP/err"; }

cat >"$TMP/t.txt" <<'TXT'
packet {
  trusted_packet_sequence_id: 1
  timestamp: 1000
  trace_config {
    buffers { size_kb: 1024 fill_policy: RING_BUFFER }
    buffers { fill_policy: DISCARD }
    data_sources { config { name: "linux.ftrace" } }
    duration_ms: 3000
    write_into_file: true
    trace_attributes {
      attribute { key: "app.build" string_value: "b1" }
      attribute { key: "app.n" long_value: 1 }
    }
    unique_session_name: "sess\"1"
    trace_uuid_msb: 1314564453825188563
    trace_uuid_lsb: -6605018796207623390
  }
}
packet {
  trusted_packet_sequence_id: 1
  timestamp: 1000
  system_info {
    utsname { sysname: "Linux" version: "#1 SMP" release: "6.1.0" machine: "x86_64" }
    android_build_fingerprint: "google/coral/coral:11/RP1A/6543210:user/release-keys"
    timezone_off_mins: -300
    system_ram_bytes: 16500000000
  }
}
packet { trusted_packet_sequence_id: 1 timestamp: 2000 service_event { tracing_started: true } }
packet {
  trace_attributes {
    attribute { key: "app.n" string_value: "two" }
    attribute { key: "app.iterations" long_value: 10 }
  }
}
packet { trusted_packet_sequence_id: 1 timestamp: 2100 service_event { all_data_sources_started: true } }
packet {
  trusted_packet_sequence_id: 1
  timestamp: 2200
  service_event {
    slow_starting_data_sources {
      data_source { producer_name: "p1" data_source_name: "linux.ftrace" }
      data_source { producer_name: "p2" data_source_name: "track_event" }
    }
  }
}
packet { trusted_packet_sequence_id: 1 timestamp: 3000 service_event { all_data_sources_flushed: true } }
packet { trusted_packet_sequence_id: 1 timestamp: 3100 service_event { all_data_sources_flushed: true } }
packet { trusted_packet_sequence_id: 1 timestamp: 3200 service_event { tracing_disabled: true } }
packet {
  trusted_packet_sequence_id: 2
  timestamp: 1500
  ftrace_stats {
    phase: START_OF_TRACE
    cpu_stats { cpu: 0 entries: 10 overrun: 1 read_events: 5 now_ts: 1.5 oldest_event_ts: 1.25 }
    cpu_stats { cpu: 1 entries: 20 }
    unknown_ftrace_events: "foo/bar"
    failed_ftrace_events: "sched/nope"
    kprobe_stats { hits: 3 misses: 1 }
  }
}
packet {
  trusted_packet_sequence_id: 2
  timestamp: 3000
  ftrace_stats {
    phase: END_OF_TRACE
    cpu_stats { cpu: 0 entries: 4 overrun: 7 read_events: 105 now_ts: 4.000000001 }
    kprobe_stats { hits: 10 misses: 1 }
  }
}
packet {
  trusted_packet_sequence_id: 1
  timestamp: 3300
  trace_stats {
    buffer_stats { buffer_size: 1048576 bytes_written: 4096 chunks_written: 1 patches_failed: 2 bytes_overwritten: 512 }
    buffer_stats { buffer_size: 4096 }
    producers_connected: 2
    producers_seen: 3
    data_sources_registered: 7
    tracing_sessions: 1
    total_buffers: 2
    flushes_requested: 1
    flushes_succeeded: 1
    filter_stats { input_packets: 9 input_bytes: 900 output_bytes: 800 bytes_discarded_per_buffer: 60 bytes_discarded_per_buffer: 40 }
    final_flush_outcome: FINAL_FLUSH_SUCCEEDED
  }
}
TXT
if ! "$TRACEBOX" traceconv binary "$TMP/t.txt" "$TMP/t.pb" 2>"$TMP/err"; then
	fail encode "$(cat "$TMP/err")"
	exit 0
fi

q "$TMP/t.pb" "select name, idx, severity, source, value from stats where value != 0 order by name, idx" >"$TMP/got"
cat >"$TMP/want" <<'CSV'
"name","idx","severity","source","value"
"config_write_into_file_discard",1,"data_loss","trace",1
"config_write_into_file_no_flush","[NULL]","error","trace",1
"filter_input_bytes","[NULL]","info","trace",900
"filter_input_packets","[NULL]","info","trace",9
"filter_output_bytes","[NULL]","info","trace",800
"ftrace_cpu_entries_begin",0,"info","trace",10
"ftrace_cpu_entries_begin",1,"info","trace",20
"ftrace_cpu_entries_delta",0,"info","trace",-6
"ftrace_cpu_entries_end",0,"info","trace",4
"ftrace_cpu_now_ts_begin",0,"info","trace",1500000000
"ftrace_cpu_now_ts_end",0,"info","trace",4000000001
"ftrace_cpu_oldest_event_ts_begin",0,"info","trace",1250000000
"ftrace_cpu_overrun_begin",0,"info","trace",1
"ftrace_cpu_overrun_delta",0,"info","trace",6
"ftrace_cpu_overrun_end",0,"info","trace",7
"ftrace_cpu_read_events_begin",0,"info","trace",5
"ftrace_cpu_read_events_delta",0,"info","trace",100
"ftrace_cpu_read_events_end",0,"info","trace",105
"ftrace_kprobe_hits_begin","[NULL]","info","trace",3
"ftrace_kprobe_hits_delta","[NULL]","info","trace",7
"ftrace_kprobe_hits_end","[NULL]","info","trace",10
"ftrace_kprobe_misses_begin","[NULL]","info","trace",1
"ftrace_kprobe_misses_end","[NULL]","info","trace",1
"ftrace_setup_errors","[NULL]","notice","trace",2
"long_trace_mode_bytes_overwritten",0,"data_loss","trace",512
"traced_buf_buffer_size",0,"info","trace",1048576
"traced_buf_buffer_size",1,"info","trace",4096
"traced_buf_bytes_filtered_out",0,"info","trace",60
"traced_buf_bytes_filtered_out",1,"info","trace",40
"traced_buf_bytes_overwritten",0,"info","trace",512
"traced_buf_bytes_written",0,"info","trace",4096
"traced_buf_chunks_written",0,"info","trace",1
"traced_buf_patches_failed",0,"data_loss","trace",2
"traced_data_sources_registered","[NULL]","info","trace",7
"traced_final_flush_succeeded","[NULL]","info","trace",1
"traced_flushes_requested","[NULL]","info","trace",1
"traced_flushes_succeeded","[NULL]","info","trace",1
"traced_producers_connected","[NULL]","info","trace",2
"traced_producers_seen","[NULL]","info","trace",3
"traced_total_buffers","[NULL]","info","trace",2
"traced_tracing_sessions","[NULL]","info","trace",1
CSV
if cmp -s "$TMP/want" "$TMP/got"; then pass stats; else fail stats "$(diff "$TMP/want" "$TMP/got")"; fi

# A v54+ service flushes a file it writes into by itself: no
# config_write_into_file_no_flush then.
sed 's/timezone_off_mins: -300/timezone_off_mins: -300 tracing_service_version: "Perfetto v54.0 (abc)"/' "$TMP/t.txt" >"$TMP/v.txt"
"$TRACEBOX" traceconv binary "$TMP/v.txt" "$TMP/v.pb" 2>"$TMP/err"
expect_eq no_flush_needs_old_service '"n"
0' "$(q "$TMP/v.pb" "select count(*) as n from stats where name = 'config_write_into_file_no_flush' and value > 0")"

# Indexed rows exist only for the indexes set; zero-valued ones are listed.
# (The shell prints strings between quotes without escaping, as Perfetto's.)
expect_eq stats_zero_index_rows '"n"
19' "$(q "$TMP/t.pb" "select count(*) as n from stats where name glob 'traced_buf_*' and idx = 1 and value = 0")"

q "$TMP/t.pb" "select name, key_type, int_value, str_value from metadata where name not in ('trace_size_bytes') order by name, id" >"$TMP/got"
cat >"$TMP/want" <<'CSV'
"name","key_type","int_value","str_value"
"all_data_source_flushed_ns","multi",3000,"[NULL]"
"all_data_source_flushed_ns","multi",3100,"[NULL]"
"all_data_source_started_ns","single",2100,"[NULL]"
"android_build_fingerprint","single","[NULL]","google/coral/coral:11/RP1A/6543210:user/release-keys"
"android_incremental_build","single","[NULL]","6543210"
"android_sdk_version","single",30,"[NULL]"
"slow_start_data_source","multi","[NULL]","p1 linux.ftrace"
"slow_start_data_source","multi","[NULL]","p2 track_event"
"system_machine","single","[NULL]","x86_64"
"system_name","single","[NULL]","Linux"
"system_ram_bytes","single",16500000000,"[NULL]"
"system_ram_gb","single",17,"[NULL]"
"system_release","single","[NULL]","6.1.0"
"system_version","single","[NULL]","#1 SMP"
"timezone_off_mins","single",-300,"[NULL]"
"trace_attribute.app.build","single","[NULL]","b1"
"trace_attribute.app.iterations","single",10,"[NULL]"
"trace_attribute.app.n","single","[NULL]","two"
"trace_config_pbtxt","single","[NULL]","buffers {
  size_kb: 1024
  fill_policy: RING_BUFFER
}
buffers {
  fill_policy: DISCARD
}
data_sources {
  config {
    name: "linux.ftrace"
  }
}
duration_ms: 3000
write_into_file: true
trace_attributes {
  attribute {
    key: "app.build"
    string_value: "b1"
  }
  attribute {
    key: "app.n"
    long_value: 1
  }
}
unique_session_name: "sess\"1"
trace_uuid_msb: 1314564453825188563
trace_uuid_lsb: -6605018796207623390"
"trace_time_clock_id","single",6,"[NULL]"
"trace_type","single","[NULL]","proto"
"trace_uuid","single","[NULL]","123e4567-e89b-12d3-a456-426655443322"
"tracing_disabled_ns","single",3200,"[NULL]"
"tracing_started_ns","single",2000,"[NULL]"
"unique_session_name","single","[NULL]","sess"1"
CSV
if cmp -s "$TMP/want" "$TMP/got"; then pass metadata; else fail metadata "$(diff "$TMP/want" "$TMP/got")"; fi

# A TraceUuid packet wins over the config's uuid, whatever their order.
cat "$TMP/t.txt" >"$TMP/u.txt"
echo 'packet { trace_uuid { msb: 1 lsb: -2 } }' >>"$TMP/u.txt"
"$TRACEBOX" traceconv binary "$TMP/u.txt" "$TMP/u.pb" 2>"$TMP/err"
expect_eq uuid_packet_wins '"str_value"
"00000000-0000-0001-ffff-fffffffffffe"' "$(q "$TMP/u.pb" "select str_value from metadata where name = 'trace_uuid'")"

# No uuid in the trace: FNV-1a 64 of its first 4096 bytes as the low half.
printf '[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]' >"$TMP/a.json"
expect_eq uuid_from_hash '"str_value"
"00000000-0000-0000-'"$(python3 -c '
import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read()[:4096]:
    h = ((h ^ b) * 0x100000001b3) % (1 << 64)
s = "%016x" % h
print(s[:4] + "-" + s[4:])' "$TMP/a.json")"'"' "$(q "$TMP/a.json" "select str_value from metadata where name = 'trace_uuid'")"

# Ring-buffer parse errors reported by the recorder: the trace is refused
# (Perfetto does too), except zero-length data, which is only counted.
printf 'packet { trusted_packet_sequence_id: 2 ftrace_stats { phase: END_OF_TRACE ftrace_parse_errors: FTRACE_STATUS_ABI_ZERO_DATA_LENGTH ftrace_parse_errors: FTRACE_STATUS_ABI_ZERO_DATA_LENGTH } }\n' >"$TMP/z.txt"
"$TRACEBOX" traceconv binary "$TMP/z.txt" "$TMP/z.pb" 2>"$TMP/err"
expect_eq ftrace_zero_length_counted '"value"
2' "$(q "$TMP/z.pb" "select value from stats where name = 'ftrace_abi_errors_skipped_zero_data_length'")"
printf 'packet { trusted_packet_sequence_id: 2 ftrace_stats { phase: END_OF_TRACE ftrace_parse_errors: FTRACE_STATUS_ABI_ZERO_DATA_LENGTH ftrace_parse_errors: FTRACE_STATUS_ABI_END_OVERFLOW ftrace_parse_errors: FTRACE_STATUS_PARTIAL_PAGE_READ } }\n' >"$TMP/e.txt"
"$TRACEBOX" traceconv binary "$TMP/e.txt" "$TMP/e.pb" 2>"$TMP/err"
if "$bin" trace_processor_shell query "$TMP/e.pb" "select 1" >/dev/null 2>"$TMP/err"; then
	fail ftrace_parse_errors_refused "loaded"
elif grep -qF "critical ftrace parse errors (a bug in the recorder or the kernel): FTRACE_STATUS_ABI_END_OVERFLOW, FTRACE_STATUS_PARTIAL_PAGE_READ" "$TMP/err"; then
	pass ftrace_parse_errors_refused
else
	fail ftrace_parse_errors_refused "$(cat "$TMP/err")"
fi
