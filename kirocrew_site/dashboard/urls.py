from django.contrib.auth import views as auth_views
from django.urls import path

from . import views
from .throttle import LoginView

app_name = "dashboard"

urlpatterns = [
    path("", views.session_list, name="sessions"),
    path("s/<str:slot>/", views.session_detail, name="session"),
    path("s/<str:slot>/rows/", views.session_rows_partial, name="session-rows"),
    path("s/<str:slot>/summary/", views.session_summary_partial, name="session-summary"),
    path("s/<str:slot>/card/", views.session_card_partial, name="session-card"),
    path("s/<str:slot>/timeline/", views.session_timeline_partial, name="session-timeline"),
    path("projects/", views.project_index, name="projects"),
    path("project/", views.project_detail, name="project"),
    path("settings/", views.settings_page, name="settings"),
    path("settings/backend/test/", views.settings_backend_test, name="settings-backend-test"),
    path("settings/backend/use/", views.settings_backend_use, name="settings-backend-use"),
    path("login/", LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Pages without our <link rel="icon"> (the admin, the API docs) still ask for this.
    path("favicon.ico", views.favicon, name="favicon"),
]
