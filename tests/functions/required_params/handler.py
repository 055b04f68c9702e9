def main(a, b, c):
    pass
