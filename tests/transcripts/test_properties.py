"""Property tests: the fold against a reference model, reader totality, a stateful store model."""

from __future__ import annotations

import io
import itertools
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.transcripts.helpers import (
    KEY,
    SKIP_KINDS,
    FakeClock,
    fold_data,
    line,
    meta_line,
    parsed,
    revision,
    row,
    ts_at,
)
from transcripts.core.errors import RowNotFound, SessionNotFound
from transcripts.core.fold import fold_bytes
from transcripts.core.reader import RawLine, iter_lines
from transcripts.core.store import TranscriptStore

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=6)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)
patch_keys = st.sampled_from(["content", "meta", "cls", "x", "role", "ts", "_type"])


# ---------------------------------------------------------------- (1) fold vs a reference model


@st.composite
def transcripts_with_revisions(draw: st.DrawFn) -> tuple[bytes, list[dict[str, Any]]]:
    """A transcript of rows and revisions (moves included) plus the fold a model expects."""
    events = draw(st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=30))
    data = meta_line()
    rows: list[dict[str, Any]] = []  # physical order, patched in place
    index_of: dict[str, int] = {}
    moves: list[tuple[int, str]] = []
    for n, (is_row, choice) in enumerate(events):
        ts = ts_at(n + 1)
        if is_row or not rows:
            record = row(draw(st.sampled_from(["user", "assistant"])), draw(json_values), ts)
            data += line(record)
            index_of[ts] = len(rows)
            rows.append(record)
            continue
        orphan = choice % 7 == 0
        target = ts_at(10**7) if orphan else rows[choice % len(rows)]["ts"]
        patch = draw(st.dictionaries(patch_keys, json_values, max_size=4))
        hint: str | None = None
        if choice % 3 == 0:  # a position hint: "" (front), an earlier row, or unknown
            anchors = ["", ts_at(10**7 + 1), *index_of]
            hint = patch["_after_ts"] = anchors[draw(st.integers(0, len(anchors) - 1))]
        data += line(revision(target, patch, ts))
        if orphan:
            continue
        applied = {k: v for k, v in patch.items() if k not in ("ts", "_type", "_after_ts")}
        index = index_of[target]
        rows[index] = {**rows[index], **applied}
        if hint is not None and (hint == "" or hint in index_of):
            moves.append((index, hint))
    order = list(range(len(rows)))
    for index, anchor in moves:
        if anchor != "" and index_of[anchor] == index:
            continue
        order.remove(index)
        order.insert(0 if anchor == "" else order.index(index_of[anchor]) + 1, index)
    return data, [rows[i] for i in order]


@FAST
@given(transcripts_with_revisions())
def test_fold_equals_a_shallow_merge_last_wins_model(case: tuple[bytes, list[Any]]) -> None:
    data, expected = case
    folded = fold_bytes(data)
    assert folded.rows == expected
    assert all("_type" not in r for r in folded.rows)  # ts and _type never patched
    assert not {a.kind for a in folded.report.anomalies} & SKIP_KINDS


@FAST
@given(st.lists(st.tuples(st.text(max_size=5), json_values), max_size=10))
def test_a_file_without_revisions_folds_to_its_rows(contents: list[tuple[str, Any]]) -> None:
    rows = [row("user", c, ts_at(i), extra=v) for i, (c, v) in enumerate(contents)]
    data = meta_line() + b"".join(line(r) for r in rows)
    folded = fold_bytes(data)
    assert folded.rows == rows
    assert folded.report.anomalies == []


# ---------------------------------------------------------------- (2) reader totality


def _naive_lines(data: bytes, max_line: int) -> list[RawLine]:
    """iter_lines, specified the slow and obvious way."""
    parts = data.split(b"\n")
    last = parts.pop()
    out, offset = [], 0
    for part in parts:
        out.append(RawLine(offset, None if len(part) > max_line else part, True))
        offset += len(part) + 1
    if last:
        out.append(RawLine(offset, None if len(last) > max_line else last, False))
    return out


def _check_accounting(data: bytes, **kwargs: Any) -> None:
    folded = fold_data(data, **kwargs)  # never raises on content
    total = len(_naive_lines(data, kwargs.get("max_line", 1 << 30)))
    skipped = sum(1 for a in folded.report.anomalies if a.kind in SKIP_KINDS)
    heads = (folded.metadata is not None) + (folded.header is not None)
    assert folded.report.lines == total
    assert len(folded.rows) + folded.report.revisions + skipped + heads == total
    starts = {ln.offset for ln in _naive_lines(data, 1 << 30)}
    assert all(a.offset in starts for a in folded.report.anomalies)


@FAST
@given(st.binary(max_size=2048), st.integers(1, 64), st.integers(1, 4096))
def test_reader_never_raises_on_arbitrary_bytes(data: bytes, max_line: int, block: int) -> None:
    assert list(iter_lines(io.BytesIO(data), max_line=max_line, block_size=block)) == (
        _naive_lines(data, max_line)
    )
    _check_accounting(data)
    _check_accounting(data, max_line=max_line, block_size=block)


def _valid_row(i: int) -> st.SearchStrategy[bytes]:
    return st.builds(lambda c: line(row("user", c, ts_at(i)))[:-1], st.text(max_size=20))


valid_rows = st.integers(0, 50).flatmap(_valid_row)
valid_revisions = st.builds(
    lambda t, p, i: line(revision(ts_at(t), p, ts_at(i)))[:-1],
    st.integers(0, 50),
    st.dictionaries(patch_keys, json_values, max_size=3),
    st.integers(0, 50),
)
torn_rows = st.builds(lambda b, f: b[: max(1, int(len(b) * f))], valid_rows, st.floats(0, 0.99))
odd_lines = st.sampled_from(
    [
        b"",
        b"   ",
        b"\r",
        b"[1,2]",
        b"null",
        b'{"x":NaN}',
        b"[" * 5000,
        b"\xef\xbb\xbf{}",
        b'{"_type":"metadata"}',
        b'{"_type":"archive"}',
        b'{"_type":"weird"}',
        b'{"content":"\\ud800"}',
        b"\x00" * 100,
    ]
)
grammar_lines = st.lists(
    st.one_of(valid_rows, valid_revisions, torn_rows, odd_lines, st.binary(max_size=64)),
    max_size=25,
)


@FAST
@given(
    grammar_lines,
    st.booleans(),
    st.booleans(),
    st.sampled_from([1 << 20, 40, 200]),
    st.sampled_from([4096, 7, 64]),
)
def test_reader_never_raises_on_a_grammar_of_valid_and_invalid_lines(
    lines: list[bytes], with_meta: bool, trailing: bool, max_line: int, block: int
) -> None:
    data = (meta_line() if with_meta else b"") + b"\n".join(lines) + (b"\n" if trailing else b"")
    _check_accounting(data, max_line=max_line, block_size=block)
    plain = fold_bytes(data)
    assert plain.rows == fold_data(data, block_size=block).rows


# ---------------------------------------------------------------- (3) a stateful model of the store

texts = st.text(alphabet="ab é\n\u2028😀", max_size=12)
metas = st.none() | st.dictionaries(
    st.sampled_from(["k", "mid"]), st.integers(0, 9) | st.text("xy", max_size=3), max_size=2
)
patches = st.dictionaries(st.sampled_from(["cls", "meta", "x", "content"]), texts, min_size=1)
FRAGMENT_KINDS = {"torn_tail", "bad_json", "bad_utf8"}


class StoreMachine(RuleBasedStateMachine):
    """A real TranscriptStore with tiny rotation limits against an in-memory list of rows."""

    @initialize()
    def setup(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="store-machine-"))
        self.clock = FakeClock(step=timedelta(milliseconds=1))
        self.store = TranscriptStore(
            self.root, fsync="never", max_bytes=1500, keep_lines=3, clock=self.clock
        )
        self.model: list[dict[str, Any]] = []
        self.exists = False
        self.title: str | None = None
        self.gen = 0

    def teardown(self) -> None:
        if hasattr(self, "root"):
            shutil.rmtree(self.root, ignore_errors=True)

    # ---- helpers
    def _archives(self) -> int:
        return len(list(self.store.archive_dir.glob("*.jsonl"))) if self.exists else 0

    def _rotated_at(self) -> Any:
        return (self.store.read_metadata(KEY) or {}).get("rotated_at") if self.exists else None

    def _file_rows(self) -> int:
        return len(self.store.read_file(KEY).rows)

    def _check_rotated(self) -> None:
        """After an append the file is within max_bytes, unless one row alone is larger."""
        assert self.store.path(KEY).stat().st_size <= 1500 or self._file_rows() <= 1

    # ---- rules
    @rule(role=st.sampled_from(["user", "assistant", "system", "tool"]), text=texts, meta=metas)
    def append(self, role: str, text: str, meta: dict[str, Any] | None) -> None:
        rotated, sig = self._rotated_at(), self.store.sig(KEY)
        result = self.store.append_row(KEY, role, text, meta=meta)
        self.exists = True
        self.model.append(row(role, text, result.ts[0], **({} if meta is None else {"meta": meta})))
        # An append rotates at most once; a rotation that only folds revisions drops
        # nothing (no archive) but still advances gen.
        self.gen += self._rotated_at() != rotated
        assert sig is None or result.identity.sig > sig
        self._check_rotated()

    @precondition(lambda self: self.exists and self.model)
    @rule(choice=st.integers(0, 10**6), patch=patches)
    def revise(self, choice: int, patch: dict[str, Any]) -> None:
        in_file = self._file_rows()
        assume(in_file > 0)
        index = len(self.model) - in_file + choice % in_file
        rotated, sig = self._rotated_at(), self.store.sig(KEY)
        result = self.store.append_revision(KEY, self.model[index]["ts"], patch)
        self.model[index] = {**self.model[index], **patch}
        self.gen += self._rotated_at() != rotated
        assert sig is not None
        assert result.identity.sig > sig
        self._check_rotated()

    @precondition(lambda self: self.exists and self.model)
    @rule()
    def revise_an_archived_row(self) -> None:
        assume(len(self.model) > self._file_rows())
        before = self.store.path(KEY).read_bytes()
        try:
            self.store.append_revision(KEY, self.model[0]["ts"], {"cls": "x"})
        except RowNotFound:
            pass
        else:
            raise AssertionError("a revision of an archived row was accepted")
        assert self.store.path(KEY).read_bytes() == before

    @precondition(lambda self: self.exists)
    @rule(title=texts)
    def set_title(self, title: str) -> None:
        before = self.store.identity(KEY)
        assert self.store.update_metadata(KEY, {"title": title})
        self.title = title
        after = self.store.identity(KEY)
        assert before is not None
        assert after is not None
        assert (after.sig, after.gen) == (before.sig, before.gen)

    @precondition(lambda self: self.exists and self.model)
    @rule(choice=st.integers(0, 10**6))
    def rewind(self, choice: int) -> None:
        in_file = self._file_rows()
        assume(in_file > 0)
        index = len(self.model) - in_file + choice % in_file
        archives = self._archives()
        dropped = self.store.rewind(KEY, self.model[index]["ts"])
        assert dropped == len(self.model) - index - 1
        del self.model[index + 1 :]
        self.gen += self._archives() - archives

    @precondition(lambda self: self.exists)
    @rule(force=st.booleans())
    def rotate(self, force: bool) -> None:
        archives = self._archives()
        self.store.rotate(KEY, force=force)
        self.gen += 1 if force else self._archives() - archives

    @precondition(lambda self: self.exists)
    @rule(text=texts, fraction=st.floats(0, 1))
    def tear(self, text: str, fraction: float) -> None:
        """A writer killed mid-write: part of a record (never a whole one) reaches the disk."""
        record = line(row("assistant", text, ts_at(0)))
        cut = 1 + int((len(record) - 3) * fraction)  # never the closing brace
        path = self.store.path(KEY)
        fence = b"" if path.read_bytes().endswith(b"\n") else b"\n"
        with path.open("ab") as fp:
            fp.write(fence + record[:cut])

    @precondition(lambda self: self.exists)
    @rule()
    def delete(self) -> None:
        assert self.store.delete(KEY) is True
        self.model, self.exists, self.title, self.gen = [], False, None, 0

    @rule(seconds=st.integers(1, 3600))
    def clock_steps_back(self, seconds: int) -> None:
        self.clock.shift(-timedelta(seconds=seconds))

    # ---- invariants
    @invariant()
    def session_matches_the_model(self) -> None:
        if not hasattr(self, "store"):
            return
        if not self.exists:
            assert not self.store.exists(KEY)
            try:
                self.store.read_session(KEY)
            except SessionNotFound:
                return
            raise AssertionError("a deleted session is still readable")
        view = self.store.read_session(KEY)
        assert view.rows == self.model
        assert {a.kind for a in view.report.anomalies} <= FRAGMENT_KINDS
        stamps = [parsed(r["ts"]) for r in view.rows]
        assert all(b > a for a, b in itertools.pairwise(stamps))
        assert view.metadata is not None
        assert view.metadata.get("title") == self.title
        identity = self.store.identity(KEY)
        assert identity is not None
        assert identity.gen == self.gen

    @invariant()
    def file_order_ts_strictly_increase(self) -> None:
        if not getattr(self, "exists", False):
            return
        stamps = []
        for part in self.store.path(KEY).read_bytes().split(b"\n")[1:]:
            try:
                obj = orjson.loads(part)
            except orjson.JSONDecodeError:
                continue  # a torn fragment
            stamps.append(parsed(obj["ts"]))
        assert all(b > a for a, b in itertools.pairwise(stamps))


def test_store_matches_the_model_under_random_operations() -> None:
    run_state_machine_as_test(
        StoreMachine,
        settings=settings(
            max_examples=100,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
