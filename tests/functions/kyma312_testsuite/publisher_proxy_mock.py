# Kyma's own serverless test suite (tests/serverless/internal/resources/runtimes/python.go,
# PythonPublisherProxyMock): a python312 function that stands in for the eventing
# publisher proxy, storing each published CloudEvent's keys. Kept as Kyma wrote it.
import json

import bottle

event_data = {}


def main(event, context):
    print("event headers: ", vars(event['extensions']['request'].headers))
    print("event data: ", vars(event['extensions']['request'].body))
    print("event method: ", event['extensions']['request'].method)
    global event_data
    req = event.ceHeaders['extensions']['request']

    if req.method == 'GET':
        event_type = req.query.get(key='type')
        if event_type is None:
            print("type is not specified, returning all event data: ", json.dumps(event_data))
            return json.dumps(event_data)
        source = req.query.get(key='source')
        runtime_events = event_data.get(source, {})
        saved_event = runtime_events.get(event_type, "")
        print("getting saved event from memory for type:", event_type, ", for source: ", source, ", returning: ", json.dumps(saved_event))
        return json.dumps(saved_event)

    elif req.method == 'POST':
        event_ce_headers = event.ceHeaders
        event_ce_headers.pop('extensions')
        event_data[str(event_ce_headers['ce-source'])] = {
            event_ce_headers['ce-type']: event_ce_headers
        }
        print("saving CE headers in-memory, source: ", event_ce_headers['ce-source'], ", headers: ", event_data[str(event_ce_headers['ce-source'])], ", returning: 201")
        print("current event_data: ", event_data)
        return bottle.HTTPResponse(status=201)

    print("Unexpected call, returning: 405")
    return bottle.HTTPResponse(status=405)
