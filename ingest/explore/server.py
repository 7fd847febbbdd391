"""Serving the explorer: the standard library's WSGI server, a thread per request (DuckDB answers each
through a cursor of its own), bound to 127.0.0.1 unless the user names another address."""
from __future__ import annotations

import socketserver
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

LOOPBACK = "127.0.0.1"


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):      # noqa: A002 - the standard library's name
        pass


def serve(app, host: str = LOOPBACK, port: int = 8765):
    """A server for APP at HOST:PORT (port 0: any free one); the caller runs serve_forever()."""
    return make_server(host, port, app, server_class=ThreadingWSGIServer, handler_class=QuietHandler)
