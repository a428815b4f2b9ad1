#!/usr/bin/env python3
"""A webhook receiver for the webhook benchmark: answers 200 at once (HTTP/1.1, keep-alive) and
writes one line per request to its log: receipt time (Unix ms), webhook-id, and, with
--latency, the commit times of the request's actions (to time commit → receipt).

    bench/webhook_receiver.py LOG [--latency]

Prints the port it listens on (127.0.0.1, chosen by the kernel) as its first line."""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log_path = sys.argv[1]
latency = "--latency" in sys.argv[2:]
log = open(log_path, "a", buffering=1)
lock = threading.Lock()


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        received = int(time.time() * 1000)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()
        line = f"{received} {self.headers.get('webhook-id', '')}"
        if latency:
            actions = json.loads(body)["data"]["actions"]
            line += " " + " ".join(a["timestamp"] for a in actions)
        with lock:
            log.write(line + "\n")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
