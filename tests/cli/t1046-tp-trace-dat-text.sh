# trace.dat records whose text trace-cmd report makes from the file's own
# kallsyms and printk formats: function / funcgraph addresses printed as
# symbols (%ps, %pS), bprint's binary arguments formatted with its printk
# format, bputs' string, and both their caller (arg ip). tests/tools/tdat_build.py writes such a file by
# hand (the kernel here refuses the function tracer, and trace_printk needs
# a module); our import of it gives the args below, which are what
# `trace-cmd report -N -t` prints for it (checked with trace-cmd when it is
# installed: its text, loaded by our text importer, gives the same args).
# Then malformed bprint records: counted, a generic row, no crash.
. tests/lib.sh

if ! command -v python3 >/dev/null 2>&1; then
	skip trace-dat-text "python3 is not installed"
	exit 0
fi
python3 tests/tools/tdat_build.py "$TMP/h.dat"
python3 tests/tools/tdat_build.py "$TMP/bad.dat" bad

Q="select e.ts, e.name, a.key, a.int_value, a.string_value from ftrace_event e
join args a using (arg_set_id) where a.key != 'overrun' order by e.id, a.key"
cat >"$TMP/expected.csv" <<'CSV'
"ts","name","key","int_value","string_value"
5000000000,"function","ip","[NULL]","vfs_read"
5000000000,"function","parent_ip","[NULL]","ksys_read"
5000001000,"function","ip","[NULL]","tb_probe_fn"
5000001000,"function","parent_ip","[NULL]","0xffffffff8100307f"
5000002000,"function","ip","[NULL]","0xffffffff80000010"
5000002000,"function","parent_ip","[NULL]","vfs_read"
5000003000,"funcgraph_entry","depth",1,"[NULL]"
5000003000,"funcgraph_entry","func","[NULL]","vfs_read"
5000004000,"funcgraph_entry","depth",2,"[NULL]"
5000004000,"funcgraph_entry","func","[NULL]","ksys_read"
5000005000,"funcgraph_exit","calltime",1000,"[NULL]"
5000005000,"funcgraph_exit","depth",2,"[NULL]"
5000005000,"funcgraph_exit","func","[NULL]","ksys_read"
5000005000,"funcgraph_exit","rettime",1900,"[NULL]"
5000006000,"funcgraph_exit","calltime",900,"[NULL]"
5000006000,"funcgraph_exit","depth",1,"[NULL]"
5000006000,"funcgraph_exit","func","[NULL]","vfs_read"
5000006000,"funcgraph_exit","rettime",2500,"[NULL]"
5000007000,"bputs","buf","[NULL]","tb bputs message"
5000007000,"bputs","ip","[NULL]","tb_probe_fn"
5000008000,"bprint","buf","[NULL]","tb int=42 neg=-7 u=4000000000 x=beef long=-1234567890123 ll=9223372036854775813 lx=deadbeefcafe"
5000008000,"bprint","ip","[NULL]","tb_probe_fn"
5000009000,"bprint","buf","[NULL]","tb str=hello world next=17 sym=ksys_read+0x5a short=vfs_read"
5000009000,"bprint","ip","[NULL]","tb_probe_fn"
5000010000,"bprint","buf","[NULL]","tb w=    7|| exact=vfs_read+0x0 data=some_data lx=1f pct=% end"
5000010000,"bprint","ip","[NULL]","tb_probe_fn"
CSV
"$TRACEBOX" trace_processor_shell query "$TMP/h.dat" "$Q" >"$TMP/dat.csv" 2>"$TMP/dat.err"
if cmp -s "$TMP/expected.csv" "$TMP/dat.csv"; then
	pass args
else
	fail args "$(diff "$TMP/expected.csv" "$TMP/dat.csv" | head -20)"
fi
# funcgraph_exit's overrun: the kernel's print fmt prints depth in its
# place, so only the binary import has it.
expect_eq overrun "0,0" "$(tp_query "$TMP/h.dat" "select group_concat(int_value) from args where key = 'overrun'" | tr -d '"')"

if command -v trace-cmd >/dev/null 2>&1; then
	trace-cmd report -N -t "$TMP/h.dat" >"$TMP/report.txt" 2>"$TMP/report.err"
	"$TRACEBOX" trace_processor_shell query "$TMP/report.txt" "$Q" >"$TMP/text.csv" 2>/dev/null
	if cmp -s "$TMP/expected.csv" "$TMP/text.csv"; then
		pass text-matches
	else
		fail text-matches "$(diff "$TMP/expected.csv" "$TMP/text.csv" | head -20)"
	fi
else
	skip text-matches "trace-cmd is not installed"
fi

# Malformed bprints (arguments past the record's end, a string with no
# NUL, a format the file does not have): a row each with the record's
# fields, trace_dat_bad_event, no crash.
expect_eq bad-rows 14 "$(tp_query "$TMP/bad.dat" "select count(*) from ftrace_event")"
expect_eq bad-stat 3 "$(tp_query "$TMP/bad.dat" "select value from stats where name = 'trace_dat_bad_event'")"
expect_eq bad-no-buf 0 "$(tp_query "$TMP/bad.dat" "select count(*) from ftrace_event e join args a using (arg_set_id) where e.ts > 5000010000 and a.key = 'buf'")"
expect_eq bad-fmt "1,1,1" "$(tp_query "$TMP/bad.dat" "select group_concat(a.int_value != 0) from ftrace_event e join args a using (arg_set_id) where e.ts > 5000010000 and a.key = 'fmt'" | tr -d '"')"

# A header whose long size is neither 4 nor 8 (the size bprint's %ld and
# %p arguments take): one clear error, no crash (size 0 divided by zero,
# size 5 read past the record).
for ls in 0 5; do
	python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[13] = int(sys.argv[3]); open(sys.argv[2], "wb").write(d)' \
		"$TMP/h.dat" "$TMP/ls$ls.dat" "$ls"
	"$TRACEBOX" trace_processor_shell query "$TMP/ls$ls.dat" "select count(*) from ftrace_event" >/dev/null 2>"$TMP/ls.err"
	expect_eq "long-size-$ls" "1 trace_processor_shell: cannot load '$TMP/ls$ls.dat': trace.dat: bad long size $ls" \
		"$? $(cat "$TMP/ls.err")"
done
