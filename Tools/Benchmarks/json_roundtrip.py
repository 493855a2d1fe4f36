# A Python interpreter workload for the tracer benchmark (run.sh): a JSON round trip of ROWS
# rows, run with PYTHONMALLOC=malloc so that every object is a malloc block the tracers see.
#
#   PYTHONMALLOC=malloc python3 json_roundtrip.py ROWS
#
# The shape of issue 10's measurement: with 150,000 rows, millions of small blocks made and
# freed, and about 2 M live at the peak (the rows, the JSON text and the decoded copy together).
import json
import sys

rows_wanted = int(sys.argv[1]) if len(sys.argv) > 1 else 150_000
rows = [
    {"id": i, "name": f"row {i}", "tags": ["a", str(i % 97)], "score": i * 0.5}
    for i in range(rows_wanted)
]
text = json.dumps(rows)
decoded = json.loads(text)
checksum = sum(row["id"] for row in decoded) + len(text)
print(f"{rows_wanted} rows, {len(text)} bytes of JSON, checksum {checksum}")
