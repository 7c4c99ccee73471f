-- android.memory.dmabuf: dma-buf allocations, attributed to the thread that
-- asked for them (through the gralloc allocator's binder replies).

-- dma heap changes: a thread's counter per buffer inode.
CREATE PERFETTO TABLE _raw_dmabuf_events AS
SELECT extract_arg(c.arg_set_id, 'inode') AS inode, t.utid, c.ts,
  cast_int!(c.value) AS buf_size
FROM thread_counter_track AS t JOIN counter AS c ON c.track_id = t.id
WHERE t.name = 'mem.dma_heap_change';

-- Binder replies of the gralloc allocator, with the client slice.
CREATE PERFETTO TABLE _gralloc_binders AS
SELECT f.slice_out AS client_slice_id, s.ts, s.dur, tt.utid
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN thread AS th ON th.utid = tt.utid
JOIN process AS p ON p.upid = th.upid
JOIN flow AS f ON f.slice_in = s.id
WHERE s.name = 'binder reply'
  AND (p.name GLOB '/vendor/bin/hw/android.hardware.graphics.allocator*'
       OR p.name GLOB '/vendor/bin/hw/*gralloc.allocator*');

-- Each event with the thread it is for: the binder client's when made
-- inside a gralloc reply, else the thread's own.
CREATE PERFETTO TABLE _attributed_dmabufs AS
SELECT r.inode, r.ts, r.buf_size, coalesce(ct.utid, r.utid) AS attr_utid
FROM _raw_dmabuf_events AS r
LEFT JOIN _gralloc_binders AS g ON g.utid = r.utid AND r.ts BETWEEN g.ts AND g.ts + g.dur
LEFT JOIN slice AS cs ON cs.id = g.client_slice_id
LEFT JOIN thread_track AS ct ON ct.id = cs.track_id
ORDER BY r.inode, r.ts;

-- The thread an event is charged to: an allocation's own; a free goes to
-- the thread of the buffer's latest event before it.
CREATE PERFETTO FUNCTION _alloc_source(is_alloc BOOL, inode LONG, ts LONG) RETURNS LONG AS
SELECT attr_utid FROM _attributed_dmabufs
WHERE inode = $inode AND (($is_alloc AND ts = $ts) OR (NOT $is_alloc AND ts < $ts))
ORDER BY ts DESC LIMIT 1;

CREATE PERFETTO TABLE android_dmabuf_allocs(
  ts LONG, buf_size LONG, inode LONG, utid LONG, tid LONG, thread_name STRING, upid LONG,
  pid LONG, process_name STRING) AS
SELECT a.ts, a.buf_size, a.inode, t.utid, t.tid, t.name AS thread_name, p.upid, p.pid,
  p.name AS process_name
FROM (SELECT inode, ts, buf_size, _alloc_source(buf_size > 0, inode, ts) AS utid
      FROM _attributed_dmabufs) AS a
JOIN thread AS t ON t.utid = a.utid
LEFT JOIN process AS p ON p.upid = t.upid
ORDER BY a.ts;

-- Running total of dma-buf bytes per process (or thread, without one).
CREATE PERFETTO TABLE android_memory_cumulative_dmabuf(
  upid LONG, process_name STRING, utid LONG, thread_name STRING, ts LONG, value LONG) AS
SELECT upid, process_name, utid, thread_name, ts,
  sum(buf_size) OVER (PARTITION BY coalesce(upid, utid) ORDER BY ts) AS value
FROM android_dmabuf_allocs;
