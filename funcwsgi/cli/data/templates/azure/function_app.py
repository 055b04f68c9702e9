"""An Azure Functions app (Python v2 programming model): funcwsgi routes /api/hello to hello(req).

Nothing here imports funcwsgi: the same folder deploys to Azure with `func azure functionapp publish`.
"""

import json

import azure.functions as func

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


@app.route(route="hello", methods=["GET", "POST"])
def hello(req: func.HttpRequest) -> func.HttpResponse:
    name = req.params.get("name")
    if not name:
        try:
            name = req.get_json().get("name")
        except ValueError:
            name = None
    return func.HttpResponse(json.dumps({"message": f"Hello, {name or 'world'}!"}), mimetype="application/json")
