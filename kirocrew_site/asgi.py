import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kirocrew_site.settings")
# Django must be set up before anything imports models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from daphne import http_protocol  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from kirocrew_site.home.apps import home_warn_at_start  # noqa: E402
from kirocrew_site.realtime.consumer import websocket_urlpatterns  # noqa: E402
from kirocrew_site.realtime.relay import relay_asgi  # noqa: E402

router = ProtocolTypeRouter(
    {
        # The dashboard's few vendored files (and the admin's) are served by daphne itself:
        # the embedded profile runs with no other server. A proxy may serve STATIC_ROOT
        # (collectstatic) in front of it instead.
        "http": ASGIStaticFilesHandler(django_asgi_app),
        "websocket": AuthMiddlewareStack(URLRouter(websocket_urlpatterns)),  # type: ignore[arg-type]
    }
)
application = relay_asgi(router)


class RawBodyWebRequest(http_protocol.WebRequest):  # type: ignore[misc]
    """Twisted parses a POST's form body before daphne sees it, and answers one it cannot
    parse with a bare 400 itself, so the API never gave its JSON envelope. Daphne never
    reads the parse (it passes the raw body on), so it is skipped (Twisted 24.7+)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["parsePOSTFormSubmission"] = False
        super().__init__(*args, **kwargs)


http_protocol.WebRequest = RawBodyWebRequest  # daphne builds requests from this global
home_warn_at_start()  # daphne runs no system checks: a data folder others can read is said here
