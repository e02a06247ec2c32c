from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The dashboard holds one table of its own: the login throttle's counters."""

    name = "kirocrew_site.dashboard"
    label = "dashboard"
    verbose_name = "Dashboard"
