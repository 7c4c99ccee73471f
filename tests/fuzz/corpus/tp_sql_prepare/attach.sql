ATTACH '/tmp/tb-fuzz-attach.db' AS x; CREATE TABLE x.t(a); VACUUM INTO '/tmp/tb-fuzz-vacuum.db'; ATTACH ':memory:' AS m;
