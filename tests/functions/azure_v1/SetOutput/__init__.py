"""A v1 function answering through a named HTTP output binding (res), as older Azure samples do."""

import azure.functions as func


def main(req: func.HttpRequest, res: func.Out[func.HttpResponse]) -> None:
    if req.route_params["mode"] == "set":
        res.set(func.HttpResponse("set through res", status_code=201))
    # "unset": the function sets nothing; the host answers an empty 200
