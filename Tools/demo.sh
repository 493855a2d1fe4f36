#!/usr/bin/env bash
# The main job on a fresh Debian machine: installs what Heapline needs, builds it in release, and
# records the bundled slideshow twice, the wrong way (--leaky) and the right way (--fixed), each
# with a memory warning 2 s in. It prints the report of each run and the timeline of malloc's
# live bytes, the decoded photos' backing stores and RSS, and writes the page of each run
# (heapline view) to open in a browser.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ] && ! pkg-config --exists libunwind libzstd libjpeg libpng16 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libunwind-dev libzstd-dev \
    libjpeg62-turbo-dev libpng-dev >/dev/null
fi
swift build -c release --product heapline
swift build -c release --product slideshow
bash Tools/build-preload.sh release >/dev/null
bin=.build/release
out="${TMPDIR:-/tmp}"
"$bin/slideshow" --generate-only  # the 6144×4096 photos, made once, outside the recordings

# The timeline's columns that tell the story, in MiB, with the warnings as markers.
summarize() {
  awk -F, '{ sub(/\r$/, "") }  # the CSV ends its lines with CR LF
           NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
                     printf "%8s %12s %14s %10s  %s\n", "time_s", "malloc MiB", "backing MiB", "RSS MiB", "marker"; next }
           { printf "%8.2f %12.1f %14.1f %10.1f  %s\n", $col["time_s"], $col["live_bytes"] / 1048576,
               $col["backing_store_bytes"] / 1048576, $col["rss_bytes"] / 1048576, $col["marker"] }' "$1"
}

for mode in leaky fixed; do
  trace="$out/heapline-slideshow-$mode.trace"
  echo "=== heapline record --warn-at 2 -- slideshow --$mode"
  "$bin/heapline" record -o "$trace" --warn-at 2 -- "$bin/slideshow" "--$mode"
  echo "=== heapline report (top 3 stacks)"
  "$bin/heapline" report "$trace" --top 3
  echo "=== heapline timeline, every 250 ms"
  "$bin/heapline" timeline "$trace" --interval 250 --categories 3 -o "$trace.csv"
  summarize "$trace.csv"
  "$bin/heapline" view "$trace" -o "$out/heapline-slideshow-$mode.html"
done
echo "=== the pages of both runs, to open in any browser:"
for mode in leaky fixed; do echo "  $out/heapline-slideshow-$mode.html"; done
