from django.contrib.auth.management.commands import createsuperuser

from kirocrew_site.accounts.management import MigratedFirst


class Command(MigratedFirst, createsuperuser.Command):
    pass
