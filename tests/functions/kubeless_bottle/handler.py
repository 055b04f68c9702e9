# A Kubeless function that talks to bottle, the framework its runtime served it with.
import bottle
from bottle import HTTPResponse, abort, request, response

ORDERS = {"1": {"id": 1, "item": "book"}}


def main(event, context):
    path = request.path
    if path.startswith("/orders/"):
        order = ORDERS.get(path.rsplit("/", 1)[1])
        if order is None:
            abort(404, "no such order")
        return order
    if path == "/created":
        response.status = 201
        response.set_header("Location", "/orders/2")
        return {"created": event["data"].decode()}
    if path == "/typed":
        response.content_type = "text/csv"
        return "a,b\n1,2\n"
    if path == "/response":
        return HTTPResponse("accepted", status=202, headers={"X-Queue": "orders"})
    if path == "/raise-response":
        raise HTTPResponse(body="moved", status=302, headers={"Location": "/elsewhere"})
    if path == "/fail":
        raise bottle.HTTPError(503, "try again later")
    if path.startswith("/utf/"):
        return {"path": path, "header": request.get_header("X-Utf")}
    if path == "/body":
        return {"bottle": request.body.read().decode(), "event": event["data"].decode()}
    return "plain"
