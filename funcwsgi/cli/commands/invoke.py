"""``funcwsgi invoke``: call a running function and print its response."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import sys
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, urlsplit

from ... import cloudevents
from ...config import TOKEN
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
#: Longest --timeout, in seconds: a day, far above any call a function serves (socket timeouts overflow near 1e300).
MAX_TIMEOUT = 86400


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
    check_timeout(args.timeout)
    if args.method is not None:
        check_method(args.method)
    target = split_url(target_url(args.url, args.project))
    headers = parse_headers(args.header)
    body, content_type = read_data(args.data)
    if args.cloudevent:
        check_event_attributes(args)
        data = _as_json_or_text(body) if body else None
        event_headers, body = cloudevents.encode_binary(
            data, type=args.type, source=args.source, id=args.id, content_type=headers.pop("content-type", None) or None
        )
        headers = {**event_headers, **headers}
    elif content_type and "content-type" not in {name.lower() for name in headers}:
        headers["Content-Type"] = content_type
    method = (args.method or ("POST" if body or args.cloudevent else "GET")).upper()
    try:
        status, reason, response_headers, response_body = send(method, target, headers, body, args.timeout)
    except (OSError, http.client.HTTPException) as error:
        print(f"funcwsgi: error: cannot call {printable(target.url)}: {error}; is the function running ('funcwsgi run')?", file=sys.stderr)
        return 1
    print_response(status, reason, response_headers, response_body)
    return 0 if status < 400 else 1


# -- the arguments, checked before anything is sent ------------------------------
# A value the command line can carry but a request cannot (a CR, a port of 99999) is refused
# here, naming the option, rather than failing deep in http.client with a traceback.


def shown(value: str) -> str:
    """``value`` quoted, control characters escaped, and a byte that was not UTF-8 shown as that byte (``\\xff``)."""
    # Python decodes such a byte of the command line as a lone surrogate (U+DC80-U+DCFF); repr would say '\\udcff'.
    return _SURROGATE_ESCAPE.sub(r"\\x\1", repr(value))


def printable(url: str) -> str:
    """A checked URL (no control characters) as one printable line: a byte that was not UTF-8 as ``\\xff``."""
    return os.fsencode(url).decode("utf-8", "backslashreplace")


_SURROGATE_ESCAPE = re.compile(r"\\udc([89a-f][0-9a-f])")
#: C0 control characters and DEL: what a header value or a URL cannot carry as typed (tab aside, in a value).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def check_timeout(timeout: float) -> None:
    if not 0 < timeout <= MAX_TIMEOUT:  # NaN fails the comparison too
        raise StartupError(f"--timeout {timeout:g} is invalid: expected a number of seconds above 0 and at most {MAX_TIMEOUT}, such as 60")


def check_method(method: str) -> None:
    if not TOKEN.fullmatch(method):
        raise StartupError(f"--method {shown(method)} is invalid: expected an HTTP method such as GET, POST or DELETE")


def check_event_attributes(args: argparse.Namespace) -> None:
    """--type, --source and --id travel as ce-* headers: each needs a value a header can carry."""
    for option, value in (("--type", args.type), ("--source", args.source), ("--id", args.id)):
        if value is None:
            continue
        if not value or _CONTROL.search(value) or "\t" in value:
            raise StartupError(f"{option} {shown(value)} is invalid: expected a non-empty CloudEvent attribute without control characters")


class Target(NamedTuple):
    """Where a call goes, checked: ``http.client`` takes these as they are."""

    url: str
    scheme: str
    host: str
    port: int | None
    path: str


def split_url(url: str) -> Target:
    """``url`` taken apart, or an error naming it; characters beyond ASCII in its path are sent UTF-8 percent-encoded."""
    expected = "expected http://HOST:PORT/PATH"
    if any(character.isspace() for character in url) or _CONTROL.search(url):
        raise StartupError(f"URL {shown(url)} is invalid: {expected}, without spaces or control characters (percent-encode them, e.g. %20)")
    try:
        parts = urlsplit(url)
    except ValueError as error:  # a '[' without its ']'
        raise StartupError(f"URL {shown(url)} is invalid: {expected} ({error})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StartupError(f"URL {shown(url)} is invalid: {expected}")
    try:
        port = parts.port
    except ValueError:  # not a number, or above 65535
        port = 0
    if port == 0:
        raise StartupError(f"URL {shown(url)} is invalid: expected a port from 1 to 65535 after the host")
    try:
        parts.hostname.encode("idna")
    except UnicodeError:
        raise StartupError(f"URL {shown(url)} is invalid: expected a host name or IP address") from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # The bytes the user typed (os.fsencode), as a browser sends them: percent-encoded, '%' escapes kept.
    path = quote(os.fsencode(path), safe=_PRINTABLE_ASCII)
    return Target(url, parts.scheme, parts.hostname, port, path)


_PRINTABLE_ASCII = "".join(map(chr, range(0x21, 0x7F)))


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
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise StartupError(f"--header {shown(item)} is invalid: expected 'NAME: VALUE'")
        if not TOKEN.fullmatch(name):
            raise StartupError(f"--header {shown(item)} is invalid: expected a name of letters, digits and !#$%&'*+-.^_`|~ before the ':'")
        if _CONTROL.search(value):  # a CR or LF would end the header and start another
            raise StartupError(f"--header {shown(item)} is invalid: expected a value without control characters (CR, LF, NUL)")
        headers[name] = value
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
        # The bytes the user typed: a byte that is not UTF-8 reaches us as a lone surrogate, and goes out as it came.
        body = os.fsencode(data)
    try:
        json.loads(body)
    except ValueError:
        return body, "text/plain; charset=utf-8" if not data.startswith("@") and _is_utf8(body) else "application/octet-stream"
    return body, "application/json"


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode()
    except UnicodeDecodeError:
        return False
    return True


def _as_json_or_text(body: bytes) -> object:
    try:
        return json.loads(body)
    except ValueError:
        try:
            return body.decode()
        except UnicodeDecodeError:
            return body


def send(method: str, target: Target, headers: dict[str, str], body: bytes, timeout: float) -> tuple[int, str, list[tuple[str, str]], bytes]:
    connection_class = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(target.host, target.port, timeout=timeout)
    # Header values go out as the bytes typed (as --data does), not Latin-1, which most characters are not.
    raw_headers = {name: os.fsencode(value) for name, value in headers.items()}
    try:
        connection.request(method, target.path, body=body or None, headers=raw_headers)
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
