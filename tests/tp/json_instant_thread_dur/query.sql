-- A thread-scoped instant (I, i, R) keeps its tts as thread_ts, but has no
-- thread_dur (NULL, not 0), as in Perfetto; a complete event has both.
SELECT name, dur, thread_ts, thread_dur FROM slice ORDER BY ts;
