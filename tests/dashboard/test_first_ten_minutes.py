"""What a new user meets in the first ten minutes: the demo, the README walk-through, the
commands' first run, and the pages (issue 13). Test client and in-process commands; the
real-process checks are in test_first_run_processes.py."""

from __future__ import annotations

import json
import re
import shlex
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError
from django.test import Client

from kirocrew_site.demo import REPLAY_APP, REPLAY_SLOT
from summaries.models import IntentSummary
from summaries.selectors import summary_body
from tests.fixtures.personas import logged_in
from transcripts.models import App, SecurityEvent, Session, Slot
from transcripts.selectors import session_get_for_caller

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PROJECT_COMMANDS = (
    "import_transcripts",
    "verify_transcripts",
    "rotate_transcripts",
    "cleanup_archives",
    "create_app",
    "summarize",
    "demo",
    "secure_home",
    "search_rebuild",
)


def run(*args: str, **options: Any) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command(*args, stdout=out, stderr=err, **options)
    except CommandError as exc:
        return exc.returncode, out.getvalue(), f"{err.getvalue()}{exc}"
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def api(client: Client, token: str, method: str, path: str, body: Any = None) -> Any:
    return client.generic(
        method,
        path,
        json.dumps(body) if body is not None else "",
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


# --- 1. the demo is idempotent ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_demo_runs_twice_against_a_live_server_without_a_traceback(store, live_server):
    """The second run used to delete its app (orphaning live-demo), then 404, 409, traceback."""
    first = run("demo", url=live_server.url, pause=0, wait=10)
    second = run("demo", url=live_server.url, pause=0, wait=10)

    for code, out, err in (first, second):
        assert code == 0, (out, err)
        assert "Traceback" not in out + err
        assert "turn 5 of 5 done" in out
    slot = Slot.objects.select_related("app").get(name=REPLAY_SLOT)
    assert slot.app is not None
    assert slot.app.name == REPLAY_APP
    assert Session.objects.get(slot=slot).app_id == slot.app_id
    assert App.objects.filter(name=REPLAY_APP).count() == 1
    assert not SecurityEvent.objects.exists()  # no foreign-slot probe was logged


@pytest.mark.django_db(transaction=True)
def test_demo_heals_a_live_session_orphaned_by_an_older_run(store, live_server):
    assert run("demo", url=live_server.url, pause=0, wait=10)[0] == 0
    App.objects.filter(name=REPLAY_APP).delete()  # what the old demo did: slot now unowned

    code, out, err = run("demo", url=live_server.url, pause=0, wait=10)

    assert code == 0, (out, err)
    assert Slot.objects.get(name=REPLAY_SLOT).app.name == REPLAY_APP  # type: ignore[union-attr]


@pytest.mark.django_db
def test_a_failed_replay_is_one_line_and_exit_1(store):
    """Nothing listens on port 9: the replay reports it in one line, never a traceback."""
    code, out, err = run("demo", url="http://127.0.0.1:9", pause=0, wait=0.1)
    assert code == 1
    assert "no server answered at http://127.0.0.1:9" in err
    assert "Traceback" not in out + err


@pytest.mark.django_db
def test_the_demo_prints_the_login_in_a_box_last(store):
    code, out, _ = run("demo", no_replay=True)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[-1].startswith("+-")
    assert lines[-1].endswith("-+")
    box = lines[lines.index(lines[-1]) :]
    assert any("Log in as: demo" in line for line in box)
    assert any(re.match(r"\| Password:  \S{12,} +\|", line) for line in box)
    # A re-run says how to log in without printing (or changing) a password.
    again = run("demo", no_replay=True)[1]
    assert "Password:" not in again
    assert "`.venv/bin/python manage.py changepassword demo`" in again


# --- 2. the README walk-through ends with a summary; create_app can be re-run ------------------


def readme_walkthrough() -> list[str]:
    text = README.read_text()
    block = re.search(r"```sh\n(TOKEN=\$\(.*?create_app.*?)```", text, re.S)
    assert block is not None, "the README's API walk-through is missing"
    return block.group(1).strip().splitlines()


@pytest.mark.django_db(transaction=True)  # the summary pass runs on commit
def test_the_readme_walkthrough_ends_with_a_real_summary(store, enabled_summaries, eager_tasks):
    lines = readme_walkthrough()
    create = shlex.split(re.search(r"\$\((.*?)\)", lines[0]).group(1))  # type: ignore[union-attr]
    code, token, _ = run(*create[2:])  # manage.py create_app my-runner -v 0
    assert code == 0
    token = token.strip()
    assert "\n" not in token
    assert token.startswith("kc_")
    client = Client()
    last: Any = None
    for line in lines[2:]:
        words = shlex.split(line.split("#")[0])
        assert words[0] == "curl", line
        method = "POST" if "-XPOST" in words else "GET"
        path = next(w for w in words if w.startswith("localhost:8000"))[len("localhost:8000") :]
        body = json.loads(words[words.index("-d") + 1]) if "-d" in words else None
        last = api(client, token, method, path, body)
        assert last.status_code in (200, 201), (line, last.content)
    summary = last.json()
    assert summary["enabled"] is True
    assert len(summary["intents"]) >= 1, summary
    assert summary["generate_state"] != "too_few_turns"


@pytest.mark.django_db
def test_create_app_twice_is_a_clear_exit_1_and_rotate_gives_a_new_token(store):
    code, first, _ = run("create_app", "my-runner", verbosity=0)
    assert code == 0
    code, out, err = run("create_app", "my-runner", verbosity=0)
    assert (code, out) == (1, "")
    assert "already exists" in err
    assert "--rotate" in err

    code, second, _ = run("create_app", "my-runner", "--rotate", verbosity=0)
    assert code == 0
    client = Client()
    assert api(client, second.strip(), "GET", "/api/chat/slots").status_code == 200
    assert api(client, first.strip(), "GET", "/api/chat/slots").status_code == 401
    assert App.objects.filter(name="my-runner").count() == 1


@pytest.mark.django_db
def test_create_app_rotate_of_an_unknown_name_says_so(store):
    code, out, err = run("create_app", "nobody", "--rotate")
    assert (code, out) == (1, "")
    assert "no app named 'nobody'" in err


# --- 4 and 8. the demo's samples: summarized, and they survive the housekeeping ---------------


@pytest.mark.django_db
def test_the_demo_summarizes_what_it_imports(store):
    assert run("demo", no_replay=True)[0] == 0
    for name in ("research-notes", "coder-demo", "triage-demo", "starter"):
        found = session_get_for_caller(name=name, caller_app="")
        assert found is not None
        body = summary_body(found)
        assert body["enabled"] is True
        assert body["intents"], name
    assert IntentSummary.objects.count() == 4


@pytest.mark.django_db
def test_the_samples_survive_a_real_cleanup_archives(store):
    assert run("demo", no_replay=True)[0] == 0
    before = Session.objects.get(slot__name="research-notes").user_turns
    archives = sorted(p.name for p in store.archive_dir.iterdir())
    assert archives

    code, out, _ = run("cleanup_archives")  # the product's default retention, 30 days

    assert code == 0
    assert "Deleted 0 of" in out
    assert sorted(p.name for p in store.archive_dir.iterdir()) == archives
    assert Session.objects.get(slot__name="research-notes").user_turns == before
    assert run("verify_transcripts")[0] == 0  # and the undated archive is not a finding


# --- 6. one summary value on every route -------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # the summary pass runs on commit
def test_the_slot_summary_field_is_the_gist_on_every_route(store, enabled_summaries, eager_tasks):
    _code, token, _ = run("create_app", "runner", verbosity=0)
    token = token.strip()
    client = Client()
    assert api(client, token, "POST", "/api/chat/slots", {"name": "s1"}).status_code == 201
    for ask in ("Fix the CSV export for accented names", "Now add a --since flag"):
        api(client, token, "POST", "/api/chat/slots/s1/turns", {"content": ask})
        api(
            client,
            token,
            "POST",
            "/api/chat/slots/s1/rows",
            {"role": "assistant", "content": "Done."},
        )
        ended = api(
            client, token, "POST", "/api/chat/slots/s1/turns/end", {"stop_reason": "end_turn"}
        )
    listed = api(client, token, "GET", "/api/chat/slots").json()["slots"][0]["summary"]
    assert listed  # a gist was written after the second turn
    assert ended.json()["summary"] == listed
    assert api(client, token, "GET", "/api/chat/slots/s1").json()["summary"] == listed
    patched = client.patch(
        "/api/chat/slots/s1",
        json.dumps({"title": "Export"}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert patched.json()["summary"] == listed


# --- 7. closed sessions are marked ------------------------------------------------------------


@pytest.mark.django_db
def test_a_closed_session_is_marked_on_the_list_and_its_page(store, user):
    assert run("demo", no_replay=True)[0] == 0
    client = logged_in(user)
    page = client.get("/s/research-notes/").content.decode()
    assert 'class="pill pill-closed"' in page
    assert 'class="pill pill-closed"' not in client.get("/s/starter/").content.decode()
    listing = client.get("/").content.decode()
    assert listing.count('class="pill pill-closed"') == 1


# --- 3 (in process), 10 and 12: commands --------------------------------------------------------


@pytest.mark.parametrize("name", PROJECT_COMMANDS)
def test_every_command_help_has_an_example(name):
    command = load_command_class(get_commands()[name], name)
    assert "Example" in command.help or "example" in command.help, name


def test_the_readme_lists_every_command_and_the_exit_code_rule():
    text = README.read_text()
    for needle in (
        "import_transcripts [PATH…] [--app NAME] [--dry-run]",
        "cleanup_archives [--dry-run] [--days N]",
        "rotate_transcripts [KEY…] [--force]",
        "create_app NAME [--rotate]",
        "manage.py demo",
        "0 ok, 1 a problem found or refused, 2 bad usage",
    ):
        assert needle in text, needle


DJANGO_OPTIONS = {
    "--help",
    "--version",
    "--verbosity",
    "--settings",
    "--pythonpath",
    "--traceback",
    "--no-color",
    "--force-color",
    "--skip-checks",
}


@pytest.mark.parametrize("name", PROJECT_COMMANDS)
def test_the_readme_synopsis_names_every_option_of_the_command(name):
    """The Commands block against ``--help``: an option added to a command is documented."""
    block = re.search(r"## Commands\n\n```sh\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    synopsis = " ".join(
        line.split("#")[0] for line in block.group(1).splitlines() if f"manage.py {name} " in line
    )
    assert synopsis, f"{name} is missing from the README's Commands block"
    parser = load_command_class(get_commands()[name], name).create_parser("manage.py", name)
    options = {
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option not in DJANGO_OPTIONS
    }
    for option in options:
        assert re.search(rf"\[?{re.escape(option)}\b", synopsis), (name, option)
    for option in re.findall(r"--[a-z][a-z-]*", synopsis):
        assert option in options, f"the README names {option} for {name}; --help does not"


@pytest.mark.django_db
def test_summarize_says_what_current_and_disabled_mean(store, configure, make_slot):
    configure(enabled=True)
    make_slot(turns=2)
    assert "written" in run("summarize", "s1")[1]
    code, out, _ = run("summarize", "s1")
    assert code == 0
    assert "current: summary already up to date" in out
    configure(enabled=False)
    code, _, err = run("summarize", "s1")
    assert code == 1
    assert "not summarized: disabled" in err
    assert '"enabled": true' in err
    assert "KIROCREW_SUMMARY_ENABLED=1" in err


@pytest.mark.django_db
def test_a_bad_usage_exits_2(store):
    with pytest.raises(SystemExit) as info:
        # called as from the shell, so argparse decides the exit code
        load_command_class("summaries", "summarize").run_from_argv(["manage.py", "summarize"])
    assert info.value.code == 2
