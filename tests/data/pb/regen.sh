#!/bin/sh
# Regenerate the protoc-encoded test inputs of tests/unit/pb_test.c from the
# textprotos beside this script. Needs protoc (Debian: protobuf-compiler).
set -eu
cd "$(dirname "$0")"
for pair in alltypes:AllTypes repeated:Repeated full:Full; do
	name=${pair%%:*}
	msg=${pair#*:}
	protoc --encode="pbtest.$msg" test.proto < "$name.txtpb" > "$name.bin"
done
