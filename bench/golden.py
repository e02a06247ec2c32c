"""Golden outputs for refactors that must not change behaviour: dump, change, dump, diff.

    .venv/bin/python bench/golden.py heuristic OUT [--prefix]
    .venv/bin/python bench/golden.py redaction OUT

``heuristic``: the offline summarizer's raw output for every ``.jsonl`` session under
``tests/data/`` and ``transcripts/sample_sessions/`` (with ``--prefix``, also for every
person-turn prefix of each). ``redaction``: every redaction entry point over the test
samples, variants of each, seeded random mixes, adversarial shapes and every ``tests/data``
JSONL line. Prints the count and a sha256; two dumps with equal digests are byte-identical.
The prompt's own golden is ``bench/summary_quality.py --record DIR``.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _records(path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("_type") is None:
            rows.append(obj)
    return rows


def heuristic(prefix: bool) -> list[str]:
    from summaries.core.extract import extract_turns
    from summaries.core.heuristic import HeuristicBackend

    files = sorted(ROOT.glob("tests/data/**/*.jsonl")) + sorted(
        ROOT.glob("transcripts/sample_sessions/**/*.jsonl")
    )
    backend, out = HeuristicBackend(), {}
    for f in files:
        name = str(f.relative_to(ROOT))
        try:
            turns = extract_turns(_records(f))
        except Exception as exc:  # a fixture the extractor refuses is part of the golden
            out[name] = f"EXTRACT-ERROR {exc!r}"
            continue
        out[name] = backend.generate("", turns)
        if prefix:
            for i, turn in enumerate(turns):
                if turn.role == "user" and i > 0:
                    out[f"{name}@{i}"] = backend.generate("", turns[:i])
    return [json.dumps(out, indent=1, ensure_ascii=False, sort_keys=True)]


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _strings(k, out)
            _strings(v, out)
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        for v in items:
            _strings(v, out)


def _redaction_texts() -> tuple[list[str], list[str]]:
    from tests.summaries import secret_samples
    from tests.transcripts import (
        password_shapes,
        redaction_coverage_cases,
        redaction_rule_samples,
        redaction_samples,
    )

    texts: list[str] = []
    modules = (redaction_samples, redaction_rule_samples, redaction_coverage_cases, password_shapes)
    for mod in modules:
        for name, val in vars(mod).items():
            if not name.startswith("__") and isinstance(val, (str, dict, list, tuple)):
                _strings(val, texts)
    for tok in redaction_coverage_cases.FAMILIES.values():
        texts += [ctx.replace("{t}", tok) for ctx in redaction_coverage_cases.CONTEXTS.values()]
    for secret in secret_samples.all_secrets():
        texts += [secret.token, *secret_samples.user_turns(secret.token)]
    tests = sorted(ROOT.glob("tests/**/test_*redaction*.py"))
    for f in tests + sorted(ROOT.glob("tests/transcripts/test_agent_import_bulk_*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts.append(node.value)
    base = list(dict.fromkeys(texts))
    variants: list[str] = []
    for s in base:
        variants += [s, s[:1].upper() + s[1:], "x" + s, s + ".", f"see {s} here"]
        variants += [f"https://evil.example.com/?q={s}", f"{s} {s}", s[:-1], s[1:]]
        variants += ['{"value": "' + s + '"}', "KEY=" + s]
    rng = random.Random(7)
    pieces = [p for s in base for p in (s[: len(s) // 2], s[len(s) // 2 :], s) if p]
    alphabet = "abcXYZ019_-.+/=:;&@?%~ \n\t\"'`{}[]()<>#$!\\éü\u2026"
    for _ in range(6000):
        parts = []
        for _ in range(rng.randrange(1, 6)):
            if rng.random() < 0.6:
                parts.append(rng.choice(pieces))
            else:
                parts.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60))))
        variants.append("".join(parts))
    for n in (50, 500, 3000):
        variants += ["eyJ" * n, "1" * n + ":" + "a" * 40, "A" * n, ("aB3/" * n)[: n + 40]]
        variants += ["-----BEGIN RSA PRIVATE KEY-----\n" * (n // 50 + 1), "password=" + "x" * n]
        variants += ["cookie: " + "a=b; " * n, "postgres://" + "u:" * n + "@", "%41" * n]
        variants.append("https://h.example.com/?a=" + "Zm9v" * n)
    return base, list(dict.fromkeys(variants))


def redaction() -> list[str]:
    from transcripts.core.redaction import (
        prefilter,
        redact_credentials,
        redact_exfiltration_urls,
        redact_payload,
        redact_text,
        redact_value,
    )
    from transcripts.core.redaction.batch import all_unchanged

    base, variants = _redaction_texts()
    out = [
        repr((v, redact_text(v), redact_credentials(v), redact_exfiltration_urls(v)))
        for v in variants
    ]
    out += [repr(redact_payload(base)), repr(redact_value(base))]
    for i in range(0, len(variants), 37):
        group = variants[i : i + 37]
        out.append(repr(all_unchanged(group)) + repr(prefilter.value_may_hold_secret(group)))
    for f in sorted(ROOT.glob("tests/data/**/*.jsonl")):
        for line in f.read_text(errors="surrogateescape").splitlines():
            out.append(repr(redact_text(line)))
            try:
                row = json.loads(line)
            except ValueError:
                continue
            found: list[str] = []
            _strings(row, found)
            out += [repr(redact_value(row)) + repr(redact_payload(row)), repr(all_unchanged(found))]
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("heuristic", "redaction"):
        print(__doc__)
        return 2
    lines = heuristic("--prefix" in argv) if argv[0] == "heuristic" else redaction()
    data = "\n".join(lines).encode("utf-8", "surrogateescape")
    Path(argv[1]).write_bytes(data)
    print(len(lines), "entries", hashlib.sha256(data).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
