"""The explorer's server as a security reviewer meets it, over real sockets: only the host names it
serves (DNS rebinding), a bounded pool that answers 503 with Retry-After when full, the standard
library's own error pages with the security headers, no Python version in the Server header, and a
page's queries under one time limit. The application's pages are test_explore.py's."""
from __future__ import annotations

import socket
import threading
import time
from contextlib import closing

import duckdb
import pytest

from ingest.explore.app import CSP
from ingest.explore.server import LOOPBACK_NAMES, allowed_hosts, host_allowed, host_name, serve
from ingest.explore.snapshot import TimedOut, time_limit


@pytest.mark.parametrize("header, name", [("localhost:8765", "localhost"), ("[::1]:8765", "::1"), ("127.0.0.1", "127.0.0.1"),
                                          ("Evil.Example:80", "evil.example"), ("::1", "::1")])
def test_a_host_header_is_read_without_its_port(header, name):
    assert host_name(header) == name


def test_only_the_names_served_are_answered():
    loopback = allowed_hosts("127.0.0.1")
    for header in ("localhost:8765", "127.0.0.1:8765", "[::1]:8765", "LOCALHOST", "localhost.:8765", None):
        assert host_allowed(header, loopback), header
    for header in ("evil.example:8765", "127.0.0.1.nip.io", "localhost.evil.example", "10.0.0.5:8765", "", "[::2]"):
        assert not host_allowed(header, loopback), header
    proxied = allowed_hosts("127.0.0.1", ("explore.lab.example",))
    assert host_allowed("explore.lab.example", proxied) and not host_allowed("other.lab.example", proxied)
    # bound to every address: the machine's names and any address literal (a rebinding needs a name)
    everywhere = allowed_hosts("0.0.0.0")
    assert host_allowed(f"{socket.gethostname()}:8765", everywhere) and host_allowed("192.168.1.20:8765", everywhere)
    assert not host_allowed("evil.example", everywhere)
    assert LOOPBACK_NAMES <= everywhere


def _request(port: int, raw: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(raw)
        return connection.makefile("rb").read().decode("latin-1")


@pytest.fixture
def slow_server():
    """A server of one worker whose application takes 1.5 s: a second request meanwhile finds it full."""
    release = threading.Event()

    def app(environ, start_response):
        release.wait(1.5)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"done"]

    server = serve(app, "127.0.0.1", 0, workers=1)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_port
    release.set()
    server.shutdown()
    server.server_close()


def test_a_full_pool_answers_503_with_retry_after_at_once(slow_server):
    first = {}
    worker = threading.Thread(target=lambda: first.setdefault("reply", _request(slow_server, b"GET / HTTP/1.0\r\n\r\n")))
    worker.start()
    time.sleep(0.3)
    started = time.perf_counter()
    busy = _request(slow_server, b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
    took = time.perf_counter() - started
    worker.join()
    head = busy.split("\r\n\r\n")[0]
    assert head.startswith("HTTP/1.1 503") and "Retry-After: 2" in head and f"Content-Security-Policy: {CSP}" in head
    assert took < 1.0                                     # not queued behind the slow page
    assert first["reply"].startswith("HTTP/1.0 200") and first["reply"].endswith("done")
    assert _request(slow_server, b"GET / HTTP/1.0\r\n\r\n").startswith("HTTP/1.0 200")     # the slot is free again


@pytest.fixture
def quick_server():
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"done"]

    server = serve(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_port
    server.shutdown()
    server.server_close()


def test_the_standard_librarys_own_errors_carry_the_headers_and_no_python_version(quick_server):
    too_long = _request(quick_server, b"GET /" + b"a" * 70000 + b" HTTP/1.0\r\n\r\n")
    head = too_long.split("\r\n\r\n")[0]
    assert head.startswith("HTTP/1.0 414") and f"Content-Security-Policy: {CSP}" in head
    assert "X-Content-Type-Options: nosniff" in head and "X-Frame-Options: DENY" in head
    crowded = _request(quick_server, b"GET / HTTP/1.0\r\n" + b"X-A: b\r\n" * 120 + b"\r\n")
    assert " 431 " in crowded.split("\r\n")[0] and f"Content-Security-Policy: {CSP}" in crowded
    server_header = next(line for line in _request(quick_server, b"GET / HTTP/1.0\r\n\r\n").split("\r\n") if line.startswith("Server:"))
    assert server_header == "Server: hindsight-explore", server_header


def test_a_taken_port_is_an_oserror_for_the_cli_to_say():
    with closing(socket.socket()) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            serve(lambda e, s: [], "127.0.0.1", taken.getsockname()[1])


def test_every_cursor_of_a_request_is_stopped_at_its_time_limit():
    con = duckdb.connect()
    started = time.perf_counter()
    with pytest.raises(TimedOut):
        with time_limit(0.5):
            from ingest.explore.snapshot import Pinned
            Pinned("x", con, {}).cursor().execute("select count(*) from range(100000000000) a, range(10) b").fetchall()
    assert time.perf_counter() - started < 5
    with time_limit(5):                                  # a quick one goes through
        assert con.cursor().execute("select 42").fetchone() == (42,)
