# Kubeless's runtime examples stable/python/examples/helloget.py and hellowithdata.py.
def foo(event, context):
    return "hello world"


def handler(event, context):
    print(event)
    return event['data']
