from django.contrib.auth.management.commands import changepassword

from kirocrew_site.accounts.management import MigratedFirst


class Command(MigratedFirst, changepassword.Command):
    pass
