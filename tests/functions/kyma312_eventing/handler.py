# Kyma <=3.12 functions that trace and publish through the event object.


def main(event, context):
    request = event["extensions"]["request"]
    with event.tracer.start_as_current_span("legacy-work"):
        if request.path == "/emit":
            event.emitCloudEvent(
                "sap.kyma.custom.shop.order.received.v1", "/kyma/legacy", {"orderCode": event["data"]["orderCode"]},
                {"eventtypeversion": "v1"},
            )
        elif request.path == "/publish":
            reply = event.buildResponseCloudEvent("reply-7", "sap.kyma.custom.shop.order.replied.v1", {"accepted": True})
            event.publishCloudEvent(reply)
    return "", 204
