from .func import handle

__all__ = ["handle"]
