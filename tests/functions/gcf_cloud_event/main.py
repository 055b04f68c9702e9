# functions-framework-python's own test function tests/test_functions/cloud_events/main.py and the
# examples/cloud_run_cloud_events/main.py example (Apache-2.0, Google LLC), kept as written.
"""Function used to test handling CloudEvent functions."""
import flask


def function(cloud_event):
    """Test Event function that checks to see if a valid CloudEvent was sent.

    The function returns 200 if it received the expected event, otherwise 500.

    Args:
        cloud_event: A CloudEvent as defined by https://github.com/cloudevents/sdk-python.

    Returns:
        HTTP status code indicating whether valid event was sent or not.

    """
    valid_event = (
        cloud_event["id"] == "my-id"
        and cloud_event.data == {"name": "john"}
        and cloud_event["source"] == "from-galaxy-far-far-away"
        and cloud_event["type"] == "cloud_event.greet.you"
        and cloud_event["time"] == "2020-08-16T13:58:54.471765"
    )

    if not valid_event:
        flask.abort(500)


# This sample creates a function using the CloudEvents SDK
# (https://github.com/cloudevents/sdk-python)
def hello(cloud_event):
    print(f"Received event with ID: {cloud_event['id']} and data {cloud_event.data}")
