/*
 * Stats (model/stats.c, sql/stats.c): Perfetto's named counters of what an
 * import met (the `stats` table), single-valued and indexed, with their
 * severity, source and description declared once in X-macro lists.
 */
#ifndef TB_TP_STATS_H
#define TB_TP_STATS_H

#include <stdbool.h>
#include <stdint.h>

struct tp;

/* Perfetto's stat names. X(name, severity, source, description). */
#define TP_STATS(X)                                                                                \
	X(json_tokenizer_failure, "error", "trace",                                                \
	  "The JSON tokenizer could not parse an event.")                                          \
	X(json_parser_failure, "error", "trace", "The JSON parser could not parse an event.")      \
	X(json_display_time_unit, "info", "trace", "displayTimeUnit was set; it is ignored.")      \
	X(legacy_v8_cpu_profile_invalid_callsite, "error", "trace",                                \
	  "A node of a legacy V8 CPU profile could not be added.")                                 \
	X(legacy_v8_cpu_profile_invalid_sample, "error", "trace",                                  \
	  "A sample of a legacy V8 CPU profile had no session or node.")                           \
	X(slice_max_depth_exceeded, "error", "analysis",                                           \
	  "A slice deeper than 512 on its track was dropped.")                                     \
	X(trace_sorter_negative_timestamp_dropped, "error", "trace",                               \
	  "An event with a negative timestamp was dropped.")                                       \
	X(misplaced_end_event, "data_loss", "analysis",                                            \
	  "An end event did not match an open slice.")                                             \
	X(slice_drop_overlapping_complete_event, "error", "analysis",                              \
	  "A complete event partially overlapping another was dropped.")                           \
	X(slice_spill_overlapping_complete_event, "error", "analysis",                             \
	  "A JSON complete event partially overlapping another was moved to an overlap track.")    \
	X(flow_invalid_id, "error", "trace", "A flow event had an invalid id.")                    \
	X(flow_without_direction, "error", "trace",                                                \
	  "A flow binding had neither flow_in nor flow_out.")                                      \
	X(flow_duplicate_id, "error", "trace", "A flow v1 begin reused an open id.")               \
	X(flow_end_without_start, "info", "trace", "A flow end had no matching start.")            \
	X(flow_step_without_start, "info", "trace", "A flow step had no matching start.")          \
	X(flow_no_enclosing_slice, "data_loss", "trace", "A flow event had no enclosing slice.")   \
	X(stackless_end_event, "error", "trace", "An end event with no open slice on its track.")  \
	X(slice_negative_duration, "error", "analysis", "A slice ended before it began.")          \
	X(counter_events_with_non_numeric_value, "error", "trace",                                 \
	  "A counter had a non-numeric value.")                                                    \
	X(proto_tokenizer_failure, "error", "trace",                                               \
	  "A protobuf packet could not be split from the stream.")                                 \
	X(packet_skipped_seq_needs_incremental_state_invalid, "data_loss", "trace",                \
	  "A packet needed incremental state its sequence did not have.")                          \
	X(interned_data_tokenizer_errors, "info", "analysis", "An interned id was not found.")     \
	X(clock_sync_failure, "error", "analysis",                                                 \
	  "A timestamp could not be converted to the trace clock.")                                \
	X(clock_sync_unrelatable_clock_domains, "error", "analysis",                               \
	  "A file's clock could not be related to the trace time clock: its events were dropped.") \
	X(track_event_parser_errors, "info", "analysis", "A track event could not be parsed.")     \
	X(track_event_dropped_packets_outside_of_range_of_interest, "info", "analysis",            \
	  "TrackEvents before the range of interest dropped (--crop-track-events).")               \
	X(track_event_range_of_interest_missing_start_us, "error", "analysis",                     \
	  "A TrackEventRangeOfInterest packet had no start_us.")                                   \
	X(track_event_tokenizer_errors, "info", "analysis",                                        \
	  "A track event packet could not be tokenized.")                                          \
	X(compressed_packets_failure, "error", "trace",                                            \
	  "A compressed_packets payload did not inflate.")                                         \
	X(track_event_invalid_timestamp, "error", "analysis",                                      \
	  "A TrackEvent resolved to a negative timestamp and was dropped.")                        \
	X(invalid_trace_packet, "error", "trace", "A packet was malformed.")                       \
	X(packages_list_has_parse_errors, "error", "trace",                                        \
	  "The packages list had lines that did not parse.")                                       \
	X(packages_list_has_read_errors, "error", "trace", "The packages list could not be read.") \
	X(user_list_errors, "error", "trace",                                                      \
	  "Errors occurred while reading or parsing the user.list file.")                          \
	X(cpu_info_unknown_cpu_features, "info", "analysis",                                       \
	  "CpuInfo had cpu feature bits this version does not name; the whole bitmap is the "      \
	  "cpu's cpu_features.raw_bitmap arg.")                                                    \
	X(traced_clone_trigger_timestamp_ns, "info", "trace",                                      \
	  "When the trigger of the clone-snapshot operation that made this trace was received.")   \
	X(concurrent_session_event_unknown_state, "error", "analysis",                             \
	  "A ConcurrentSessionEvent had an unspecified or unknown state (a newer tracing "         \
	  "service?); it was skipped.")                                                            \
	X(cpu_info_empty, "error", "analysis",                                                     \
	  "A CpuInfo packet listed no cpus (/proc/cpuinfo unreadable where the trace was "         \
	  "recorded); the cpu table lacks their details.")                                         \
	X(gzip_failure, "error", "trace", "The gzip stream was corrupt or truncated.")             \
	X(json_event_too_large, "error", "trace",                                                  \
	  "A JSON event (or metadata) over 256 MiB, a giant string or a decompression bomb, was "  \
	  "skipped without being held in memory.")                                                 \
	X(archive_member_too_large, "error", "trace",                                              \
	  "An archive member inflated more than 200 times its compressed size past 64 MiB (a "     \
	  "decompression bomb): the archive was refused.")                                         \
	X(perf_text_importer_sample_line_error, "error", "trace",                                  \
	  "A perf script text line could not be parsed as a sample or a frame.")                   \
	/* importers/profiles/, importers/ninja/ */                                                \
	X(collapsed_stack_parse_error, "error", "trace",                                           \
	  "A collapsed stack line had no frames or no positive count after its last space.")       \
	X(pprof_parse_error, "error", "trace",                                                     \
	  "A pprof profile had a malformed message or a sample without locations Perfetto reads.") \
	X(ninja_parse_errors, "error", "trace", "A .ninja_log line could not be parsed.")          \
	X(compact_sched_switch_skipped, "info", "analysis",                                        \
	  "The first compact sched_switch of a cpu, whose prev task is unknown, was skipped.")     \
	X(compact_sched_waking_skipped, "info", "analysis",                                        \
	  "A compact sched_waking before any sched_switch on its cpu was skipped.")                \
	X(mismatched_sched_switch_tids, "error", "analysis",                                       \
	  "A sched_switch prev_pid did not match the next_pid of the cpu's previous switch.")      \
	X(ftrace_bundle_tokenizer_errors, "error", "analysis",                                     \
	  "An ftrace bundle could not be tokenized.")                                              \
	X(ftrace_generic_descriptor_errors, "error", "analysis",                                   \
	  "A generic ftrace event had no descriptor.")                                             \
	X(generic_task_state_invalid_order, "error", "analysis",                                   \
	  "Invalid order of generic task state events. Should never happen.")                      \
	X(task_state_invalid, "error", "analysis",                                                 \
	  "A task state event had an unknown state; it was skipped.")                              \
	X(ftrace_thermal_exynos_acpm_unknown_tz_id, "error", "analysis",                           \
	  "A thermal_exynos_acpm event named a thermal zone id outside BIG, MID, LITTLE, GPU, "    \
	  "ISP, TPU, AUR; it was skipped.")                                                        \
	X(perf_samples_cpu_mode_unknown, "error", "analysis",                                      \
	  "perf.data samples whose cpu mode (kernel, user, ...) was not recorded.")                \
	X(perf_dummy_mapping_used, "info", "analysis",                                             \
	  "perf.data frames whose address no MMAP record covers (given an unnamed mapping).")      \
	X(perf_data_truncated, "data_loss", "trace",                                               \
	  "The perf.data file ends inside its data or a record is corrupt: the rest is dropped.")  \
	X(perf_samples_skipped, "error", "analysis",                                               \
	  "Perf samples of processes in the config's scope that the profiler skipped without a "   \
	  "callstack (read or unwind stage): such a process can be missing from the profile, but " \
	  "the other processes' samples are complete.")                                            \
	X(perf_samples_skipped_dataloss, "data_loss", "trace",                                     \
	  "Perf samples the profiler (traced_perf) dropped to shed load (its unwind queue or "     \
	  "max_enqueued_footprint_kb was full); any traced process can be affected.")              \
	X(stackprofile_invalid_string_id, "error", "trace",                                        \
	  "An interned string of a stack profile was not found.")                                  \
	X(stackprofile_invalid_mapping_id, "error", "trace",                                       \
	  "An interned mapping of a stack profile was not found.")                                 \
	X(stackprofile_invalid_frame_id, "error", "trace",                                         \
	  "An interned frame of a stack profile was not found.")                                   \
	X(stackprofile_invalid_callstack_id, "error", "trace",                                     \
	  "An interned callstack of a stack profile was not found.")                               \
	X(stackprofile_parser_error, "error", "trace",                                             \
	  "A sampled callstack could not be resolved (unknown callstack iid, or more samples "     \
	  "than timestamps); the sample was dropped.")                                             \
	X(streaming_profile_invalid_timestamp, "error", "analysis",                                \
	  "A StreamingProfilePacket resolved to a negative timestamp and was dropped. This "       \
	  "indicates a bug in the trace producer or data corruption.")                             \
	X(systemd_journal_num_failed, "error", "trace",                                            \
	  "Journal entries the linux.systemd_journald data source could not read whole (skipped, " \
	  "or written without a field it could not decode).")                                      \
	X(systemd_journal_num_total, "info", "trace",                                              \
	  "Journal entries the linux.systemd_journald data source wrote into the trace.")          \
	X(systrace_parse_failure, "error", "analysis",                                             \
	  "A print event's atrace text, a line of a text trace or the fields of a known text "     \
	  "event could not be parsed.")                                                            \
	X(ftrace_text_payload_unparsed, "info", "trace",                                           \
	  "An ftrace text event had no key=value fields; its payload is kept whole as the "        \
	  "'payload' arg of its ftrace_event row.")                                                \
	X(trace_dat_truncated, "data_loss", "trace",                                               \
	  "trace.dat per-cpu data (or its kallsyms text) ran past the end; the part present was "  \
	  "read.")                                                                                 \
	X(trace_dat_page_corrupt, "data_loss", "trace",                                            \
	  "A trace.dat ring-buffer page or record did not fit; the rest of the page was skipped.") \
	X(trace_dat_decompress_failure, "data_loss", "trace",                                      \
	  "A compressed chunk of trace.dat per-cpu data, or its compressed kallsyms section, did " \
	  "not inflate; it was skipped (without kallsyms, addresses print as 0x...).")             \
	X(trace_dat_missed_events, "data_loss", "trace",                                           \
	  "A trace.dat ring-buffer page said events were lost before it (overwritten or "          \
	  "dropped).")                                                                             \
	X(trace_dat_unknown_event, "error", "trace",                                               \
	  "A trace.dat record had an event id no format in the file describes.")                   \
	X(trace_dat_bad_format, "error", "trace",                                                  \
	  "A trace.dat event format file could not be parsed; its events are unknown.")            \
	X(trace_dat_bad_event, "error", "analysis",                                                \
	  "A known trace.dat event lacked a field its handler needs (its ftrace_event row "        \
	  "stays).")                                                                               \
	X(sorter_push_event_out_of_order, "error", "analysis",                                     \
	  "Trace events are out of order event after sorting. This can happen due to many "        \
	  "factors including clock sync drift, producers emitting events out of order or a bug "   \
	  "in trace processor's logic of sorting.")                                                \
	X(ftrace_kprobe_hits_begin, "info", "trace", "kretprobe hits when the trace started.")     \
	X(ftrace_kprobe_hits_end, "info", "trace", "kretprobe hits when the trace ended.")         \
	X(ftrace_kprobe_hits_delta, "info", "trace",                                               \
	  "kretprobe hits while the trace was recorded.")                                          \
	X(ftrace_kprobe_misses_begin, "info", "trace", "kretprobe misses when the trace started.") \
	X(ftrace_kprobe_misses_end, "info", "trace", "kretprobe misses when the trace ended.")     \
	X(ftrace_kprobe_misses_delta, "data_loss", "trace",                                        \
	  "kretprobe events missed while the trace was recorded (maxactive too small).")           \
	X(ftrace_abi_errors_skipped_zero_data_length, "info", "analysis",                          \
	  "Ftrace pages with zero-length event data the recorder skipped (harmless).")             \
	X(config_write_into_file_no_flush, "error", "trace",                                       \
	  "The trace was written into a file (write_into_file) without flush_period_ms, by a "     \
	  "service older than v54: it was held in memory whole.")                                  \
	X(ftrace_setup_errors, "notice", "trace",                                                  \
	  "Ftrace events or atrace categories that could not be enabled (FtraceStats at the "      \
	  "start of the trace).")                                                                  \
	X(filter_input_bytes, "info", "trace", "Bytes given to the service's trace filter.")       \
	X(filter_input_packets, "info", "trace", "Packets given to the service's trace filter.")   \
	X(filter_output_bytes, "info", "trace", "Bytes the service's trace filter let through.")   \
	X(filter_time_taken_ns, "info", "trace", "Time the service spent filtering the trace.")    \
	X(filter_errors, "error", "trace", "Errors of the service's trace filter.")                \
	X(traced_chunks_discarded, "info", "trace", "Chunks the service discarded (TraceStats).")  \
	X(traced_data_sources_registered, "info", "trace",                                         \
	  "Data sources registered with the service (TraceStats).")                                \
	X(traced_data_sources_seen, "info", "trace",                                               \
	  "Data sources the service has seen (TraceStats).")                                       \
	X(traced_final_flush_failed, "data_loss", "trace",                                         \
	  "The flush at the end of the trace failed.")                                             \
	X(traced_final_flush_succeeded, "info", "trace",                                           \
	  "The flush at the end of the trace succeeded.")                                          \
	X(traced_flushes_failed, "data_loss", "trace",                                             \
	  "Flushes of the tracing session that failed.")                                           \
	X(traced_flushes_requested, "info", "trace", "Flushes of the tracing session requested.")  \
	X(traced_flushes_succeeded, "info", "trace",                                               \
	  "Flushes of the tracing session that succeeded.")                                        \
	X(traced_patches_discarded, "info", "trace",                                               \
	  "Chunk patches the service discarded (TraceStats).")                                     \
	X(traced_producers_connected, "info", "trace",                                             \
	  "Producers connected to the service (TraceStats).")                                      \
	X(traced_producers_seen, "info", "trace", "Producers the service has seen (TraceStats).")  \
	X(traced_total_buffers, "info", "trace", "Trace buffers of the service (TraceStats).")     \
	X(traced_tracing_sessions, "info", "trace",                                                \
	  "Tracing sessions of the service (TraceStats).")                                         \
	X(heap_graph_non_finalized_graph, "data_loss", "trace",                                    \
	  "A heap graph profile was not finalized before the trace ended (never: heap graphs are " \
	  "not imported).")

/* Stats with one value per index (a cpu, a trace buffer): a row per index
 * set. Same X(name, severity, source, description). */
#define TP_ISTATS(X)                                                                              \
	X(perf_cpu_lost_records, "data_loss", "trace",                                            \
	  "Perf samples the kernel dropped because the cpu's ring buffer was full; which "        \
	  "processes lost them is unknown. Lower the sampling frequency or raise "                \
	  "ring_buffer_pages.")                                                                   \
	X(perf_record_skipped, "error", "analysis",                                               \
	  "perf.data records that could not be parsed (indexed by record type).")                 \
	X(perf_unknown_record_type, "info", "analysis",                                           \
	  "perf.data records of a type the importer does not know (indexed by record type).")     \
	X(perf_features_skipped, "info", "analysis",                                              \
	  "perf.data feature sections not imported (indexed by feature id).")                     \
	X(perf_process_shard_count, "info", "trace",                                              \
	  "The process_shard_count of the perf session's config (indexed by perf session).")      \
	X(perf_chosen_process_shard, "info", "trace",                                             \
	  "The process shard the profiler chose for the perf session (indexed by perf session).") \
	X(long_trace_mode_bytes_overwritten, "data_loss", "trace",                                \
	  "Bytes of the buffer overwritten while the trace was streamed into a file "             \
	  "(write_into_file with file_write_period_ms): they are missing from the file.")         \
	X(config_write_into_file_discard, "data_loss", "trace",                                   \
	  "The trace was written into a file (write_into_file) from a DISCARD buffer: data can "  \
	  "go missing; use RING_BUFFER.")                                                         \
	X(ftrace_cpu_bytes_begin, "info", "trace",                                                \
	  "Bytes in the cpu's ftrace buffer when the trace started.")                             \
	X(ftrace_cpu_bytes_end, "info", "trace",                                                  \
	  "Bytes in the cpu's ftrace buffer when the trace ended.")                               \
	X(ftrace_cpu_bytes_delta, "info", "trace",                                                \
	  "Change of the cpu's ftrace buffer bytes over the trace.")                              \
	X(ftrace_cpu_commit_overrun_begin, "info", "trace",                                       \
	  "The cpu's ftrace commit overruns when the trace started.")                             \
	X(ftrace_cpu_commit_overrun_end, "info", "trace",                                         \
	  "The cpu's ftrace commit overruns when the trace ended.")                               \
	X(ftrace_cpu_commit_overrun_delta, "error", "trace",                                      \
	  "The cpu's ftrace commit overruns during the trace.")                                   \
	X(ftrace_cpu_dropped_events_begin, "info", "trace",                                       \
	  "The cpu's dropped ftrace events when the trace started.")                              \
	X(ftrace_cpu_dropped_events_end, "info", "trace",                                         \
	  "The cpu's dropped ftrace events when the trace ended.")                                \
	X(ftrace_cpu_dropped_events_delta, "error", "trace",                                      \
	  "The cpu's ftrace events dropped during the trace.")                                    \
	X(ftrace_cpu_entries_begin, "info", "trace",                                              \
	  "Entries in the cpu's ftrace buffer when the trace started.")                           \
	X(ftrace_cpu_entries_end, "info", "trace",                                                \
	  "Entries in the cpu's ftrace buffer when the trace ended.")                             \
	X(ftrace_cpu_entries_delta, "info", "trace",                                              \
	  "Change of the cpu's ftrace buffer entries over the trace.")                            \
	X(ftrace_cpu_now_ts_begin, "info", "trace",                                               \
	  "The cpu's ftrace clock (ns) when the trace started.")                                  \
	X(ftrace_cpu_now_ts_end, "info", "trace",                                                 \
	  "The cpu's ftrace clock (ns) when the trace ended.")                                    \
	X(ftrace_cpu_oldest_event_ts_begin, "info", "trace",                                      \
	  "The oldest event (ns) in the cpu's ftrace buffer when the trace started.")             \
	X(ftrace_cpu_oldest_event_ts_end, "info", "trace",                                        \
	  "The oldest event (ns) in the cpu's ftrace buffer when the trace ended.")               \
	X(ftrace_cpu_overrun_begin, "info", "trace",                                              \
	  "The cpu's ftrace overruns when the trace started.")                                    \
	X(ftrace_cpu_overrun_end, "info", "trace",                                                \
	  "The cpu's ftrace overruns when the trace ended.")                                      \
	X(ftrace_cpu_overrun_delta, "info", "trace",                                              \
	  "The cpu's ftrace overruns during the trace.")                                          \
	X(ftrace_cpu_read_events_begin, "info", "trace",                                          \
	  "Ftrace events read from the cpu when the trace started.")                              \
	X(ftrace_cpu_read_events_end, "info", "trace",                                            \
	  "Ftrace events read from the cpu when the trace ended.")                                \
	X(ftrace_cpu_read_events_delta, "info", "trace",                                          \
	  "Ftrace events read from the cpu during the trace.")                                    \
	X(traced_buf_abi_violations, "data_loss", "trace",                                        \
	  "Shared memory ABI violations of writers into the buffer.")                             \
	X(traced_buf_buffer_size, "info", "trace", "Size of the trace buffer.")                   \
	X(traced_buf_bytes_overwritten, "info", "trace",                                          \
	  "Bytes overwritten in the ring buffer before they were read.")                          \
	X(traced_buf_bytes_read, "info", "trace", "Bytes read from the trace buffer.")            \
	X(traced_buf_bytes_filtered_out, "info", "trace",                                         \
	  "Bytes of the buffer dropped by the service's trace filter.")                           \
	X(traced_buf_bytes_written, "info", "trace", "Bytes written into the trace buffer.")      \
	X(traced_buf_chunks_discarded, "info", "trace",                                           \
	  "Chunks discarded because the buffer was full.")                                        \
	X(traced_buf_chunks_overwritten, "info", "trace",                                         \
	  "Chunks overwritten in the ring buffer.")                                               \
	X(traced_buf_chunks_read, "info", "trace", "Chunks read from the trace buffer.")          \
	X(traced_buf_chunks_relocated, "info", "trace",                                           \
	  "Chunks moved to the write cursor instead of rewritten in place.")                      \
	X(traced_buf_chunks_rewritten, "info", "trace",                                           \
	  "Chunks rewritten in place (scraped, then committed).")                                 \
	X(traced_buf_chunks_written, "info", "trace", "Chunks written into the trace buffer.")    \
	X(traced_buf_chunks_committed_out_of_order, "info", "trace",                              \
	  "Chunks committed out of order.")                                                       \
	X(traced_buf_padding_bytes_cleared, "info", "trace",                                      \
	  "Padding bytes cleared in the trace buffer.")                                           \
	X(traced_buf_padding_bytes_written, "info", "trace",                                      \
	  "Padding bytes written into the trace buffer.")                                         \
	X(traced_buf_patches_failed, "data_loss", "trace",                                        \
	  "Chunk patches that found their chunk gone: data of a writer into the buffer may be "   \
	  "lost.")                                                                                \
	X(traced_buf_patches_succeeded, "info", "trace", "Chunk patches applied.")                \
	X(traced_buf_readaheads_failed, "info", "trace",                                          \
	  "Read-aheads of fragmented packets that failed.")                                       \
	X(traced_buf_readaheads_succeeded, "info", "trace",                                       \
	  "Read-aheads of fragmented packets that succeeded.")                                    \
	X(traced_buf_trace_writer_packet_loss, "data_loss", "trace",                              \
	  "Packet loss the service saw for writers into the buffer.")                             \
	X(traced_buf_write_wrap_count, "info", "trace", "Times the ring buffer wrapped.")         \
	X(traced_buf_sequence_packet_loss, "data_loss", "analysis",                               \
	  "Times a sequence writing into the buffer lost packets (previous_packet_dropped), "     \
	  "summed over its sequences.")                                                           \
	X(traced_buf_incremental_sequences_dropped, "data_loss", "analysis",                      \
	  "Sequences of the buffer all of whose packets needing incremental state were dropped "  \
	  "for want of it (interned data missing: incremental state invalidation off or too "     \
	  "rare).")                                                                               \
	X(traced_buf_data_loss_read_gap, "data_loss", "trace",                                    \
	  "Sequence data losses of the buffer from a gap in chunk ids at read time.")             \
	X(traced_buf_data_loss_chunk_corrupted, "data_loss", "trace",                             \
	  "Sequence data losses of the buffer from a chunk whose fragments could not be read.")   \
	X(traced_buf_data_loss_orphan_continuation, "data_loss", "trace",                         \
	  "Sequence data losses of the buffer from a continuation fragment without its "          \
	  "beginning.")                                                                           \
	X(traced_buf_data_loss_reassembly_gap, "data_loss", "trace",                              \
	  "Sequence data losses of the buffer from a chunk id gap inside a fragmented packet.")   \
	X(traced_buf_data_loss_reassembly_broken_chain, "data_loss", "trace",                     \
	  "Sequence data losses of the buffer from a broken fragment chain.")                     \
	X(traced_buf_data_loss_overwrite, "data_loss", "trace",                                   \
	  "Sequence data losses of the buffer from the ring buffer overwriting unread chunks.")   \
	X(traced_buf_data_loss_writer_abort, "data_loss", "trace",                                \
	  "Sequence data losses of the buffer from a writer abandoning a fragmented packet.")     \
	X(traced_buf_data_loss_smb_full, "data_loss", "trace",                                    \
	  "Sequence data losses of the buffer from the producer's shared memory being full.")

enum tp_stat {
#define TP_STAT_ENUM_(n, sev, src, desc) TP_STAT_##n,
	TP_STATS(TP_STAT_ENUM_)
#undef TP_STAT_ENUM_
	    TP_STAT_COUNT
};

struct tp_stat_info {
	const char *name, *severity, *source, *description;
};
extern const struct tp_stat_info tp_stat_infos[TP_STAT_COUNT];

enum tp_istat {
#define TP_ISTAT_ENUM_(n, sev, src, desc) TP_ISTAT_##n,
	TP_ISTATS(TP_ISTAT_ENUM_)
#undef TP_ISTAT_ENUM_
	    TP_ISTAT_COUNT
};
extern const struct tp_stat_info tp_istat_infos[TP_ISTAT_COUNT];

/* One value of an indexed stat; struct tp keeps them sorted by (stat, idx). */
struct tp_istat_val {
	uint32_t stat; /* enum tp_istat */
	int64_t idx, value;
};

/* Count stat s and record why in trace_import_logs: a row at ts
 * (TP_NULL_I64: none) with arg_set_id (TP_NULL_U32: none) as its details,
 * as Perfetto's ImportLogsTracker (model/stats.c). */
void tp_import_log(struct tp *tp, enum tp_stat s, int64_t ts, uint32_t arg_set_id);
/* Set the value of indexed stat s at idx (model/stats.c). */
void tp_istat_set(struct tp *tp, enum tp_istat s, int64_t idx, int64_t v);
/* The value of s at idx into *v; false if that index was never set. */
bool tp_istat_get(const struct tp *tp, enum tp_istat s, int64_t idx, int64_t *v);
/* Sort tp->istats by (stat, idx), the `stats` table's row order. */
void tp_istats_sort(struct tp *tp);

#endif /* TB_TP_STATS_H */
