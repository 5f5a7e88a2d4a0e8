#!/usr/bin/env bash
# Screenshots of the Temporal Web UI of a running `warden dev`, for README.md and docs/temporal-ui.md
# ("Find it in the Temporal UI"):
#   1. docs/temporal-ui-list.png      the workflow list filtered by $QUERY
#   2. docs/temporal-ui-workflow.png  the first workflow $QUERY finds: summary, details,
#                                     current details
#
# Needs chromium (Debian: `apt-get install -y chromium`) and python3 (standard library
# only); `make test` needs neither. To have a node waiting on its lifecycle hook, attach
# a deletion policy whose hook never answers, for example
#   hooks: {type: webhook, params: {url: "http://127.0.0.1:9/hooks"}, timeout: 3600}
# and scale in. Then:
#
#   docs/capture-ui.sh                      # the UI of `make run`, http://127.0.0.1:8233
#   UI=http://127.0.0.1:18233 docs/capture-ui.sh /tmp/shots
#
# Settings (environment): UI, NAMESPACE (default), QUERY, WAIT (seconds the single-page
# app gets to load, 8), SIZE (window, 1600,900), TAB (of the workflow's page,
# user-metadata; a path works too, e.g. history/events/5), EVAL (JavaScript run in the
# workflow's page before its screenshot, e.g. to fold a JSON node; none by default), BLOCK
# (a URL pattern chromium refuses on that page, e.g. '*/codec/*' to show payloads
# undecoded), CHROMIUM (the browser), CHROMIUM_LOG (its output, /dev/null). Headless
# chromium's --screenshot flag never finishes on a running workflow's page (the UI
# long-polls its history, which stops --virtual-time-budget), so the page is driven over
# the DevTools protocol.
#
# docs/temporal-ui-decoded.png (docs/payload-encryption.md §The codec server) is
# temporal-ui-workflow.png of a stack created with a hidden parameter, its create update
# shown with "template" folded so that "parameters" fits:
#   QUERY='WorkflowId="stack:<id>"' TAB=history/events/5 SIZE=1600,1380 EVAL='(() => {
#     const v = [...document.querySelectorAll(".cm-editor")].find((e) => e.offsetHeight);
#     const t = [...v.querySelectorAll(".cm-line")]
#       .find((l) => l.textContent.includes("\"template\"")).getBoundingClientRect().top;
#     [...v.querySelectorAll(".cm-foldGutter .cm-gutterElement")]
#       .find((g) => Math.abs(g.getBoundingClientRect().top - t) < 3).firstElementChild.click();
#   })()' docs/capture-ui.sh /tmp/shots
# docs/temporal-ui-encrypted.png is the same without EVAL, with BLOCK='*/codec/*'.
set -euo pipefail

UI=${UI:-http://127.0.0.1:8233}
NAMESPACE=${NAMESPACE:-default}
QUERY=${QUERY:-'WardenKind="node-delete" AND ExecutionStatus="Running"'}
WAIT=${WAIT:-8}
SIZE=${SIZE:-1600,900}
TAB=${TAB:-user-metadata}
EVAL=${EVAL:-}
BLOCK=${BLOCK:-}
OUT=${1:-$(cd "$(dirname "$0")" && pwd)}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || { echo "capture-ui.sh: chromium not found (apt-get install -y chromium)" >&2; exit 1; }

profile=$(mktemp -d)
"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$profile" --window-size="$SIZE" \
  --remote-debugging-address=127.0.0.1 --remote-debugging-port=0 about:blank \
  >"${CHROMIUM_LOG:-/dev/null}" 2>&1 &
chromium_pid=$!
trap 'kill "$chromium_pid" 2>/dev/null; wait "$chromium_pid" 2>/dev/null; rm -rf "$profile"' EXIT

mkdir -p "$OUT"
UI=$UI NAMESPACE=$NAMESPACE QUERY=$QUERY WAIT=$WAIT TAB=$TAB EVAL=$EVAL BLOCK=$BLOCK OUT=$OUT PROFILE=$profile python3 - <<'PY'
import base64, json, os, socket, struct, time, urllib.parse, urllib.request
from pathlib import Path

ui, ns, query = os.environ["UI"].rstrip("/"), os.environ["NAMESPACE"], os.environ["QUERY"]
wait, out, tab = float(os.environ["WAIT"]), Path(os.environ["OUT"]), os.environ["TAB"]
script, block = os.environ["EVAL"], os.environ["BLOCK"]


def devtools_port() -> int:
    active = Path(os.environ["PROFILE"], "DevToolsActivePort")
    for _ in range(100):
        if active.is_file() and active.read_text().strip():
            return int(active.read_text().split()[0])
        time.sleep(0.1)
    raise SystemExit("capture-ui.sh: chromium did not start")


class Page:
    """The smallest DevTools client: one WebSocket to one page."""

    def __init__(self, ws_url: str) -> None:
        url = urllib.parse.urlsplit(ws_url)
        self.sock = socket.create_connection((url.hostname, url.port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise SystemExit(f"capture-ui.sh: DevTools refused: {head!r}")
        self.next_id = 0

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise SystemExit("capture-ui.sh: DevTools closed the connection")
            data += chunk
        return data

    def _send(self, text: str) -> None:
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (
            bytes([0x80 | n]) if n < 126
            else bytes([0xFE]) + struct.pack(">H", n) if n < 65536
            else bytes([0xFF]) + struct.pack(">Q", n)
        )
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _receive(self) -> dict:
        message = b""
        while True:
            first, second = self._exact(2)
            n = second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            message += self._exact(n)
            if first & 0x80:
                return json.loads(message)

    def call(self, method: str, **params: object) -> dict:
        self.next_id += 1
        self._send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            reply = self._receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise SystemExit(f"capture-ui.sh: {method}: {reply['error']}")
                return reply["result"]

    def shoot(self, url: str, path: Path, script: str = "") -> None:
        self.call("Page.navigate", url=url)
        time.sleep(wait)
        if script:
            result = self.call("Runtime.evaluate", expression=script, awaitPromise=True)
            if "exceptionDetails" in result:
                raise SystemExit(f"capture-ui.sh: EVAL failed: {result['exceptionDetails']}")
            time.sleep(1)
        png = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        path.write_bytes(png)
        print(f"{path} ({len(png) // 1024} KB) <- {url}")


def open_page() -> Page:
    """A new connection to chromium's page (one per step: a renderer swap may drop one)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
        target = next(t for t in json.load(answer) if t["type"] == "page")
    return Page(target["webSocketDebuggerUrl"])


port = devtools_port()
page = open_page()

# The list shows Warden's search attributes as columns (the UI keeps its columns in
# localStorage, per namespace); a UI that stores them otherwise shows its defaults.
columns = ["Status", "Workflow ID", "WardenStatus", "WardenTarget", "Type"]
page.call("Page.navigate", url=f"{ui}/namespaces/{ns}/workflows")
time.sleep(wait / 2)
setting = json.dumps({ns: [{"label": label} for label in columns]})
page.call("Runtime.evaluate", expression=f"localStorage.setItem("
          f"'namespace-workflow-table-columns', {json.dumps(setting)})")

encoded = urllib.parse.quote(query, safe="")
page = open_page()
page.shoot(f"{ui}/namespaces/{ns}/workflows?query={encoded}", out / "temporal-ui-list.png")

with urllib.request.urlopen(f"{ui}/api/v1/namespaces/{ns}/workflows?query={encoded}") as answer:
    found = json.load(answer).get("executions") or []
if not found:
    raise SystemExit(f"capture-ui.sh: no workflow matches {query}")
execution = found[0]["execution"]
workflow_id = urllib.parse.quote(execution["workflowId"], safe="")
page = open_page()
if block:
    page.call("Network.enable")
    page.call("Network.setBlockedURLs", urls=[block])
page.shoot(
    f"{ui}/namespaces/{ns}/workflows/{workflow_id}/{execution['runId']}/{tab}",
    out / "temporal-ui-workflow.png",
    script,
)
PY
