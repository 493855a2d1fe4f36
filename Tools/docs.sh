#!/usr/bin/env bash
# Builds the DocC documentation of Heapline's library modules as a static site, one directory
# per module, with an index page that links them:
#   bash Tools/docs.sh [OUTPUT]         (default .build/docs-site)
#   python3 -m http.server -d .build/docs-site 8000    then open http://localhost:8000/
# A DocC warning (a broken link, an undocumented parameter) fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.build/docs-site}"
modules=(Heapline HeaplineTesting HeaplineAnalysis HeaplineTrace HeaplineImaging)
rm -rf "$out"
mkdir -p "$out"
for module in "${modules[@]}"; do
  # Each module is served from /<Module>/, so its pages say so.
  swift package --allow-writing-to-directory "$out" generate-documentation \
    --target "$module" --disable-indexing --transform-for-static-hosting \
    --hosting-base-path "$module" --output-path "$out/$module" --warnings-as-errors
done
lower() { tr '[:upper:]' '[:lower:]' <<<"$1"; }
{
  echo '<!doctype html><meta charset="utf-8"><title>Heapline documentation</title>'
  echo '<h1>Heapline documentation</h1><ul>'
  for module in "${modules[@]}"; do
    echo "<li><a href=\"$module/documentation/$(lower "$module")/\">$module</a></li>"
  done
  echo '</ul>'
} >"$out/index.html"
echo "the documentation site is in $out ($out/index.html)"
