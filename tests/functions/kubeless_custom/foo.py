# The custom-runtime example of Kubeless's runtime documentation: handler "foo.foo".
def foo(event, context):
    return "hello world"
