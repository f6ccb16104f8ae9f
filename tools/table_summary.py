"""
Tool: table_summary
Description: Summarise a CSV table: its columns, row count, and the numeric
  range of each numeric column.
Tags: read

Input:
  csv (str): The table as CSV text, with a header row.
"""
import csv
import io
import json
import sys

# A script-style tool: arguments arrive as JSON on stdin, the result goes to stdout.
args = json.load(sys.stdin)
rows = list(csv.DictReader(io.StringIO(args["csv"])))
columns = list(rows[0].keys()) if rows else []
ranges = {}
for column in columns:
    try:
        values = [float(row[column]) for row in rows if row[column] not in ("", None)]
    except ValueError:
        continue
    if values:
        ranges[column] = {"min": min(values), "max": max(values)}
json.dump({"columns": columns, "rows": len(rows), "numeric_ranges": ranges}, sys.stdout)
