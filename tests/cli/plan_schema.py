#!/usr/bin/env python3
"""Runs a trinity plan --json command and validates its output against docs/plan.schema.json.

    plan_schema.py SCHEMA TRINITY ARGS...

Exits 0 and prints "valid: <workload kind>" when the plan matches; prints the first violation and exits 1
otherwise. The validator is python3-jsonschema's (Debian's package), Draft 2020-12."""
import json
import subprocess
import sys

import jsonschema


def main():
    schema_path, command = sys.argv[1], sys.argv[2:]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(f"the command failed ({out.returncode}): {out.stderr}")
        return 1
    plan = json.loads(out.stdout)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(plan), key=lambda e: list(e.path))
    if errors:
        for e in errors[:5]:
            print(f"invalid at {'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
        return 1
    kinds = [k for k in plan if k not in schema["required"]]
    print(f"valid: {kinds[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
