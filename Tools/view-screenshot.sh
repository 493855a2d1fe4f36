#!/usr/bin/env bash
# The README's picture of `heapline view`: the page of the slideshow demo's leaky run, which
# Tools/demo.sh writes (run first when the page is missing), rendered by headless Chromium.
#   bash Tools/view-screenshot.sh [OUTPUT.png]   (default docs/heapline-view.png)
set -euo pipefail
cd "$(dirname "$0")/.."
page="${TMPDIR:-/tmp}/heapline-slideshow-leaky.html"
[ -f "$page" ] || bash Tools/demo.sh >/dev/null
png="$(realpath -m "${1:-docs/heapline-view.png}")"
mkdir -p "$(dirname "$png")"
# A window as wide as a laptop's, tall enough for the summary, the timeline, the categories and
# the top of the call tree. The deadline keeps a wedged browser from hanging the script.
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1200,1250 --screenshot="$png" "file://$page" 2>/dev/null
echo "wrote $png ($(stat -c %s "$png") bytes)"
