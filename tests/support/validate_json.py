#!/usr/bin/python3
"""Validates a JSON document against a JSON Schema with Debian's python3-jsonschema (the draft the schema names).

Usage: tests/support/validate_json.py SCHEMA INSTANCE
Prints one line per violation ("path: message") and exits 1 when there is any, 0 when the document is valid, 2 when
either file cannot be read or the schema itself is not a valid schema."""
import json
import sys

import jsonschema


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            schema = json.load(f)
        with open(argv[2], encoding="utf-8") as f:
            instance = json.load(f)
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
    except (OSError, ValueError, jsonschema.exceptions.SchemaError) as e:
        print(f"cannot validate: {e}", file=sys.stderr)
        return 2
    validator = validator_class(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    for e in errors:
        path = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
        print(f"{path}: {e.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
