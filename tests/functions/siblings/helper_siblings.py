GREETING = "hello from a sibling module"
