"""The public name of :mod:`funcwsgi.adapters.gunicorn_conf` (``gunicorn -c python:funcwsgi.gunicorn_conf funcwsgi:app``)."""

from funcwsgi.adapters.gunicorn_conf import *  # noqa: F403 - gunicorn reads the settings and hooks from this module's names
from funcwsgi.adapters.gunicorn_conf import __all__  # noqa: F401
