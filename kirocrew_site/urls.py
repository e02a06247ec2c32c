from django.contrib import admin
from django.urls import include, path

from .api import api
from .dashboard.throttle import ThrottledAdminAuthenticationForm

# The admin's login goes through the same throttle (the backend) and explains a lockout.
admin.site.login_form = ThrottledAdminAuthenticationForm

# A 404 under /api/ is JSON through middleware.ApiJsonErrors, like every other error there.
urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("", include("kirocrew_site.dashboard.urls")),
]
