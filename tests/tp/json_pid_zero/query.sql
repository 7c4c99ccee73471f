-- In a JSON trace pid 0 is a process like any other (PyTorch's GPU 0), not
-- the idle process of upid 0, as Perfetto has it: only Linux system traces
-- map pid/tid 0 to the swapper rows.
select upid, pid, name from process order by upid;
select utid, tid, upid from thread order by utid;
