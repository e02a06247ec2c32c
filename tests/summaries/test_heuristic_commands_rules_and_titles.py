"""More of what tools say, read from the
command line. Flutter's runners, logrotate's dry run, files written from the shell, and a
file the work created being removed again. Each test fails without its change."""

from __future__ import annotations

from pathlib import Path

import pytest

from summaries.core.heuristic.evidence import tool_sentences_at
from summaries.core.transcript_turn import ToolRow
from tests.summaries.test_evidence import only_intent
from tests.summaries.test_heuristic_structure import Row


def _said(*pairs: tuple[str, str, int]) -> list[str]:
    rows: list[ToolRow] = []
    for cmd, out, code in pairs:
        rows += [ToolRow("call", cmd, "bash"), ToolRow("result", out, "bash", code)]
    return [s for s, _ in tool_sentences_at(rows)]


@pytest.mark.parametrize(
    ("cmd", "out", "code", "said"),
    [
        ("flutter test", "00:09 +38: All tests passed!", 0, "Tests passed."),
        ("flutter test", "00:07 +36 -2: Some tests failed.", 1, "Tests failed."),
        ("flutter analyze", "No issues found! (ran in 4.1s)", 0, "Lint passed."),
        ("dart analyze lib", "2 issues found.", 1, "Lint failed."),
        (
            "flutter build apk --debug",
            "✓ Built build/app/outputs/flutter-apk/app-debug.apk",
            0,
            "Build passed.",
        ),
        (
            "ssh etl-worker-2 'sudo logrotate -d /etc/logrotate.d/etl 2>&1 | tail -3'",
            "rotating pattern: /var/log/etl/*.log  after 1 days (14 rotations)",
            0,
            "The check passed.",
        ),
    ],
)
def test_runners_and_dry_runs_by_their_command(cmd: str, out: str, code: int, said: str) -> None:
    assert _said((cmd, out, code)) == [said]


@pytest.mark.parametrize(
    ("cmd", "said"),
    [
        (
            "cat > migrations/0042_orders_idx.sql <<'EOF'",
            ["Changed migrations/0042_orders_idx.sql."],
        ),
        ("sudo tee /etc/logrotate.d/etl <<'EOF'", ["Changed /etc/logrotate.d/etl."]),
        ("cat migrations/0042_orders_idx.sql", []),
        ("echo ok > /dev/null", []),
    ],
)
def test_a_file_written_from_the_shell_is_a_change(cmd: str, said: list[str]) -> None:
    assert _said((cmd, "", 0)) == said


def test_a_flutter_fix_tested_then_committed_is_verified(tmp_path: Path) -> None:
    rows: list[Row] = [
        ("u", "안드로이드 13에서 푸시 알림이 안 떠요. 고쳐주세요"),
        ("call", "Edit android/app/src/main/AndroidManifest.xml", "edit"),
        ("result", "Applied edit.", "edit", 0),
        ("call", "flutter test", "bash"),
        ("result", "00:09 +38: All tests passed!", "bash", 0),
        (
            "call",
            "git checkout -b fix/push && git commit -am 'fix' && git push -u origin fix/push",
            "bash",
        ),
        ("result", "[fix/push 1a2b3c4] fix\n * [new branch]      fix/push -> fix/push", "bash", 0),
        ("a", "수정했습니다. 테스트 38개 통과, 푸시했습니다."),
    ]
    intent = only_intent(tmp_path, rows)
    assert (intent["status"], intent["verified"]) == ("completed", True)


def _rules(text: str) -> list[str]:
    from summaries.core.heuristic.constraints import extract_constraints
    from summaries.core.heuristic.exchanges import Exchange

    ex = Exchange(1, text, None, None, (), gap_before=False, after_compaction=False)
    return extract_constraints([ex])


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        # "always" / "never" in the person's language, with the thing it is about
        ("今後、コミット前には必ずktlintCheckを通してください", "ktlintCheck"),
        ("iOS 쪽 코드는 절대 건드리지 마세요", "iOS"),
        ("我们一直用 pnpm，别用 yarn 也别用 npm", "pnpm"),
        ("mainには直接pushしない、必ずブランチで。", "main"),
        ("В prod ничего не применяем без diff, который пользователь посмотрел.", "diff"),
        ("niemals die Rohdaten-Tabellen (raw.*) anfassen, nur im staging-Schema arbeiten", "raw"),
        # "Always, on every push": the sentence before it is the rule
        ("odpal testy lokalnie przed pushem. Zawsze, przy każdym pushu na release/*", "testy"),
        # a value corrected in the script's own "not"
        ("minSdkは24じゃなくて26です", "26"),
        ("接口前缀是 /api/v2，不是 /api，v1 早就下线了", "/api/v2"),
        ("Не staging, а prod-eu: для отчётов всегда брать prod-eu.", "prod-eu"),
        # "don't touch" in the person's words
        (".meta files aur scene/prefab files ko haath mat lagana, sirf .cs scripts", ".meta"),
    ],
)
def test_a_standing_rule_in_the_persons_language(text: str, holds: str) -> None:
    found = _rules(text)
    assert any(holds.lower() in rule.lower() for rule in found), found


@pytest.mark.parametrize(
    "text",
    [
        "does anything else read that column straight from raw? dont want a second surprise",
        "hm. that one is letsencrypt so http01. why didn't it go through",
        # English "never" / "always" also describe what happened
        "We never had e2e on this app",
        "Unrelated q — maxSurge vs maxUnavailable, I always mix them up",
        # the bare Polish "nie" is "not", not "never"
        "`ksiegowy import` się wywala, liczba kolumn się nie zgadza",
    ],
)
def test_a_question_or_a_description_is_no_rule(text: str) -> None:
    assert _rules(text) == []


@pytest.mark.parametrize(
    ("text", "title"),
    [
        # a CJK sentence ends at 。 with no space after it: the title is the first sentence,
        # never the first sixty characters ("…直してもらえ")
        (
            "売上データのETLでタイムゾーンがずれてるみたいです。日次集計が日本時間じゃなくて"
            "UTCで日付を切ってます。直してもらえますか？",
            "売上データのETLでタイムゾーンがずれてるみたいです",
        ),
        # dropping a weak last word must not leave the phrase open ("look into")
        (
            "the replica lag alert fired overnight, look into it",
            "The replica lag alert fired overnight, look into it",
        ),
        (
            "add a retention rule for the backups bucket to",
            "Add a retention rule for the backups bucket",
        ),
    ],
)
def test_a_title_is_a_whole_phrase(text: str, title: str) -> None:
    from summaries.core.heuristic.compose import title_for

    assert title_for(text) == title
