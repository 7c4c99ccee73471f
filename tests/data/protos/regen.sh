#!/bin/sh
# Re-encode the text-format fixtures in this folder with our own protos
# (components/protos), using stock protoc. Run from anywhere; commit the .bin.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
protos=$here/../../../components/protos
protoc -I"$protos" --encode=perfetto.protos.TraceConfig \
	perfetto/config/trace_config.proto \
	<"$here/trace_config.txt" >"$here/trace_config.bin"
