"""An OpenFaaS python3-http function: funcwsgi calls handle(event, context) as the template's index.py does.

Nothing here imports funcwsgi: the same folder builds with `faas-cli build` (lang: python3-http).
"""

import json


def handle(event, context):
    body = json.loads(event.body) if event.body else {}
    name = event.query.get("name") or body.get("name") or "world"
    return {"statusCode": 200, "body": {"message": f"Hello, {name}!"}}
