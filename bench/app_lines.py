"""Lines of app code (kirocrew_site, summaries, transcripts; migrations excluded), split
into code, docstrings, comments and blank lines, now against a git revision.

    .venv/bin/python bench/app_lines.py [--base REV] [--by-dir]

REV defaults to b6e6480, the commit at which the "one path per concept" issue counted
23,920 lines in 187 modules. Prints both counts and their ratio.
"""

from __future__ import annotations

import argparse
import ast
import collections
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("kirocrew_site", "summaries", "transcripts")
KINDS = ("code", "doc", "comment", "blank")


def _kinds(source: str) -> collections.Counter[str]:
    lines = source.splitlines()
    kind = [
        "blank" if not s.strip() else "comment" if s.strip().startswith("#") else "code"
        for s in lines
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                for i in range(first.lineno - 1, first.end_lineno or first.lineno):
                    kind[i] = "doc"
    return collections.Counter(kind)


def _files(rev: str | None) -> dict[str, str]:
    if rev is None:
        paths = [p for app in APPS for p in (ROOT / app).rglob("*.py")]
        return {
            str(p.relative_to(ROOT)): p.read_text() for p in paths if "migrations" not in p.parts
        }
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "--", *APPS],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {
        n: subprocess.run(
            ["git", "show", f"{rev}:{n}"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
        for n in names
        if n.endswith(".py") and "/migrations/" not in n
    }


def _count(files: dict[str, str], by_dir: bool) -> tuple[collections.Counter[str], dict[str, int]]:
    total: collections.Counter[str] = collections.Counter()
    dirs: dict[str, int] = collections.defaultdict(int)
    for name, text in files.items():
        c = _kinds(text)
        total += c
        if by_dir:
            dirs[str(Path(name).parent)] += sum(c.values())
    return total, dirs


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="b6e6480")
    parser.add_argument("--by-dir", action="store_true")
    args = parser.parse_args(argv)
    base_files, now_files = _files(args.base), _files(None)
    base, _ = _count(base_files, False)
    now, dirs = _count(now_files, args.by_dir)
    for label, files, c in ((args.base, base_files, base), ("now", now_files, now)):
        split = ", ".join(f"{k} {c[k]:,}" for k in KINDS)
        print(f"{label:>8}: {sum(c.values()):,} lines in {len(files)} modules ({split})")
    print(
        f"   ratio: {sum(now.values()) / sum(base.values()):.3f}x, change {sum(now.values()) - sum(base.values()):+,}"
    )
    for d, n in sorted(dirs.items(), key=lambda kv: -kv[1]):
        print(f"{n:7,}  {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
