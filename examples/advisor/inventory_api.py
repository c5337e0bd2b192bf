"""A small inventory API for the advisor example: 12 items, a bearer token.

GET /item-ids    the 12 item IDs
GET /items       every item (the collection route)
GET /items/ID    one item
Anything else is 404; a request without `Authorization: Bearer $INVENTORY_TOKEN` is 401.
Serves on 127.0.0.1 at the port given (0: any free one) and prints `listening PORT`.
"""
import http.server
import json
import os
import sys

ITEMS = [{"id": f"sku-{n:03d}", "name": name, "stock": stock}
         for n, (name, stock) in enumerate([
             ("bolt", 120), ("nut", 340), ("washer", 95), ("hinge", 18), ("bracket", 42),
             ("spring", 77), ("rivet", 510), ("gasket", 23), ("clamp", 61), ("pin", 260),
             ("valve", 9), ("seal", 35)], start=1)]
BY_ID = {item["id"]: item for item in ITEMS}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the standard library's name)
        if self.headers.get("Authorization") != "Bearer " + os.environ["INVENTORY_TOKEN"]:
            return self.answer(401, {"error": "unauthenticated"})
        if self.path == "/item-ids":
            return self.answer(200, [item["id"] for item in ITEMS])
        if self.path == "/items":
            return self.answer(200, ITEMS)
        if self.path.startswith("/items/") and self.path[7:] in BY_ID:
            return self.answer(200, BY_ID[self.path[7:]])
        return self.answer(404, {"error": "not_found"})

    def answer(self, status, document):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
