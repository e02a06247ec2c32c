import os
from typing import Any

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kirocrew_site.settings")

app = Celery("kirocrew_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _home_warn(**kwargs: Any) -> None:
    # The worker runs the system checks but prints none (settings, and so the private
    # umask, are loaded by now).
    from kirocrew_site.home.apps import home_warn_at_start

    home_warn_at_start(unless_checked=False)
