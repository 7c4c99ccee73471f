-- Equal-ts events are re-ordered (E first, then X longest first) only
-- where Perfetto's sorter sorts: once an X has been pushed, from the
-- oldest ts pushed out of order (an equal ts counts) on. Before that
-- (tid 1, as speedscope's zero-duration-events.json) push order holds.
select name, ts, dur, depth from slice order by ts, name;
