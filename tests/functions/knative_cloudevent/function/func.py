"""A func-python CloudEvent function (`func create -l python -t cloudevents`): the event arrives in scope["event"]."""

from cloudevents.core.v1.event import CloudEvent


def new():
    return Function()


class Function:
    async def handle(self, scope, receive, send):
        event = scope["event"]
        if event.get_type() == "binary.please":
            await send.binary(CloudEvent(attributes={"type": "reply.binary", "source": "/fn"}, data={"got": event.get_data()}), 202)
            return
        reply = CloudEvent(attributes={"type": "reply.structured", "source": "/fn"}, data={"echo": event.get_data(), "id": event.get_id()})
        await send(reply)
