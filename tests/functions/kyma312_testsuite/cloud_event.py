# Kyma's own serverless test suite (tests/serverless/internal/resources/runtimes/python.go,
# PythonCloudEvent): receives CloudEvents in both content modes, and publishes one
# with event.emitCloudEvent when called without any. Kept as Kyma wrote it.
import json
import os

import requests

event_data = {}

send_check_event_type = "send-check"

runtime = os.getenv("CE_SOURCE")


def main(event, context):
    print("event headers: ", vars(event['extensions']['request'].headers))
    print("event data: ", vars(event['extensions']['request'].body))
    print("event method: ", event['extensions']['request'].method)
    global event_data
    req = event.ceHeaders['extensions']['request']

    if req.method == 'GET':
        event_type = req.query.get(key='type')
        if event_type == send_check_event_type:
            publisher_proxy = os.getenv("PUBLISHER_PROXY_ADDRESS")
            resp = requests.get(publisher_proxy, params={
                "type": event_type,
                "source": runtime
            })
            print("getting saved events from publisher proxy, type: ", send_check_event_type, ", source: ", runtime, ", returning: ", resp.json())
            return resp.json()

        saved_event = event_data.get(event_type, {})
        print("getting saved event from memory for type: ", event_type, ", returning: ", json.dumps(saved_event))
        return json.dumps(saved_event)

    if 'ce-type' not in event.ceHeaders:
        event.emitCloudEvent(send_check_event_type, runtime, req.json, {'eventtypeversion': 'v1alpha2'})
        print("publishing CE, type: ", send_check_event_type, ", source: ", runtime, ", data: ", req.json, ", attr: ", {'eventtypeversion': 'v1alpha2'})
        return ""

    event_ce_headers = event.ceHeaders
    event_ce_headers.pop('extensions')

    event_data[event_ce_headers['ce-type']] = event_ce_headers
    print("saving received cloud event, type: ", event_ce_headers['ce-type'], " headers: ", event_data[event_ce_headers['ce-type']])
    return ""
