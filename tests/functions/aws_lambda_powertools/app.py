"""Lambda handlers routed by AWS Lambda Powertools' event handlers, which parse the gateway's events strictly."""

import os

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.utilities.typing import LambdaContext

app = APIGatewayHttpResolver() if os.environ.get("LAMBDA_PAYLOAD_FORMAT", "2.0") == "2.0" else APIGatewayRestResolver()


@app.get("/todos/<todo_id>")
def get_todo(todo_id: str):
    return {"id": todo_id, "q": app.current_event.get_query_string_value("q"), "agent": app.current_event.get_header_value("x-agent")}


@app.post("/todos")
def create_todo():
    return Response(status_code=201, content_type=content_types.APPLICATION_JSON, body={"created": app.current_event.json_body})


@app.get("/cookies")
def cookies():
    return {"cookies": list(app.current_event.cookies) if hasattr(app.current_event, "cookies") and app.current_event.cookies else []}


def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
