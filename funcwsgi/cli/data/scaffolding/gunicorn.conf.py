# Scaffolding written by funcwsgi: gunicorn's settings, read from the runtime's
# configuration (SERVER_HOST, SERVER_PORT, SERVER_WORKERS, ...), for serving
# the function with gunicorn directly:  gunicorn -c gunicorn.conf.py service:app
# In a scaffolded project, add gunicorn settings or hooks below.
from funcwsgi.gunicorn_conf import *  # noqa: F401,F403
