"""The subcommands of the ``funcwsgi`` CLI, one module each (see :mod:`funcwsgi.cli`)."""
