INCLUDE PERFETTO MODULE slices.stack;
SELECT cast_int!(cast_double!('a)b') || "x!(") AS v -- c!(
; /* cast_int!( */ SELECT 1 != 2;