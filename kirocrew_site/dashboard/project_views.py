"""The project pages ("where was I"): the projects index and one project's open intents.
Views translate the request and call the selectors in ``project_selectors.py``."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from .project_selectors import project_get, project_list
from .selectors import UNSCOPED


def _app_filter(request: HttpRequest) -> str:
    # The sessions list's own app filter (NUL dropped as there): the same sessions.
    return request.GET.get("app", "").replace("\x00", "")


@login_required
@require_GET
def project_index(request: HttpRequest) -> HttpResponse:
    app = _app_filter(request)
    return render(
        request,
        "dashboard/projects.html",
        {"projects": project_list(app=app), "app": app, "unscoped": UNSCOPED},
    )


@login_required
@require_GET
def project_detail(request: HttpRequest) -> HttpResponse:
    """``?path=<the project>``; ``?path=`` (empty) is "No project"."""
    if "path" not in request.GET:
        raise Http404("which project? (?path=)")
    app = _app_filter(request)
    project = project_get(path=request.GET["path"], app=app)
    if project is None:
        raise Http404("no session of this project")
    return render(
        request, "dashboard/project.html", {"project": project, "app": app, "unscoped": UNSCOPED}
    )
