#!/usr/bin/env python3
"""Validates scenario files against the schema printed by `rcsim schema`, with a real JSON Schema
validator (python3-jsonschema, draft 2020-12).

usage: schema_check.py SCHEMA (valid|invalid) FILE...
Exit 0 if every FILE is valid (or, with `invalid`, if every FILE is refused); 1 otherwise, naming the
files that did not meet the expectation; 77 if jsonschema (or PyYAML, for .yaml files) is missing.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("schema_check: python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(77)


def load(path):
    with open(path, encoding="utf-8") as f:
        if path.endswith((".yaml", ".yml")):
            try:
                import yaml
            except ImportError:
                print("schema_check: PyYAML is not installed", file=sys.stderr)
                sys.exit(77)
            return yaml.safe_load(f)
        return json.load(f)


def main():
    schema_path, expect, *files = sys.argv[1:]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    wrong = 0
    for path in files:
        errors = list(validator.iter_errors(load(path)))
        valid = not errors
        if valid != (expect == "valid"):
            wrong += 1
            detail = "; ".join(f"/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:3])
            print(f"{path}: expected {expect}, got {'valid' if valid else 'invalid: ' + detail}")
    print(f"{len(files) - wrong} of {len(files)} files {expect} as expected")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
