-- Flow v1 as Perfetto binds it: 's'/'t' and 'f' with bp "e" go to the slice
-- on top of the thread's stack (an ended complete slice stays there until
-- the next slice pops it), 'f' without bp to the next slice that begins on
-- its thread; an 'f' whose flow never began starts from slice id 0 and
-- leaves the id open there (the 's' after it is a duplicate).
select so.name as out_name, si.name as in_name
from flow f join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id
order by f.id;
select name, value from stats where name like 'flow%' and value > 0 order by name;
