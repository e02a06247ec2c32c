"""Every admin action declares the permissions it needs, and a staff user who may only
view runs none that changes anything: the action is not offered and a forged changelist
POST does nothing (the admin runs only the actions it offers)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.test import Client, RequestFactory
from django.urls import reverse

from summaries.models import IntentSummary
from transcripts.models import Session
from transcripts.runtime import get_store

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:transcripts_session_changelist"
MUTATING = {"rotate_transcripts": "transcripts.rotate_session"}


def _staff(username: str, *perms: str) -> User:
    user = User.objects.create_user(username, password="x" * 12, is_staff=True)
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return User.objects.get(pk=user.pk)  # a fresh instance: no stale permission cache


def _view_everything() -> list[str]:
    return [
        f"{model._meta.app_label}.view_{model._meta.model_name}" for model in admin.site._registry
    ]


@pytest.fixture
def viewer(db: None) -> User:
    """Staff with every "view" permission and nothing else."""
    return _staff("viewer", *_view_everything())


def _every_action(user: User) -> dict[tuple[str, str], Any]:
    """(model admin, action name) -> the action function, for what ``user`` is offered."""
    found = {}
    for model, model_admin in admin.site._registry.items():
        request = RequestFactory().get("/admin/")
        request.user = user
        for name, described in model_admin.get_actions(request).items():
            assert described is not None
            found[(model._meta.label, name)] = described[0]
    return found


def test_every_registered_admin_action_declares_its_permissions(admin_user):
    actions = _every_action(admin_user)

    assert ("transcripts.Session", "rotate_transcripts") in actions
    assert ("transcripts.Session", "summarize_now") in actions  # another app's action
    undeclared = [
        key for key, func in actions.items() if not getattr(func, "allowed_permissions", None)
    ]
    assert undeclared == []


def test_a_view_only_staff_user_is_offered_only_actions_that_need_no_more_than_view(
    admin_user, viewer
):
    offered = _every_action(viewer)

    assert ("transcripts.Session", "verify_transcripts") in offered  # reads only
    beyond_view = {
        key: func.allowed_permissions
        for key, func in offered.items()
        if set(func.allowed_permissions) - {"view"}
    }
    assert beyond_view == {}
    assert set(_every_action(admin_user)) - set(offered) >= {
        ("transcripts.Session", "rotate_transcripts"),
        ("transcripts.Session", "summarize_now"),
    }


def _post_action(client: Client, action: str, **extra: Any) -> Any:
    data = {"action": action, "select_across": "1", "index": "0", **extra}
    data.setdefault("_selected_action", list(Session.objects.values_list("pk", flat=True)))
    return client.post(reverse(CHANGELIST), data, follow=True)


@pytest.fixture
def long_slots(make_slot, settings) -> list[Session]:
    """Three sessions a forced rotation would shorten (more lines than KEEP_LINES)."""
    settings.TRANSCRIPT_KEEP_LINES = 2
    return [make_slot(f"s{i}", turns=3).session for i in range(3)]


def _archives() -> list[str]:
    archive = get_store().archive_dir
    return sorted(p.name for p in archive.glob("*")) if archive.exists() else []


def test_a_forged_rotate_post_by_a_view_only_user_archives_nothing(client, viewer, long_slots):
    client.force_login(viewer)
    page = client.get(reverse(CHANGELIST))
    assert page.status_code == 200
    assert b"Rotate (forced)" not in page.content
    assert b"Verify transcript" in page.content

    response = _post_action(client, "rotate_transcripts")

    assert response.status_code == 200
    assert b"rotated" not in response.content
    assert _archives() == []
    assert set(Session.objects.values_list("gen", flat=True)) == {0}


def test_a_user_granted_rotate_session_rotates_from_the_same_post(client, long_slots):
    # The control: the POST above is the real one; only the permission differs.
    client.force_login(_staff("rotator", *_view_everything(), MUTATING["rotate_transcripts"]))
    assert b"Rotate (forced)" in client.get(reverse(CHANGELIST)).content

    response = _post_action(client, "rotate_transcripts")

    assert b"rotated" in response.content
    assert _archives() != []
    assert set(Session.objects.values_list("gen", flat=True)) == {1}


def test_a_forged_summarize_post_by_a_view_only_user_runs_no_pass(
    client, viewer, enabled_summaries, make_slot
):
    one = make_slot("s1", turns=2).session
    client.force_login(viewer)
    assert b"Summarize now" not in client.get(reverse(CHANGELIST)).content

    response = _post_action(client, "summarize_now", _selected_action=[one.pk], select_across="0")

    assert response.status_code == 200
    assert not IntentSummary.objects.exists()

    # The control: with the permission the same POST summarizes.
    client.force_login(
        _staff("summarizer", *_view_everything(), "summaries.generate_intentsummary")
    )
    _post_action(client, "summarize_now", _selected_action=[one.pk], select_across="0")
    assert IntentSummary.objects.filter(session=one).exists()


def _mutating_actions() -> list[tuple[str, str]]:
    """(model label, action) for every action a superuser is offered that needs more than
    "view" (or declares nothing); read from the registered admins, so a new one is in it."""
    superuser = User(username="su", is_superuser=True, is_staff=True, is_active=True)
    return sorted(
        key
        for key, func in _every_action(superuser).items()
        if set(getattr(func, "allowed_permissions", None) or {"undeclared"}) - {"view"}
    )


@pytest.mark.parametrize(("model", "action"), _mutating_actions())
def test_a_forged_post_of_any_mutating_action_is_refused_for_a_view_only_user(
    client, viewer, make_slot, model, action
):
    make_slot("s1", turns=1)
    app_label, model_name = model.lower().split(".")
    url = reverse(f"admin:{app_label}_{model_name}_changelist")
    client.force_login(viewer)
    before = _everything()

    response = client.post(
        url,
        {"action": action, "select_across": "1", "index": "0", "_selected_action": ["1"]},
        follow=True,
    )

    assert response.status_code == 200
    # Refused ("No action selected.") or, with no action offered at all, not an action POST.
    shown = [str(m) for m in response.context["messages"]]
    assert shown in ([], ["No action selected."]), shown
    assert b"Are you sure?" not in response.content  # no confirmation step either
    assert _everything() == before


def _everything() -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every admin-registered model, and the sessions' file generations."""
    rows = {
        model._meta.label: sorted(model._default_manager.values_list(), key=repr)
        for model in admin.site._registry
    }
    rows["gens"] = sorted(Session.objects.values_list("key", "gen"))
    return rows
