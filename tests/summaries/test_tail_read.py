"""``transcripts.core.storefiles.read_tail``: the last bytes of a chain of files, whole lines only."""

from __future__ import annotations

from pathlib import Path

from transcripts.core.storefiles import read_tail


def write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def test_the_window_holds_whole_lines_from_the_end_across_files(tmp_path):
    old = write(tmp_path / "a", [b"a%d" % i for i in range(10)])  # 3 bytes + newline each
    new = write(tmp_path / "b", [b"b%d" % i for i in range(3)])

    tails = read_tail([old, new], budget=12 + 6, max_line=100)

    assert [t.path for t in tails] == [old, new]
    assert tails[1].lines == [b"b0", b"b1", b"b2"]
    assert tails[1].start == 0  # the whole file was read
    # 9 bytes left for "a": "a7\na8\na9\n"; the first piece might be a cut line (the byte
    # before it is not read), so it is dropped.
    assert tails[0].lines == [b"a8", b"a9"]
    assert tails[0].start == old.stat().st_size - 6


def test_the_newest_file_is_read_up_to_the_snapshot_size_only(tmp_path):
    path = write(tmp_path / "c", [b"row1", b"row2", b"row3"])

    (tail,) = read_tail([path], budget=1000, max_line=100, last_size=10)

    assert tail.lines == [b"row1", b"row2"]  # row3 was appended after the snapshot


def test_oversize_lines_and_a_leading_bom_are_dropped_as_the_fold_drops_them(tmp_path):
    path = write(tmp_path / "d", [b"\xef\xbb\xbfhead", b"x" * 50, b"ok"])

    (tail,) = read_tail([path], budget=1000, max_line=20)

    assert tail.lines == [b"head", b"ok"]
