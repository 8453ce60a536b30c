"""A real headless Chromium for the report tests, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: commands on the child's fd 3, replies and events on its fd 4, each a JSON
message ended by a NUL byte). No WebDriver, no network port, no Python package beyond the standard library.

Why not `chromium --headless --window-size=420,... --screenshot`: a headless window is never narrower
than 500 CSS px, so a 420 px reader cannot be shown that way; Emulation.setDeviceMetricsOverride sets the
viewport to any width."""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL = "apt-get install -y chromium"


def find():
    for n in NAMES:
        p = shutil.which(n)
        if p:
            return p
    return None


def find_or_install():
    """(path, None) or (None, why not). As root with apt-get, a missing browser is installed (what
    scripts/deps.sh does for `make test`); otherwise the reason names the command to run."""
    p = find()
    if p:
        return p, None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, "chromium is not installed and this user cannot install it; run: sudo %s" % INSTALL
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        r = subprocess.run("apt-get update -qq && %s -qq" % INSTALL, shell=True, env=env, timeout=900,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    except subprocess.TimeoutExpired:
        return None, "chromium is not installed and `%s` timed out" % INSTALL
    p = find()
    if p:
        return p, None
    return None, "chromium is not installed and `%s` failed: %s" % (INSTALL, r.stdout.strip()[-400:])


class CdpError(Exception):
    pass


def _high(fd):
    """fd duplicated to a number >= 10 (so that dup2 onto 3 and 4 in the child cannot clobber it)."""
    h = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return h


class Browser:
    """One headless Chromium; use as a context manager. page(url, width) -> a Page."""

    def __init__(self, binary, timeout=30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="pmb-chromium-")
        cmd_r, cmd_w = (_high(f) for f in os.pipe())
        rsp_r, rsp_w = (_high(f) for f in os.pipe())

        def child():     # runs in the child before exec: the pipe ends become its fds 3 and 4 (inheritable)
            os.dup2(cmd_r, 3)
            os.dup2(rsp_w, 4)
        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--user-data-dir=" + self.profile, "--remote-debugging-pipe", "about:blank"]
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err,
                                     preexec_fn=child, close_fds=False)   # Python's own fds are not inheritable
        os.close(cmd_r)
        os.close(rsp_w)
        self.w, self.r = cmd_w, rsp_r
        self.buf = b""
        self.next_id = 0
        self.events = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.send("Browser.close")
            except (CdpError, OSError):
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self.w, self.r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode("utf-8", "replace")

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("no answer from chromium within %.0f s" % self.timeout)
            ready, _, _ = select.select([self.r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise CdpError("chromium closed the pipe (exit %s): %s" % (self.proc.poll(), self.stderr()[-800:]))
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg.decode("utf-8"))

    def send(self, method, params=None, session=None):
        """The command's result (a dict); CdpError on a protocol error."""
        self.next_id += 1
        mid = self.next_id
        m = {"id": mid, "method": method, "params": params or {}}
        if session:
            m["sessionId"] = session
        os.write(self.w, json.dumps(m).encode("utf-8") + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._read_message(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise CdpError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, session=None):
        deadline = time.monotonic() + self.timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method and (session is None or e.get("sessionId") == session):
                    return self.events.pop(i)
            msg = self._read_message(deadline)
            if "method" in msg:
                self.events.append(msg)

    def page(self, url, width, height=900):
        """Open url in a new tab whose viewport is width x height CSS px (device scale 1), wait for its
        load event, and return a Page."""
        tid = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        sid = self.send("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
        self.send("Page.enable", session=sid)
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False}, session=sid)
        self.send("Page.navigate", {"url": url}, session=sid)
        self.wait_event("Page.loadEventFired", session=sid)
        return Page(self, sid, width)


class Page:
    def __init__(self, browser, session, width):
        self.b = browser
        self.s = session
        self.width = width

    def eval(self, expression):
        """The value of a JavaScript expression (a promise is awaited), as JSON gives it back."""
        r = self.b.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                        session=self.s)
        if "exceptionDetails" in r:
            raise CdpError("JavaScript: %s" % json.dumps(r["exceptionDetails"])[:800])
        return r["result"].get("value")

    def screenshot(self, full_page=True, max_height=16000):
        """PNG bytes of the viewport, or of the whole page (up to max_height px) at the viewport's width."""
        params = {"format": "png"}
        if full_page:
            m = self.b.send("Page.getLayoutMetrics", session=self.s)
            size = m.get("cssContentSize") or m["contentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": self.width, "height": min(size["height"], max_height),
                                "scale": 1})
        return base64.b64decode(self.b.send("Page.captureScreenshot", params, session=self.s)["data"])
