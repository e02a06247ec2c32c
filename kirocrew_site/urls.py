from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views.defaults import page_not_found

from .api import api
from .dashboard.throttle import ThrottledAdminAuthenticationForm
from .middleware import API_PREFIX, CODES, json_error

# The admin's login goes through the same throttle (the backend) and explains a lockout.
admin.site.login_form = ThrottledAdminAuthenticationForm


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """JSON for API paths, built here: Django's page (which middleware.ApiJsonErrors would
    replace) reads the login session to render, adding ``Vary: Cookie``. The page elsewhere."""
    if request.path.startswith(API_PREFIX):
        return json_error(404, *CODES[404])
    return page_not_found(request, exception or Exception("not found"))


handler404 = not_found

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("", include("kirocrew_site.dashboard.urls")),
]
