from .func import new

__all__ = ["new"]
