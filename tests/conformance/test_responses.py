"""C2: what the function's answers become on the wire: return values and the res object."""

from __future__ import annotations


def content_type(response) -> str:
    return response.headers["Content-Type"].split(";")[0].strip()


def test_text_is_plain_utf8_text(runtime):
    response = runtime.get("/hello")
    assert (response.status_code, response.text) == (200, "hello")
    assert response.headers["Content-Type"].replace(" ", "").lower() == "text/plain;charset=utf-8"
    assert response.headers["Content-Length"] == "5"


def test_objects_are_json(runtime):
    response = runtime.get("/json")
    assert content_type(response) == "application/json"
    assert response.json() == {"a": 1, "list": [1, "two"], "text": "ü"}
    assert response.headers["Content-Length"] == str(len(response.content))


def test_arrays_are_json(runtime):
    response = runtime.get("/return/list")
    assert content_type(response) == "application/json"
    assert response.json() == [1, "two", None]


def test_bytes_are_octet_stream(runtime):
    response = runtime.get("/return/bytes")
    assert content_type(response) == "application/octet-stream"
    assert response.content == b"\x00\x01binary"


def test_nothing_returned_is_an_empty_200(runtime):
    response = runtime.get("/return/none")
    assert (response.status_code, response.content) == (200, b"")


def test_returning_res_sends_it(runtime):
    response = runtime.get("/return/res")
    assert (response.status_code, response.json()) == (201, {"id": 7})
    assert content_type(response) == "application/json"


def test_the_runtimes_own_response_object_passes_through(runtime):
    response = runtime.get("/return/native")
    assert (response.status_code, response.text) == (202, "native")
    assert response.headers["X-Native"] == "yes"
    assert content_type(response) == "text/x-native"


def test_an_iterable_is_streamed_without_content_length(runtime):
    response = runtime.get("/return/stream")
    assert (response.status_code, response.text) == (200, "abc")
    assert "Content-Length" not in response.headers


def test_status_codes_are_kept(runtime):
    for code in (201, 202, 404, 418):
        response = runtime.get(f"/status/{code}")
        assert (response.status_code, response.text) == (code, f"status {code}")


def test_204_has_no_body(runtime):
    response = runtime.get("/status/204")
    assert response.status_code == 204 and response.content == b""


def test_headers_are_sent(runtime):
    assert runtime.get("/headers").headers["X-Conformance"] == "yes"


def test_body_round_trips_byte_for_byte(runtime):
    body = bytes(range(256)) * 4
    response = runtime.request("POST", "/echo", data=body, headers={"Content-Type": "application/x-test"})
    assert response.content == body
    assert response.headers["Content-Type"] == "application/x-test"


def test_res_set_text(runtime):
    response = runtime.get("/res/text")
    assert response.text == "text body"
    assert response.headers["Content-Type"].replace(" ", "").lower() == "text/plain;charset=utf-8"


def test_res_set_json(runtime):
    response = runtime.get("/res/json")
    assert content_type(response) == "application/json" and response.json() == {"ok": True}


def test_res_set_data(runtime):
    response = runtime.get("/res/bytes")
    assert content_type(response) == "application/octet-stream" and response.content == b"\x00\x01"


def test_res_setters_chain(runtime):
    response = runtime.get("/res/chain")
    assert (response.status_code, response.text, response.headers["X-Chained"]) == (201, "chained", "yes")


def test_res_camel_case_names(runtime):
    response = runtime.get("/res/camel")
    assert (response.status_code, response.text, response.headers["X-Camel"]) == (203, "camel", "yes")


def test_a_return_value_keeps_the_status_and_headers_set_on_res(runtime):
    response = runtime.get("/res/kept")
    assert (response.status_code, response.text, response.headers["X-Kept"]) == (202, "returned", "yes")
    assert content_type(response) == "text/plain"
