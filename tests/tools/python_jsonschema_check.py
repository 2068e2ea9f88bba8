#!/usr/bin/env python3
"""Runs every message fixture through Python's `jsonschema` (Draft 2020-12) with the bundled schema.

A third, independent standard validator for the bundled schema (the conformance test runs the `jsonschema`
crate and ajv strict). Line-level framing rules come first, as in every checker (README, *Framing*): JSON syntax
as RFC 8259 has it (Python's `json` also takes `NaN` and `Infinity`), a key repeated in one object, an unpaired
surrogate escape, a number beyond the double range, nesting deeper than 127 levels. Needs `pip install jsonschema`; exits 1 on any disagreement with a fixture's verdict.

usage: python3 tests/tools/python_jsonschema_check.py
"""
import glob
import json
import os
import sys
from importlib.metadata import version

from jsonschema import Draft202012Validator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def depth(v):
    best, stack = 0, [(v, 0)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (dict, list)):
            best = max(best, d + 1)
            stack.extend((c, d + 1) for c in (x.values() if isinstance(x, dict) else x))
    return best


class Malformed(ValueError):
    pass


def no_repeated_key(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise Malformed(f"the key {k!r} is repeated")
        seen.add(k)
    return dict(pairs)


def finite(text):
    x = float(text)
    if x in (float("inf"), float("-inf")):
        raise Malformed("a number beyond the range of a double")
    return x


def integer(text):
    n = int(text)
    if abs(n) > 1.7976931348623157e308:
        raise Malformed("a number beyond the range of a double")
    return n


def not_json(name):
    raise Malformed(f"{name} is not JSON")


def unpaired_surrogate(v):
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


def read_line(raw):
    """The value of a JSONL line, as the line framing reads it (`Malformed` where it refuses the line)."""
    v = json.loads(raw, object_pairs_hook=no_repeated_key, parse_float=finite, parse_int=integer, parse_constant=not_json)
    if unpaired_surrogate(v):
        raise Malformed("an unpaired surrogate escape")
    return v


def main():
    schema = json.load(open(os.path.join(ROOT, "generated/schema/session-protocol.schema.json")))
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    counts = {"valid": 0, "invalid": 0, "skipped": 0}
    mismatches = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/messages/*.json"))):
        fx = json.load(open(path))
        if fx.get("strictIds"):
            counts["skipped"] += 1
            continue
        try:
            msg = read_line(fx["raw"]) if "raw" in fx else fx["message"]
            ok = depth(msg) <= 127 and not any(True for _ in validator.iter_errors(msg))
        except (json.JSONDecodeError, Malformed):
            ok = False
        counts["valid" if ok else "invalid"] += 1
        if ok != fx["valid"]:
            mismatches.append(os.path.basename(path))
    print(f"python jsonschema {version('jsonschema')}: {counts['valid']} valid, {counts['invalid']} invalid, "
          f"{counts['skipped']} skipped (strict ids), {len(mismatches)} disagreements")
    for m in mismatches:
        print("  disagrees:", m)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
