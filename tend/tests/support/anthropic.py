"""A stand-in for the Anthropic Messages API, for the opt-in tests that run
the real Claude Code CLI offline (tend/tests/answer.rs).

The main agent turn (a streamed request with the agent's tools) answers
with a Bash tool call, `rm -rf ./build`, so that Claude Code shows its
approval dialog; once the request carries the tool's result it answers
"Done." A turn asking to "Run the long command in the background" answers
with a background Bash call instead (`sleep 12`, or as many seconds as
STANDIN_BACKGROUND_SECS says; run_in_background), logged as
"background_call" (tend/tests/run_relay.rs, tend/tests/session_files.rs). Every other request (titles, probes) gets a short text. Each
request is logged as one JSON line: {"kind": "tool_call" | "after_result"
| "aux", "result": <the tool_result text, if any>} (a turn after a denied
call carries the refusal as its result).

usage: anthropic.py PORT_FILE LOG_FILE
"""

import json
import os
import sys
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]
BACKGROUND_SECS = int(os.environ.get("STANDIN_BACKGROUND_SECS", "12"))


def log(rec):
    with open(LOG_FILE, "a") as f:
        f.write(json.dumps(rec) + "\n")


def last_user(body):
    for m in reversed(body.get("messages") or []):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c, None
        texts, result = [], None
        for b in c or []:
            if b.get("type") == "text":
                texts.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                r = b.get("content")
                result = r if isinstance(r, str) else json.dumps(r)
        return "\n".join(texts), result
    return "", None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply_json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply_json({"data": []})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}")
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self.reply_json({"input_tokens": 1000})
        tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        text, result = last_user(body)
        main = body.get("stream") and len(tools) >= 5 and body.get("max_tokens") != 1
        # A prompt after a denied call carries the refusal as a tool result
        # beside the new text: still a new turn.
        if main and "Clean the build directory" in text:
            log({"kind": "tool_call", "result": result})
            return self.stream(body, tool=True)
        if main and "Run the long command in the background" in text and result is None:
            log({"kind": "background_call"})
            return self.stream(body, tool=True, tool_input={
                "command": "sleep %d; echo finished" % BACKGROUND_SECS,
                "description": "Run the long command",
                "run_in_background": True})
        if main and result is not None:
            log({"kind": "after_result", "result": result})
            return self.stream(body, tool=False, text="Done.")
        log({"kind": "aux"})
        if body.get("stream"):
            return self.stream(body, tool=False, text="Fake session")
        self.reply_json({
            "id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
            "model": body.get("model", ""), "content": [{"type": "text", "text": "Fake session"}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 3}})

    def stream(self, body, tool, text="", tool_input=None):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def sse(event, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode())
            self.wfile.flush()

        sse("message_start", {"type": "message_start", "message": {
            "id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
            "model": body.get("model", ""), "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 1200, "output_tokens": 1}}})
        if tool:
            sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:22], "name": "Bash", "input": {}}})
            args = json.dumps(tool_input or {"command": "rm -rf ./build",
                                             "description": "Remove the build directory"})
            sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "input_json_delta", "partial_json": args}})
            stop = "tool_use"
        else:
            sse("content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "text", "text": ""}})
            sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": text}})
            stop = "end_turn"
        sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        sse("message_delta", {"type": "message_delta",
                              "delta": {"stop_reason": stop, "stop_sequence": None},
                              "usage": {"output_tokens": 20}})
        sse("message_stop", {"type": "message_stop"})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
