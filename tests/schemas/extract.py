"""Write the request half of a CustomResourceDefinition's schema as test data.

    python tests/schemas/extract.py CRD.yaml VERSION OUT.yaml "SOURCE NOTE"

Keeps ``openAPIV3Schema`` of the served VERSION without ``status`` (a client
never sends it) and without descriptions (they only make the file long); every
other keyword, CEL rules included, is kept as published. The note says where
the CRD came from; tests/support/crd_schemas.py turns the result into a JSON Schema.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml


def strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: strip(value) for key, value in node.items() if key != "description"}
    if isinstance(node, list):
        return [strip(item) for item in node]
    return node


def main(crd_path: str, version: str, out_path: str, note: str) -> None:
    with open(crd_path) as handle:
        crd = next(doc for doc in yaml.safe_load_all(handle) if doc and doc.get("kind") == "CustomResourceDefinition")
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema = strip(served["schema"]["openAPIV3Schema"])
    schema["properties"].pop("status", None)
    header = f"# {crd['spec']['names']['kind']} {crd['spec']['group']}/{version}: {note}\n# Extracted by tests/schemas/extract.py: descriptions and status left out, nothing else changed.\n"
    with open(out_path, "w") as handle:
        handle.write(header + yaml.safe_dump(schema, sort_keys=True, width=200))


if __name__ == "__main__":
    main(*sys.argv[1:5])
