import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kirocrew_site.settings")
application = get_wsgi_application()

from kirocrew_site.home.apps import home_warn_at_start  # noqa: E402

home_warn_at_start()  # a WSGI server runs no system checks
