"""The reference point: a hello world written straight against WSGI, no framework."""

BODY = b"Hello, world!"
HEADERS = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(BODY)))]


def app(environ, start_response):
    start_response("200 OK", list(HEADERS))
    return [BODY]
