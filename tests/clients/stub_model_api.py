"""A stand-in for a model's HTTP API on 127.0.0.1: saves the first request body that lists
tools to FILE and answers every POST with HTTP 400, so the client stops after one request.

Usage: stub_model_api.py FILE. Prints the port it listens on, then serves until killed.
"""
import http.server
import json
import sys

out = sys.argv[1]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if b'"tools"' in body:
            with open(out, "wb") as f:
                f.write(body)
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        error = {"type": "invalid_request_error", "message": "stub", "code": 400}
        self.wfile.write(json.dumps({"type": "error", "error": error}).encode())

    def do_GET(self):
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
