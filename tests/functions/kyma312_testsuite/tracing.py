# Kyma's own serverless test suite (tests/serverless/internal/resources/runtimes/python.go,
# BasicTracingPythonFunction), with the URL it calls read from TRACING_TARGET instead
# of formatted into the source. Kept otherwise as Kyma wrote it.
import json
import os

import requests
from opentelemetry.instrumentation.requests import RequestsInstrumentor


def main(event, context):
    print("event headers: ", vars(event['extensions']['request'].headers))
    print("event data: ", vars(event['extensions']['request'].body))
    print("event method: ", event['extensions']['request'].method)
    RequestsInstrumentor().instrument()
    response = requests.get(os.environ['TRACING_TARGET'], timeout=1)
    headers = response.request.headers
    tracingHeaders = {}
    for key, value in headers.items():
        if key.startswith("x-b3") or key.startswith("traceparent"):
            tracingHeaders[key] = value
    print("response: ", json.dumps(tracingHeaders))
    return json.dumps(tracingHeaders)
