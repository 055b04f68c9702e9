"""The conformance fixture, async: the kit's fixture function as ``async def``, served on the event loop.

The same paths and answers as tests/conformance/fixture/handler.py (see
docs/conformance.md), awaiting where that one blocks: ``/sleep`` awaits, and
``/cloudevent/emit`` publishes with ``sdk.emit_cloud_event_async``. Run the
kit against it with ``--runtime-url`` (docs/async.md).
"""

import asyncio
import json
import logging

import sdk

SECRET = "conformance-secret-7f3a"


async def main(req, res):
    path = req.path
    if path == "/hello":
        return "hello"
    if path == "/json":
        return {"a": 1, "list": [1, "two"], "text": "ü"}
    if path.startswith("/status/"):
        code = int(path.rsplit("/", 1)[1])
        res.set_code(code)
        return f"status {code}"
    if path == "/headers":
        res.set_header("X-Conformance", "yes")
        return ""
    if path == "/echo":
        res.set_data(req.get_data(), content_type=req.headers.get("Content-Type") or "application/octet-stream")
        return None
    if path == "/request":
        return {"method": req.method, "path": req.path, "query": req.args.to_dict(flat=False)}
    if path == "/raise":
        raise RuntimeError(SECRET)
    if path == "/sleep":
        await asyncio.sleep(float(req.args.get("seconds", "1")))
        return "slept"
    if path == "/size":
        return str(len(req.get_data()))
    if path == "/log":
        logging.getLogger("conformance").info("conformance log line %s", req.args.get("id", ""))
        return "logged"
    if path == "/cloudevent/echo":
        event = sdk.get_cloud_event()
        if event is None:
            return {"cloudevent": None}
        return {"cloudevent": _attributes(event), "data": _data(event)}
    if path == "/cloudevent/reply":
        from funcwsgi.compat.cloudevents_lib import make_event

        return make_event({"type": "conformance.reply", "source": "/conformance", "datacontenttype": "application/json"}, {"ok": True})
    if path == "/cloudevent/emit":
        await sdk.emit_cloud_event_async("conformance.emitted", "/conformance", {"n": int(req.args.get("n", "1"))})
        res.set_code(204)
        return None
    return f"fixture {req.method} {path}"


def _attributes(event):
    from funcwsgi.compat.cloudevents_lib import attribute_strings

    return attribute_strings(event)


def _data(event):
    from funcwsgi.compat.cloudevents_lib import data_of

    data = data_of(event)
    if isinstance(data, bytes):
        return data.decode()
    return json.loads(json.dumps(data))
