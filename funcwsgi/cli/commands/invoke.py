"""``funcwsgi invoke``: call a running function and print its response."""

from __future__ import annotations

import argparse
import http.client
import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

from ... import cloudevents
from ...errors import StartupError
from ..project import find_root
from ..runs import live_runs

NAME = "invoke"
HELP = "Call a running function (by default the one 'funcwsgi run' started here) and print the response."
EPILOG = """examples:
  funcwsgi invoke                                  # GET the function 'funcwsgi run' serves
  funcwsgi invoke --data '{"name": "you"}'         # POST JSON
  funcwsgi invoke /items?id=3 --method DELETE      # a path of the running function
  funcwsgi invoke http://127.0.0.1:9000/ --header 'X-Trace: 1'
  funcwsgi invoke --data @event.json --cloudevent --type com.example.order --source /shop

Prints the status line, the headers and the body (JSON indented); a CloudEvent
reply is shown decoded: its attributes, then its data. --cloudevent sends the
data as a binary-mode CloudEvent (ce-* headers).

exit status: 0 for a 1xx-3xx answer, 1 for a 4xx/5xx answer or when the
function cannot be reached, 2 for bad arguments.
"""

DEFAULT_TYPE = "dev.funcwsgi.invoke"
DEFAULT_SOURCE = "/funcwsgi/invoke"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", nargs="?", metavar="URL", help="the function's URL, or a /path of the function 'funcwsgi run' serves")
    parser.add_argument("--data", "-d", help="the request body; JSON is sent as application/json; @FILE reads a file")
    parser.add_argument("--method", "-X", help="HTTP method (default POST with --data or --cloudevent, else GET)")
    parser.add_argument("--header", "-H", action="append", default=[], metavar="'NAME: VALUE'", help="a request header (repeatable)")
    parser.add_argument("--cloudevent", "-c", action="store_true", help="send the data as a binary-mode CloudEvent")
    parser.add_argument("--type", default=DEFAULT_TYPE, help=f"the CloudEvent's type (default {DEFAULT_TYPE})")
    parser.add_argument("--source", default=DEFAULT_SOURCE, help=f"the CloudEvent's source (default {DEFAULT_SOURCE})")
    parser.add_argument("--id", help="the CloudEvent's id (default: a new UUID)")
    parser.add_argument("--dir", dest="project", default=".", metavar="DIR", help="the function's folder, to find its run (default: the current folder)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the answer (default 60)")


def run(args: argparse.Namespace) -> int:
    url = target_url(args.url, args.project)
    headers = parse_headers(args.header)
    body, content_type = read_data(args.data)
    if args.cloudevent:
        data = _as_json_or_text(body) if body else None
        event_headers, body = cloudevents.encode_binary(
            data, type=args.type, source=args.source, id=args.id, content_type=headers.pop("content-type", None) or None
        )
        headers = {**event_headers, **headers}
    elif content_type and "content-type" not in {name.lower() for name in headers}:
        headers["Content-Type"] = content_type
    method = (args.method or ("POST" if body or args.cloudevent else "GET")).upper()
    try:
        status, reason, response_headers, response_body = send(method, url, headers, body, args.timeout)
    except (OSError, http.client.HTTPException) as error:
        print(f"funcwsgi: error: cannot call {url}: {error}; is the function running ('funcwsgi run')?", file=sys.stderr)
        return 1
    print_response(status, reason, response_headers, response_body)
    return 0 if status < 400 else 1


def target_url(given: str | None, project_dir: str) -> str:
    if given and not given.startswith("/"):
        if "://" not in given:
            given = "http://" + given
        return given
    try:
        root = find_root(project_dir)
    except StartupError:
        raise StartupError("no URL given and no func.yaml here; pass the function's URL, e.g. funcwsgi invoke http://127.0.0.1:8080/") from None
    running = live_runs(root / ".func" / "runs")
    if not running:
        raise StartupError(f"no function is running for {root}; start one with 'funcwsgi run', or pass its URL")
    chosen = running[0]
    if len(running) > 1:
        others = ", ".join(record.url for record in running[1:])
        print(f"funcwsgi: {len(running)} runs are live; calling {chosen.url} (others: {others}); pass a URL to choose", file=sys.stderr)
    return chosen.url + (given or "/")


def parse_headers(raw: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise StartupError(f"--header {item!r} is invalid: expected 'NAME: VALUE'")
        headers[name.strip()] = value.strip()
    return headers


def read_data(data: str | None) -> tuple[bytes, str | None]:
    """The body and the content type it implies."""
    if data is None:
        return b"", None
    if data.startswith("@"):
        path = Path(data[1:])
        try:
            body = path.read_bytes()
        except OSError as error:
            raise StartupError(f"--data {data!r}: cannot read {path}: {error.strerror}") from None
    else:
        body = data.encode()
    try:
        json.loads(body)
    except ValueError:
        return body, "text/plain; charset=utf-8" if not data.startswith("@") else "application/octet-stream"
    return body, "application/json"


def _as_json_or_text(body: bytes) -> object:
    try:
        return json.loads(body)
    except ValueError:
        try:
            return body.decode()
        except UnicodeDecodeError:
            return body


def send(method: str, url: str, headers: dict[str, str], body: bytes, timeout: float) -> tuple[int, str, list[tuple[str, str]], bytes]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StartupError(f"URL {url!r} is invalid: expected http://HOST:PORT/PATH")
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=timeout)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(method, path, body=body or None, headers=headers)
        response = connection.getresponse()
        return response.status, response.reason, response.getheaders(), response.read()
    finally:
        connection.close()


def print_response(status: int, reason: str, headers: list[tuple[str, str]], body: bytes) -> None:
    print(f"HTTP {status} {reason}")
    for name, value in headers:
        print(f"{name}: {value}")
    print()
    lowered = {name.lower(): value for name, value in headers}
    event = cloudevents.decode(lowered, body)
    if event is not None:
        print("CloudEvent:")
        for name, value in sorted(event.attributes.items()):
            print(f"  {name}: {value}")
        if isinstance(event.data, (dict, list)):
            print("  data:")
            print(_render(event.data))
        else:
            print(f"  data: {_render(event.data)}")
        return
    if body:
        print(_render(_as_json_or_text(body) if "json" in lowered.get("content-type", "") else body))


def _render(value: object) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, ensure_ascii=False)
    if isinstance(value, bytes):
        try:
            return value.decode()
        except UnicodeDecodeError:
            return f"<{len(value)} bytes of binary data>"
    return "" if value is None else str(value)
