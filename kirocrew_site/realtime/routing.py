"""The WebSocket routes; ``kirocrew_site/asgi.py`` mounts them."""

from django.urls import path

from .consumer import DashboardConsumer

websocket_urlpatterns = [
    path("ws/dashboard/", DashboardConsumer.as_asgi()),  # type: ignore[arg-type]
]
