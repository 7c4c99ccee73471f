create table cs as select * from __intrinsic_slice;
