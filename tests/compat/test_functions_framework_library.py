"""A Functions Framework function that keeps its decorator, with the library installed next to funcwsgi.

functions-framework pins cloudevents to 1.x, so this runs in the environment of
``make test-cloudevents-1`` (which ``make test`` runs), where the library is installed.
"""

from __future__ import annotations

import pytest
import requests

from ..support.paths import function_folder
from . import serving

functions_framework = pytest.importorskip(
    "functions_framework", reason="installed in the cloudevents 1.x environment only (make test-cloudevents-1)"
)


@pytest.fixture(scope="module")
def servers():
    with serving({"decorated": {"HANDLER_FOLDER": function_folder("gcf_decorated"), "FUNCTION_TARGET": "hello_http", "PORT": "1"}}) as running:
        yield running


def test_the_library_brought_the_1x_cloudevents_generation():
    from funcwsgi.compat.cloudevents_lib import GENERATION

    assert GENERATION == 1


def test_decorated_function_is_served(servers):
    response = requests.post(servers["decorated"].url + "/", json={"name": "Grace"})
    assert response.json() == {"message": "Hello Grace!", "framework": "functions-framework"}
    response = requests.get(servers["decorated"].url + "/?name=Alan")
    assert response.json()["message"] == "Hello Alan!"


def test_binary_cloud_event_reaches_a_flask_function(servers):
    # The CloudEvents layer decodes with the 1.x library here; the function still gets its flask.Request.
    headers = {"ce-specversion": "1.0", "ce-type": "t", "ce-source": "/s", "ce-id": "1", "Content-Type": "application/json"}
    response = requests.post(servers["decorated"].url + "/", data='{"name": "Event"}', headers=headers)
    assert response.json()["message"] == "Hello Event!"
