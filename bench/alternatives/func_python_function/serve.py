"""func-python's ASGI application around the function, as its own ``serve()`` builds it, for uvicorn to serve.

func-python serves with hypercorn itself; the benchmark runs the same
application on uvicorn, the server funcwsgi's loop path runs on by default.
"""

from func import handle
from func_python.http import ASGIApplication, DefaultFunction

app = ASGIApplication(DefaultFunction(handle))
