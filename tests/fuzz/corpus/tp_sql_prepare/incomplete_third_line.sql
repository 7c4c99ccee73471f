select 1;

  select x from (select 1 as y) where