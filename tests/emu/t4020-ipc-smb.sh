# Recording across the IPC and the shared memory buffer under emulation:
# for each non-native target, a traced, a producer (tests/tools/
# test_producer writing N TrackEvent slices through the SMB) and the
# perfetto client gating on it, in three arrangements:
#   emulated   all three are the target's binaries under its emulator;
#   native-service   this machine's traced and client, the target's producer
#              (a 32-bit armv7 producer's SMB and frames read by a 64-bit
#              service: the ABI is the same on every target);
#   native-producer  the target's traced and client, this machine's producer;
#   autostart  `tracebox -c CFG -o OUT -- test_producer`, the target's binaries
#              run as on the device: tracebox starts its private traced by
#              re-executing itself, which needs the kernel to hand the
#              target's ELF files to qemu (binfmt_misc in a private user
#              namespace, Linux 6.7+; SKIP without).
# The trace is then read with this machine's trace processor: every slice
# arrived, nothing lost. Each capture is bounded by `timeout 120`.
. tests/lib.sh
. tests/emu/lib.sh

N=200000
PRODUCER=$TB_OUT/tools/test_producer
export TRACEBOX_LOG=error
cat >"$TMP/cfg.pbtx" <<'CFG'
buffers { size_kb: 32768 fill_policy: DISCARD }
data_sources { config { name: "tb.test" } }
CFG

# listening NAME: the abstract unix socket @NAME is listening.
listening() { grep -q " @$1\$" /proc/net/unix 2>/dev/null; }

# capture CASE TRACED_CMD CLIENT_CMD PRODUCER_CMD: start the service, record
# with the client gating the producer, check the trace.
capture() {
	c=$1 traced=$2 client=$3 producer=$4
	p=tb-emu-p-$E_NAME-$c-$$ s=tb-emu-c-$E_NAME-$c-$$
	PERFETTO_PRODUCER_SOCK_NAME=@$p PERFETTO_CONSUMER_SOCK_NAME=@$s \
		$traced traced >"$TMP/$c.traced" 2>&1 &
	tpid=$!
	i=0
	while ! listening "$s"; do
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 "$tpid" 2>/dev/null; then
			fail "$E_NAME/$c" "traced did not start" "$(tail -3 "$TMP/$c.traced")"
			kill "$tpid" 2>/dev/null
			return
		fi
		sleep 0.1
	done
	PERFETTO_PRODUCER_SOCK_NAME=@$p PERFETTO_CONSUMER_SOCK_NAME=@$s timeout 120 \
		$client perfetto --txt -c "$TMP/cfg.pbtx" -o "$TMP/$c.pftrace" -- $producer --slices $N \
		>"$TMP/$c.out" 2>"$TMP/$c.err"
	rc=$?
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	status=$(grep '^workload_status=' "$TMP/$c.err")
	got=$(tp_query "$TMP/$c.pftrace" "select count(*), count(distinct name), sum(dur = 1) from slice")
	if [ "$rc" = 0 ] && [ "$(cat "$TMP/$c.out")" = "written=$N dropped=0" ] &&
		[ "$got" = "$N,16,$N" ] && echo "$status" | grep -q 'trace_status=0 .*packets_lost=0 .*capture_complete=1$'; then
		pass "$E_NAME/$c"
	else
		fail "$E_NAME/$c" "exit $rc, producer: $(cat "$TMP/$c.out"), slices: $got" "$status" \
			"$(grep -v '^workload_status' "$TMP/$c.err" | tail -3)" "$(tail -3 "$TMP/$c.traced")"
	fi
}

ipc() {
	[ "$E_NATIVE" = 1 ] && return
	if [ ! -x "$E_TOOLS/test_producer" ] || [ ! -x "$PRODUCER" ]; then
		skip "$E_NAME" "no test_producer for $E_NAME or this machine (./build.sh tests)"
		return
	fi
	q="$(command -v "$E_QEMU") -cpu $E_CPU"
	export QEMU_CPU=$E_CPU
	capture emulated "$q $E_TRACEBOX" "$q $E_TRACEBOX" "$q $E_TOOLS/test_producer"
	capture native-service "$TRACEBOX" "$TRACEBOX" "$q $E_TOOLS/test_producer"
	capture native-producer "$q $E_TRACEBOX" "$q $E_TRACEBOX" "$PRODUCER"
	unset QEMU_CPU
	if ! $sandbox; then
		skip "$E_NAME/autostart" "no private binfmt_misc (needs Linux 6.7+ and unshare)"
		return
	fi
	c=autostart
	binfmt_run timeout 120 "$E_TRACEBOX" --txt -c "$TMP/cfg.pbtx" -o "$TMP/$c.pftrace" \
		-- "$E_TOOLS/test_producer" --slices $N >"$TMP/$c.out" 2>"$TMP/$c.err"
	rc=$?
	status=$(grep '^workload_status=' "$TMP/$c.err")
	got=$(tp_query "$TMP/$c.pftrace" "select count(*), count(distinct name), sum(dur = 1) from slice")
	if [ "$rc" = 0 ] && [ "$(cat "$TMP/$c.out")" = "written=$N dropped=0" ] &&
		[ "$got" = "$N,16,$N" ] && echo "$status" | grep -q 'trace_status=0 .*packets_lost=0 .*capture_complete=1$'; then
		pass "$E_NAME/$c"
	else
		fail "$E_NAME/$c" "exit $rc, producer: $(cat "$TMP/$c.out"), slices: $got" "$status" \
			"$(grep -v '^workload_status' "$TMP/$c.err" | tail -3)"
	fi
}

sandbox=false
binfmt_sandbox_ok && sandbox=true

emu_each ipc
