# The typed function of functions-framework-python's own conformance run (tests/conformance/main.py at
# d13d9aa4666b, Apache-2.0, Google LLC), which its CI serves with `functions-framework --target
# typed_conformance_test` and the conformance client checks with -type=http -declarative-type=typed.
import functions_framework


class RawJson:
    data: dict

    def __init__(self, data):
        self.data = data

    @staticmethod
    def from_dict(obj: dict) -> "RawJson":
        return RawJson(obj)

    def to_dict(self) -> dict:
        return self.data


@functions_framework.typed(RawJson)
def typed_conformance_test(x):
    return RawJson({"payload": x.data})
