from flask import request


def main():
    return "Hello, world!\n"


def params():
    return {"id": request.headers.get("X-Fission-Params-Id"), "body": request.get_data(as_text=True), "method": request.method}


def fail():
    raise RuntimeError("fission secret 99")
