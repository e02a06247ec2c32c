"""Benchmark: redaction throughput against same-run baselines, plus worst-case inputs.

Run: ``.venv/bin/python bench/bench_redaction.py``. It takes about 10-20 s on 2 vCPUs.
Times are process CPU time (``time.process_time``), so other jobs sharing the machine
distort them far less than wall-clock time would.

It builds about 5 MB of realistic mixed transcript text: prose, Python code, JSON tool
output, logs with hashes, documentation URLs, and a few secrets. It measures
:func:`redact_text` two ways: on the whole text as one string, and per row (about 2 KB
each; appends call it once per row, so call overhead counts). Both baselines are
measured in the same process: a plain copy (``str.encode``), and one ``re.search``
for a pattern that never matches (the cost of one C-speed pass over the text). The
ratios are what matter; absolute MB/s depend on the machine.

It also prints the row-level ratio of the reliability plan's B5 design: redact_value(row)
plus serialisation, against serialisation alone, on realistic non-user rows (orjson if
installed, else json).

The worst cases are the adversarial inputs of the task brief and the reliability plan
(R7). Each prints its time and µs per character, so a regression to super-linear
behaviour shows up as a jump.
"""

from __future__ import annotations

import base64
import random
import re
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transcripts.core.redaction import redact_text, redact_value

try:
    import orjson

    dumps: Callable[[object], bytes | str] = orjson.dumps
    DUMPS_NAME = "orjson.dumps"
except ImportError:  # the project has orjson; keep the script stdlib-runnable anyway
    import json

    dumps = json.dumps
    DUMPS_NAME = "json.dumps"

TARGET_BYTES = 5_000_000
ROW_BYTES = 2_000

WORDS_TEXT = (
    "the of and to in is that for it as was with be by on not this are or from at "
    "which but have an they you were there been one all we their has would when if so "
    "will more can what about out up them into do than some could time only new these "
    "two may first then any like now over such our even most made after also did many "
    "before must through back where much way well down should because each just those "
    "how too little state good very make world still own see work long get here between "
    "both life being under never day same another know while last might great old year "
    "off come since against go came right used take three migration transcript session "
    "summary rotation archive fold revision append durability websocket endpoint "
    "middleware serializer queryset repository deployment configuration environment"
)
WORDS = WORDS_TEXT.split()

CODE = '''def load_rows(path: Path, *, since: str | None = None) -> list[dict[str, Any]]:
    """Read the JSONL transcript, skipping torn lines."""
    rows: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for line_number, line in enumerate(handle, start=1):
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                logger.warning("skipping unparsable line %d in %s", line_number, path)
                continue
            if since is None or transcript_sort_key(row.get("ts")) > since_key:
                rows.append(row)
    return rows

'''

TOOL_JSON = (
    '{"id": "m-%016x", "role": "tool", "ts": "2025-03-%02dT12:%02d:%02d.123456+00:00", '
    '"content": "exit_code=0 stdout=\'collected 42 items, 42 passed in 3.21s\'", '
    '"meta": {"tool": "bash", "duration_ms": %d, "cwd": "/work/main"}}\n'
)

LOG = "commit %040x\nAuthor: Dev <dev@example.com>\nDate:   Mon Mar 3 12:00:00 2025\n\n    Fix rotation race (see https://github.com/example/project/pull/%d)\n\n"

URLS = (
    "https://docs.python.org/3/library/re.html#re.search",
    "https://docs.djangoproject.com/en/5.2/topics/http/middleware/",
    "https://github.com/django/channels/issues/1234",
    "https://example.com/search?q=redaction+benchmark&page=2",
)


def _secrets(rng: random.Random) -> list[str]:
    alnum = string.ascii_letters + string.digits
    rand = lambda n: "".join(rng.choice(alnum) for _ in range(n))  # noqa: E731
    return [
        "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16)),
        "ghp_" + rand(36),
        'aws_secret_access_key = "' + rand(40) + '"',
        "postgres://app:" + rand(16) + "@db.internal:5432/app",
        "https://evil.example.net/collect?d=" + rand(60),
        "sk-proj-" + rand(48),
    ]


def build_corpus(seed: int = 7) -> str:
    rng = random.Random(seed)
    secrets = _secrets(rng)
    parts: list[str] = []
    size = 0
    while size < TARGET_BYTES:
        r = rng.random()
        if r < 0.55:
            s = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40))) + ". "
            if rng.random() < 0.15:
                s += f"See {rng.choice(URLS)} for details. "
        elif r < 0.75:
            s = CODE
        elif r < 0.9:
            s = TOOL_JSON % (
                rng.getrandbits(64),
                rng.randint(1, 28),
                rng.randint(0, 59),
                rng.randint(0, 59),
                rng.randint(1, 9999),
            )
        elif r < 0.9995:
            s = LOG % (rng.getrandbits(160), rng.randint(1, 99999))
        else:
            s = f"oops, leaked {rng.choice(secrets)} in the log\n"
        parts.append(s)
        size += len(s)
    return "".join(parts)


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    corpus = build_corpus()
    mb = len(corpus) / 1e6
    rows = [corpus[i : i + ROW_BYTES] for i in range(0, len(corpus), ROW_BYTES)]
    never = re.compile(r"\x00\x01never")

    t_copy = best_of(lambda: corpus.encode())
    t_search = best_of(lambda: never.search(corpus))
    t_whole = best_of(lambda: redact_text(corpus), repeat=2)
    t_rows = best_of(lambda: [redact_text(r) for r in rows], repeat=2)
    _, report = redact_text(corpus)

    print(f"corpus: {mb:.2f} MB, {len(rows)} rows of ~{ROW_BYTES} B")
    print(f"  baseline str.encode copy      {mb / t_copy:9.1f} MB/s")
    print(f"  baseline re.search (no match) {mb / t_search:9.1f} MB/s")
    print(f"  redact_text whole string      {mb / t_whole:9.1f} MB/s")
    print(f"  redact_text per row           {mb / t_rows:9.1f} MB/s")
    print(f"  ratio redact(rows) / re.search: {t_rows / t_search:6.1f}x slower")
    print(f"  ratio redact(rows) / copy     : {t_rows / t_copy:6.1f}x slower")
    print(f"  redactions: {sum(report.values())} {dict(sorted(report.items()))}")

    row_dicts = [
        {"role": "assistant", "content": r, "ts": "2025-03-01T12:00:00+00:00", "meta": {"n": i}}
        for i, r in enumerate(rows)
    ]
    t_dump = best_of(lambda: [dumps(r) for r in row_dicts])
    t_both = best_of(lambda: [dumps(redact_value(r)[0]) for r in row_dicts], repeat=2)
    print(
        f"  B5 rows: redact_value+{DUMPS_NAME} vs {DUMPS_NAME}: {t_both / t_dump:6.1f}x"
        f" ({mb / t_both:.1f} vs {mb / t_dump:.1f} MB/s)"
    )

    prose = " ".join(random.Random(1).choice(WORDS) for _ in range(900_000))[:TARGET_BYTES]
    t_prose = best_of(lambda: redact_text(prose))
    print(f"  plain prose (fast path)       {len(prose) / 1e6 / t_prose:9.1f} MB/s")

    print("worst cases (1 MB class inputs):")
    rng = random.Random(3)
    b64_alpha = string.ascii_letters + string.digits + "+/"
    adversarial: dict[str, str] = {
        "1 MB of 'A'": "A" * 1_000_000,
        "1 MB random base64": "".join(rng.choice(b64_alpha) for _ in range(1_000_000)),
        "1 MB base64 of prose": base64.b64encode(prose[:750_000].encode()).decode(),
        "URL with 10k %41": "https://evil.example.com/?q=" + "%41" * 10_000,
        "URL with 10k %2541": "https://evil.example.com/?q=" + "%2541" * 10_000,
        "nested eyJ run (1 MB)": "eyJ" * 333_333,
        "eyJa. chain (1 MB)": "eyJa." * 200_000,
        "1 MB digits": "7" * 1_000_000,
        "PEM headers, no END (1 MB)": "-----BEGIN RSA PRIVATE KEY-----\n" * 31_000,
        "http:// repeated (1 MB)": "http://" * 140_000,
        "redis://a: repeated (1 MB)": "redis://a:" * 100_000,
        "kv keys repeated (1 MB)": "aws_secret_access_key " * 45_000,
        "bearer + 1 MB spaces": "Authorization: Bearer" + " " * 1_000_000,
        "S3 presigned chain (400 KB)": "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE/" * 10_000,
        "pass-3 slide, no window passes (1 MB)": ("aeiouAEIOU0123456789bcdBCD+/" * 36_000)[
            :1_000_000
        ],
        "long token runs, no secret (1 MB)": ("abcdefghijklmnopqrstuvwx_" * 40_000),
    }
    for name, text in adversarial.items():
        t0 = time.process_time()
        _, rep = redact_text(text)
        dt = time.process_time() - t0
        print(
            f"  {name:40s} {dt * 1000:9.1f} ms  {dt * 1e6 / len(text):6.3f} µs/char"
            f"  {sum(rep.values())} redactions"
        )

    coverage_worst_cases(mb / t_search)


def coverage_adversarial() -> dict[str, str]:
    """About 1 MB each, aimed at the coverage rules (vendors, headers, assignments, URIs).

    Each one makes a rule try, and mostly reject, a match at as many places as possible:
    keys whose values are rejected, unterminated quotes, cookie lists without a session
    id, Basic headers that do not decode, schemes without userinfo, validated shapes
    that fail validation, unanchored hex shapes.
    """
    n = 1_000_000
    return {
        "password= repeated, empty values": ("password=" * (n // 9))[:n],
        "secret: keys, rejected at '('": "secret:" * (n // 7) + "(",
        "api_key= one 1 MB value + '('": "api_key=" + "a" * n + "(",
        "token = a.b dotted names": ("token = tok.en " * (n // 15))[:n],
        'password=" unterminated quotes': ('password="' * (n // 10))[:n],
        "PASSWORD='$x' templates": ("PASSWORD='$x' " * (n // 14))[:n],
        "Cookie: a=b; long list, no id": "Cookie: " + "a=b; " * (n // 5),
        "cookie:cookie: repeated": ("cookie:" * (n // 7))[:n],
        "Set-Cookie: a=b; repeated": ("Set-Cookie: a=b; " * (n // 17))[:n],
        "Authorization: Basic + 1 MB 'A'": "Authorization: Basic " + "A" * n,
        "authorization: basic AAAA repeated": ("authorization: basic AAAA " * (n // 26))[:n],
        "x://a:b@ repeated (all rejected)": ("x://a:b@" * (n // 8))[:n],
        "x://a:pw1@ repeated (all redacted)": ("x://a:pw1@" * (n // 10))[:n],
        "://a: repeated, no '@'": ("://a:" * (n // 5))[:n],
        "1 MB scheme chars + ://u:pw1@h": "a" * n + "://u:pw1@h",
        "1 MB '-' + ://u:pw1@h (no letter)": "-" * n + "://u:pw1@h",
        "Discord shape, bad user id": (
            "MyVeryLongClassNameHereX.fields.get_default_field_names_for_model " * (n // 66)
        ),
        "Azure Q~ fragments": ("abc1Q~" * (n // 6))[:n],
        "PGP headers, no END": "-----BEGIN PGP PRIVATE KEY BLOCK-----\n" * (n // 38),
        "EyJ repeated": ("EyJ" * (n // 3))[:n],
        "hex-32 + '-' repeated (Mailgun shape)": (("0123456789abcdef" * 2 + "-") * (n // 33))[:n],
        "1 MB lowercase hex": ("0123456789abcdef" * (n // 16))[:n],
        "eyJrIjoi repeated (Grafana)": ("eyJrIjoi" * (n // 8))[:n],
        "EAAC + 99 alnum, repeated": (("EAAC" + "a" * 99 + " ") * (n // 104))[:n],
        "Ghp_ + 29 alnum, repeated": (("Ghp_" + "a" * 29 + " ") * (n // 34))[:n],
    }


def coverage_worst_cases(baseline_mb_s: float) -> None:
    """Throughput of each coverage input, and its ratio to the re.search baseline.

    Linear time shows as a ratio that stays flat when the input grows: the second
    column repeats each input at a quarter of its size, and the two MB/s figures should
    be close (a quadratic rule would be about 4x faster on the quarter).
    """
    print(f"coverage rules, adversarial inputs (baseline re.search {baseline_mb_s:.1f} MB/s):")
    for name, text in coverage_adversarial().items():
        rates = []
        found = 0
        for part in (text, text[: len(text) // 4]):
            t0 = time.process_time()
            _, rep = redact_text(part)
            dt = max(time.process_time() - t0, 1e-6)
            rates.append(len(part) / 1e6 / dt)
            found = found or sum(rep.values())
        print(
            f"  {name:40s} {rates[0]:8.1f} MB/s (quarter: {rates[1]:8.1f})"
            f"  {baseline_mb_s / rates[0]:7.1f}x baseline  {found} redactions"
        )


if __name__ == "__main__":
    main()
