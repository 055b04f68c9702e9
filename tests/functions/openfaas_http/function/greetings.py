PREFIX = "Hello from OpenFaaS! "
