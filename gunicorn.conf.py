# `gunicorn funcwsgi:app` run from this folder reads its settings from the
# runtime's configuration (SERVER_HOST, SERVER_PORT, SERVER_WORKERS, ...).
from funcwsgi.gunicorn_conf import *  # noqa: F401,F403
