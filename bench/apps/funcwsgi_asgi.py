"""funcwsgi's ASGI side as a module-level app, to serve it on an ASGI server the adapters do not use
(bench.event_loop's rows on gunicorn's own ASGI worker, which decide the event-loop path's worker)."""

from funcwsgi.application import default_app
from funcwsgi.process import start_process

service = default_app()
start_process(service)
app = service.asgi
