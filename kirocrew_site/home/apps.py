from django.apps import AppConfig


class HomeConfig(AppConfig):
    """The data folder (``KIROCREW_HOME``): its modes checked at start-up."""

    name = "kirocrew_site.home"
    label = "home"
    verbose_name = "Data folder"

    def ready(self) -> None:
        from django.core import checks

        from .checks import home_exposure_check

        checks.register(home_exposure_check, checks.Tags.security)
