from django.urls import path

from .realtime import DashboardConsumer

websocket_urlpatterns = [
    path("ws/dashboard/", DashboardConsumer.as_asgi()),  # type: ignore[arg-type]
]
