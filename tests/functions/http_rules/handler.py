# Responses that HTTP constrains: streamed bodies (for HEAD), 204 and 304, and write().
import wsgiref.validate

from werkzeug.wrappers import Response


def lazy_app(environ, start_response):
    # A generator WSGI app: its response starts on the first iteration.
    start_response("200 OK", [("Content-Type", "text/plain")])
    yield b"lazy "
    yield b"body"


def writing_app(environ, start_response):
    write = start_response("200 OK", [("Content-Type", "text/plain")])
    write(b"written ")
    return [b"returned"]


def raw(status, headers, body):
    """A WSGI app answering as it is told, whatever HTTP allows: the server's checks are what is tested."""

    def app(environ, start_response):
        start_response(status, headers)
        return body

    return app


def misframed(req):
    """Answers HTTP does not allow, by path (tests/adapters/gunicorn/test_answers.py, tests/adapters/test_http_rules.py)."""
    path = req.path
    if path == "/interim":  # a 1xx as the function's answer
        return "interim body", int(req.args.get("code", "100"))
    if path == "/interim-wsgi":
        return raw(req.args.get("status", "100 Continue"), [], [b""])
    if path == "/longer-than-length":
        return raw("200 OK", [("Content-Length", "3")], [b"helloEXTRA"])
    if path == "/longer-than-length-streamed":
        return raw("200 OK", [("Content-Length", "3")], iter([b"aaa", b"bbbSMUGGLED"]))
    if path == "/longer-than-length-pieces":
        return raw("200 OK", [("Content-Length", "5")], iter([b"aa", b"bb", b"cSMUGGLED", b"MORE"]))
    if path == "/shorter-than-length":
        return raw("200 OK", [("Content-Length", "10")], [b"abc"])
    if path == "/length":
        return raw("200 OK", [("Content-Length", value) for value in req.args.getlist("v")], [b"abc"])
    if path == "/name":
        return raw("200 OK", [(req.args["n"], "v"), ("Content-Length", "3")], [b"abc"])
    if path == "/status":
        return raw(req.args["s"], [("Content-Length", "3")], [b"abc"])
    if path == "/connection-fields":  # framing that is the server's to do
        return raw("200 OK", [("Transfer-Encoding", "chunked"), ("Connection", "keep-alive"), ("Keep-Alive", "timeout=5"), ("Content-Length", "3")], [b"abc"])
    if path == "/upgrade":
        return raw("200 OK", [("Upgrade", "websocket"), ("Content-Length", "3")], [b"abc"])
    if path == "/host":
        return req.environ.get("HTTP_HOST", "")
    return None


def main(req, res):
    return answer(req)


def answer(req):
    """What each path answers; handler_async.py answers the same from an ``async def main``."""
    path = req.path
    odd = misframed(req)
    if odd is not None:
        return odd
    if path == "/generator":
        return (chunk for chunk in ("streamed ", "body"))
    if path == "/iterator":
        return iter([b"iterated ", b"body"])
    if path == "/wsgi":
        return Response(iter([b"passed ", b"through"]), mimetype="text/plain")
    if path == "/wsgi-lazy":
        return lazy_app
    if path == "/write":
        return writing_app
    if path == "/no-content":
        return "", 204
    if path == "/no-content-with-body":
        return {"ignored": True}, 204, {"Content-Length": "15"}
    if path == "/not-modified":
        return Response(status=304, headers={"ETag": '"v1"'})
    if path == "/not-modified-tuple":
        return "", 304, {"Content-Type": "text/plain", "ETag": '"v1"'}
    if path == "/environ":
        return pep3333_problems(req.environ)
    return "plain"


def pep3333_problems(environ):
    # Every CGI variable a str, and what wsgiref's validator asks of the rest (PEP 3333).
    problems = [f"{key} is {type(value).__name__}" for key, value in environ.items() if "." not in key and type(value) is not str]
    try:
        wsgiref.validate.check_environ(environ)
    except AssertionError as error:
        problems.append(f"wsgiref.validate: {error}")
    return {"problems": problems}
