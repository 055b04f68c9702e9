"""HTTP servers that serve a funcwsgi application, behind one interface."""
