#!/usr/bin/env bash
# Regenerates Sources/HeaplinePprof/profile.pb.swift from profile.proto beside it. The generated
# file is committed, so neither builds nor CI run this: swift-protobuf's build plugin would cost
# every CI run minutes. Run it after changing profile.proto, with protoc (Debian's
# protobuf-compiler) and protoc-gen-swift of the swift-protobuf release that Package.swift
# names, built from its checkout:
#   apt-get install -y protobuf-compiler
#   git clone https://github.com/apple/swift-protobuf /tmp/swift-protobuf
#   cd /tmp/swift-protobuf && git checkout 1.39.0 && swift build -c release --product protoc-gen-swift
#   PROTOC_GEN_SWIFT=/tmp/swift-protobuf/.build/release/protoc-gen-swift bash Tools/gen-pprof.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
plugin="${PROTOC_GEN_SWIFT:-$(command -v protoc-gen-swift || true)}"
if [ -z "$plugin" ]; then
  echo "gen-pprof.sh: set PROTOC_GEN_SWIFT to protoc-gen-swift (see this script's comment)" >&2
  exit 2
fi
dir="$root/Sources/HeaplinePprof"
protoc --plugin=protoc-gen-swift="$plugin" --proto_path="$dir" --swift_out="$dir" \
  --swift_opt=Visibility=Internal "$dir/profile.proto"
echo "$dir/profile.pb.swift"
