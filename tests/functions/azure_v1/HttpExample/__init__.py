import logging

import azure.functions as func

from ..shared import greeting


def main(req: func.HttpRequest) -> func.HttpResponse:
    logging.info("Python HTTP trigger function processed a request.")
    name = req.params.get("name") or req.form.get("name")
    return func.HttpResponse(greeting(name or "world"))
