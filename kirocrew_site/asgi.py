import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kirocrew_site.settings")
# Django must be set up before anything imports models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from kirocrew_site.daphne_request import daphne_raw_bodies  # noqa: E402
from kirocrew_site.home.checks import home_warn_at_start  # noqa: E402
from kirocrew_site.realtime.relay import relay_asgi  # noqa: E402
from kirocrew_site.realtime.routing import websocket_urlpatterns  # noqa: E402

# relay_asgi: in the embedded profile the server relays other processes' frames (a
# --follow import's) to its sockets, started on the first connection.
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
daphne_raw_bodies()  # a malformed multipart body reaches the API (its JSON 400), not Twisted
home_warn_at_start()  # daphne runs no system checks: a data folder others can read is said here
