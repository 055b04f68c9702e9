"""The hello world as a Kyma python314 function writes it: main() reading Flask's request."""

from flask import request


def main():
    return "Hello, world!" if request.method == "GET" else ""
