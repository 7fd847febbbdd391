"""Serving the explorer: the standard library's WSGI server, bound to 127.0.0.1 unless the user names
another address, with a bounded pool of request threads (DuckDB answers each through a cursor of its
own).

Three things a local server owes the machine it runs on:
- it answers only the host names it serves (`allowed_hosts`): a web page visited meanwhile cannot
  read the marts through a name that rebinds to 127.0.0.1 (DNS rebinding), as Jupyter refuses too;
- a full pool is a 503 with Retry-After at once, never a queue of threads without end;
- even the standard library's own error pages (a 414 for a request line too long) carry the security
  headers, and no header names the Python version.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from functools import partial
from http import HTTPStatus
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer, make_server

LOOPBACK = "127.0.0.1"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
WORKERS = 8                  # requests served at once; the next gets a 503
RETRY_AFTER = 2              # seconds, in the 503's Retry-After
READ_TIMEOUT = 30            # seconds a client may take to send its request
SERVER_NAME = "hindsight-explore"
# every page's policy: its own stylesheet and script, nothing inline, nothing from another origin
CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
HEADERS = [("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
           ("X-Frame-Options", "DENY"), ("Cache-Control", "no-store")]


def host_name(header: str) -> str:
    """The name in a Host header, without its port, lower-case: `[::1]:8765` -> `::1`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    if header.count(":") == 1:
        return header.split(":", 1)[0]
    return header                        # a bare name, or an IPv6 address without brackets


def allowed_hosts(host: str, also: tuple[str, ...] = ()) -> frozenset[str]:
    """The Host names a server bound to HOST answers: the loopback names, HOST itself and what it
    resolves to, and ALSO (--allow-host: a reverse proxy's name, say). Bound to every address (0.0.0.0),
    the machine's own names too, and any address as a literal (a rebinding needs a name)."""
    names = set(LOOPBACK_NAMES) | {name.lower().strip("[]") for name in also}
    if host in WILDCARDS:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower(), "*ip"}
    else:
        names.add(host.lower())
        try:
            names |= {info[4][0] for info in socket.getaddrinfo(host, None)}
        except OSError:
            pass
    return frozenset(names)


def host_allowed(header: str | None, allowed: frozenset[str]) -> bool:
    """Whether a request with Host HEADER is for this server (no header: an HTTP/1.0 client, or a call
    in process; a browser always sends one)."""
    if header is None:
        return True
    name = host_name(header).rstrip(".")
    if name in allowed:
        return True
    if "*ip" in allowed:
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return False
    return False


class Answer(ServerHandler):
    server_software = SERVER_NAME        # wsgiref's own names the Python version


class Handler(WSGIRequestHandler):
    server_version = SERVER_NAME
    timeout = READ_TIMEOUT

    def version_string(self):
        return self.server_version

    def handle(self):
        """The standard library's, with the Server header above."""
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.requestline = self.request_version = self.command = ""
            self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG)
            return
        if not self.parse_request():     # an error page is sent
            return
        handler = Answer(self.rfile, self.wfile, self.get_stderr(), self.get_environ(), multithread=False)
        handler.request_handler = self
        handler.run(self.server.get_app())

    def log_message(self, format, *args):      # noqa: A002 - the standard library's name
        pass

    def send_error(self, code, message=None, explain=None):
        """The standard library's own errors (400 for a malformed request, 414, 431), with the headers
        every page of the explorer carries."""
        status = HTTPStatus(code)
        body = (f"<!doctype html><title>{status.value} {status.phrase}</title>"
                f"<h1>{status.value} {status.phrase}</h1><p>{status.description}</p>").encode()
        self.log_error("code %d, message %s", code, message)
        self.close_connection = True
        self.send_response(code, status.phrase)
        for name, value in [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body))),
                            ("Connection", "close"), *HEADERS]:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(body)


class BoundedWSGIServer(WSGIServer):
    """A thread per request, at most WORKERS at once; over that, a 503 with Retry-After."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self, *args, workers: int = WORKERS, **kwargs):
        self.slots = threading.BoundedSemaphore(workers)
        self.refusals = threading.BoundedSemaphore(64)    # busy answers being written at once
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address):
        if self.slots.acquire(blocking=False):
            threading.Thread(target=self._serve, args=(request, client_address, self.slots), daemon=True).start()
        elif self.refusals.acquire(blocking=False):
            threading.Thread(target=self._busy, args=(request,), daemon=True).start()
        else:
            self.shutdown_request(request)

    def _serve(self, request, client_address, slots):
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - the standard library's own report of a broken connection
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            slots.release()

    def _busy(self, request):
        """The request read (so the client sees the answer, not a reset connection), then a 503."""
        try:
            request.settimeout(2)
            seen = b""
            while b"\r\n\r\n" not in seen and len(seen) < 65536:
                chunk = request.recv(4096)
                if not chunk:
                    break
                seen += chunk
            body = b"The explorer is busy with other pages: try again in a moment.\n"
            head = ["HTTP/1.1 503 Service Unavailable", f"Server: {SERVER_NAME}", f"Retry-After: {RETRY_AFTER}",
                    "Content-Type: text/plain; charset=utf-8", f"Content-Length: {len(body)}", "Connection: close",
                    *(f"{name}: {value}" for name, value in HEADERS)]
            request.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        except OSError:
            pass
        finally:
            self.shutdown_request(request)
            self.refusals.release()


class BoundedWSGIServer6(BoundedWSGIServer):
    address_family = socket.AF_INET6


def serve(app, host: str = LOOPBACK, port: int = 8765, workers: int = WORKERS):
    """A server for APP at HOST:PORT (port 0: any free one); the caller runs serve_forever(). OSError
    when the port is taken."""
    kind = BoundedWSGIServer6 if ":" in host else BoundedWSGIServer
    return make_server(host, port, app, server_class=partial(kind, workers=workers), handler_class=Handler)
