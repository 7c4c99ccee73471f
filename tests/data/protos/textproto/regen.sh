#!/bin/sh
# Refresh the textproto fixtures: copy the TraceConfigs real perfetto was
# given when the golden transcripts and traces were recorded
# (../shared/reference/golden/{ipc,traces}/*.config.pbtxt) and encode each
# with stock protoc and our protos, the reference the textproto unit tests
# compare against (tests/unit/protos_textproto_test.c), together with the
# hand-written edge_*.pbtxt. Commit the results.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../../..
golden=$root/../shared/reference/golden
protos=$root/components/protos
for dir in ipc traces; do
	for f in "$golden/$dir"/*.config.pbtxt; do
		[ -f "$f" ] || continue
		name=${dir}_$(basename "$f" .config.pbtxt)
		rm -f "$here/$name.pbtxt"
		cp "$f" "$here/$name.pbtxt"
		chmod 644 "$here/$name.pbtxt"
	done
done
for f in "$here"/*.pbtxt; do
	protoc -I"$protos" --encode=perfetto.protos.TraceConfig \
		perfetto/config/trace_config.proto <"$f" >"${f%.pbtxt}.bin"
done
