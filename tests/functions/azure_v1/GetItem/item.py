import json

import azure.functions as func


def get(request: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(json.dumps(dict(request.route_params)), mimetype="application/json", status_code=200)
