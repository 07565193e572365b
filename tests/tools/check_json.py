#!/usr/bin/env python3
"""Validates cuwarden-audit --json documents against tests/tools/audit.schema.json.

Usage: check_json.py SCHEMA DOC... ; exit 0 valid, 1 invalid, 77 when the
jsonschema module is missing (apt-get install python3-jsonschema).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(77)

schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
bad = 0
for path in sys.argv[2:]:
    doc = json.load(open(path))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:20]:
        print("%s: %s: %s" % (path, "/".join(str(p) for p in e.path) or "(root)", e.message))
    bad += bool(errors)
sys.exit(1 if bad else 0)
