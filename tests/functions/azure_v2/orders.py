import azure.functions as func

bp = func.Blueprint()


@bp.route(route="orders/{name:alpha}/{page?}", methods=["GET", "POST"])
def orders(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(f"orders of {req.route_params['name']} page {req.route_params.get('page', '1')}")
