"""The function: funcwsgi calls main(req, res) once per HTTP request.

req is a werkzeug request (req.args, req.headers, req.get_json(), req.data);
res is the response to fill in (res.set_code, res.set_header, res.set_body).
Nothing here imports funcwsgi: the runtime is added when the function runs.
"""


def main(req, res):
    body = req.get_json(silent=True) or {}
    name = req.args.get("name") or body.get("name") or "world"
    res.set_body({"message": f"Hello, {name}!"})
