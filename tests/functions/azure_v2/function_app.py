"""An Azure Functions app in the v2 programming model, with a blueprint."""

import json

import azure.functions as func
from orders import bp
from responses import bp as responses

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
app.register_functions(bp)
app.register_functions(responses)


@app.route(route="hello")
def hello(req: func.HttpRequest) -> func.HttpResponse:
    name = req.params.get("name")
    if not name:
        try:
            name = req.get_json().get("name")
        except ValueError:
            name = None
    if name:
        return func.HttpResponse(f"Hello, {name}. This HTTP triggered function executed successfully.")
    return func.HttpResponse("Pass a name in the query string or in the request body.", status_code=200)


@app.route(route="items/{id:int}", methods=["GET"])
def get_item(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(
        json.dumps({"id": int(req.route_params["id"]), "url": req.url, "method": req.method, "agent": req.headers.get("x-agent")}),
        mimetype="application/json",
    )


@app.route(route="items/latest", methods=["GET"])
def latest_item(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse("latest", headers={"X-Route": "literal"})


@app.route(route="p/{name}", methods=["GET"])
def named(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(
        json.dumps({"name": req.route_params["name"], "url": req.url, "utf": req.headers.get("x-utf")}), mimetype="application/json"
    )


@app.route(route="fail")
def fail(req: func.HttpRequest) -> func.HttpResponse:
    raise KeyError("connection string Endpoint=sb://secret")


@app.route(route="files/{*path}", methods=["POST"])
async def upload(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return func.HttpResponse(f"{context.function_name}:{req.route_params.get('path', '')}:{len(req.get_body())}", status_code=201)


@app.timer_trigger(schedule="0 */5 * * * *", arg_name="timer", run_on_startup=False)
def cleanup(timer: func.TimerRequest) -> None:
    pass
