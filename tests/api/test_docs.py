"""``/api/docs`` and ``/api/openapi.json`` work offline: no CDN, every asset local."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

STABLE_ROUTES = {
    ("post", "/api/chat/slots"),
    ("get", "/api/chat/slots"),
    ("get", "/api/chat/slots/{slot}"),
    ("patch", "/api/chat/slots/{slot}"),
    ("delete", "/api/chat/slots/{slot}"),
    ("post", "/api/chat/slots/{slot}/turns"),
    ("post", "/api/chat/slots/{slot}/rows"),
    ("post", "/api/chat/slots/{slot}/rows/{ts}/revisions"),
    ("post", "/api/chat/slots/{slot}/turns/end"),
    ("get", "/api/chat/slots/{slot}/transcript"),
    ("post", "/api/chat/slots/{slot}/rewind"),
    ("post", "/api/chat/slots/{slot}/fork"),
    ("get", "/api/chat/slots/{slot}/summary"),
    ("post", "/api/chat/slots/{slot}/summary"),
}
ASSET = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)


@pytest.fixture
def docs_html(client: Client) -> str:
    response = client.get("/api/docs")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    return response.content.decode()


def test_docs_reference_only_local_files(docs_html: str) -> None:
    assets = ASSET.findall(docs_html)
    assert any(a.endswith(".js") for a in assets)
    assert any(a.endswith(".css") for a in assets)
    for asset in assets:
        assert asset.startswith("/static/"), asset  # no scheme, no host, no //cdn
    assert "//cdn" not in docs_html
    assert "http://" not in docs_html
    assert "https://" not in docs_html
    for asset in assets:
        relative = asset.removeprefix("/static/")
        assert finders.find(relative), f"{asset} is not a vendored static file"


async def _asgi_get(path: str) -> tuple[int, bytes]:
    from kirocrew_site.asgi import application

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 40000),
        "server": ("testserver", 80),
    }
    sent: list[dict[str, Any]] = []
    requested = False
    done = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await done.wait()  # the client stays connected until the response is complete
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    await application(scope, receive, send)  # type: ignore[arg-type]
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


async def test_the_docs_assets_are_served_by_the_asgi_app(settings: Any) -> None:
    """What daphne serves in the embedded profile, with DEBUG off and no network."""
    settings.DEBUG = False
    for asset in ("/static/ninja/swagger-ui-bundle.js", "/static/ninja/swagger-ui.css"):
        status, body = await _asgi_get(asset)
        assert status == 200, asset
        assert len(body) > 1000


def test_openapi_json_lists_every_stable_route(client: Client) -> None:
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.")
    operations = {(m, p) for p, item in schema["paths"].items() for m in item}
    assert operations >= STABLE_ROUTES
    for method, path in STABLE_ROUTES:
        responses = {str(s) for s in schema["paths"][path][method]["responses"]}
        assert {"401", "422"} <= responses, (method, path)
        if "{slot}" in path:
            assert "404" in responses, (method, path)  # the anti-enumeration answer
    error = schema["components"]["schemas"]["ErrorOut"]
    assert set(error["required"]) == {"error", "code"}


def test_docs_need_no_login(client: Client) -> None:
    assert client.get("/api/openapi.json").status_code == 200
    assert client.get("/api/docs").status_code == 200
