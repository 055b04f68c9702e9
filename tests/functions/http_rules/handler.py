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


def main(req, res):
    return answer(req)


def answer(req):
    """What each path answers; handler_async.py answers the same from an ``async def main``."""
    path = req.path
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
