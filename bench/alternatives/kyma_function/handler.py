"""The same hello world in the Kyma/Kubeless calling convention."""


def main(event, context):
    return "Hello, world!"
