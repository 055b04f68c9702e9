main = 42
