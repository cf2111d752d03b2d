#!/usr/bin/env python3
"""The operators' console in a real browser (spec §12, docs/console.md).

Starts the fake backend of tests/forward (as fake_backend_server), a real `healthhook
serve` with a generated config and generated secrets (signing secret, read token, admin
token, the backend's secret), sends signed deliveries (signed by `healthhook sign`), and
drives headless Chromium through Debian's chromium-driver with selenium:

  - no page loads without sign-in; the read token signs in to a read-only console;
  - the overview shows the number of deliveries that were sent;
  - deliveries: search by client user id, open one, see its body;
  - users: the heart-rate chart draws exactly the points that were sent (counted in the
    SVG the page renders);
  - users: a summaries chart whose range holds more than the 1,000 summaries it reads says
    so under it (later days are not drawn), rather than drawing them as empty;
  - users: a user whose connections and devices pass the 8 MiB of one answer says that not
    all are shown;
  - with the read token the actions are absent and the action routes answer 403;
  - a request without the CSRF token is refused;
  - with the admin token: requeue the forwards a backend answering 410 made dead, see them
    leave the dead list and reach the backend; pause the destination, send a delivery, see
    it pending, resume, see it arrive;
  - no page makes a request to another origin (resource timing of every page, and no
    Content-Security-Policy report in the browser's log);
  - a deeply nested body is shown as received, quickly, under its envelope and error;
  - at a phone's width (375 px) the page is no wider than the screen and "Sign out" is on it;
  - a destination whose [[forward]] block was removed is shown "not configured" with its
    entries, and one destination whose entries do not load leaves the others shown.

Screenshots of each page go to --artifacts. Bounded waits only (counts and deadlines, no
timing assertion). Exit 0 when every check passed; the last line is "N passed, N failed".
"""
import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import queue
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    print("console_browser_test: python3-selenium is missing: run scripts/install-deps --for-tests "
          "(Debian's chromium, chromium-driver and python3-selenium)", file=sys.stderr)
    print("0 passed, 1 failed")
    sys.exit(1)

WAIT_S = 20          # any one thing the page should show
FORWARD_WAIT_S = 45  # forwarding: retries and the forwarder's look at the outbox
HEART_POINTS = 30
SECOND_SOURCE_POINTS = 12
USER_ID = str(uuid.UUID(int=0x5eed0000_0000_4000_8000_000000000042))
CLIENT_USER_ID = "client-42"
# Another user's client user id, shaped like a UUID (a backend may use UUIDs too).
OTHER_CLIENT_USER_ID = str(uuid.UUID(int=0xc11e0000_0000_4000_8000_000000000007))
# A user id that is no UUID (a capture written by hand, a replay): still searched as a user id.
PLAIN_USER_ID = "user-\u00fc-1"
SHARED_CLIENT_SECOND_USER = str(uuid.UUID(int=0x5ec0_0000_0000_4000_8000_000000000099))
BLOOD_PRESSURE_POINTS = 3
# A user with a dense series: 1,200 glucose samples a second apart, two hours ago. In the 30d
# range (72-minute buckets) the twenty minutes fall into one or two buckets, one of which
# holds more samples than a page of the list.
DENSE_USER_ID = str(uuid.UUID(int=0xde05e000_0000_4000_8000_000000000001))
DENSE_POINTS = 1200
# The second server's (checks after the first stopped): a user whose only delivery failed
# (no users row), ids "." and "..", a user with two workouts on one day, and more pending
# forwards than one page of entries holds.
FAILED_USER_ID = str(uuid.UUID(int=0xfa11ed00_0000_4000_8000_000000000001))
WORKOUT_USER_ID = str(uuid.UUID(int=0x30c0_0000_0000_4000_8000_000000000005))
MANY_FORWARDS = 1001
# A user with more sleep summaries in the 30d range than the chart reads (one page of 1,000).
CUT_CHART_USER_ID = str(uuid.UUID(int=0xc0700000_0000_4000_8000_000000000003))
SUMMARIES_PER_CHART = 1000
# A user whose devices pass the 8 MiB an answer holds (GET /v1/users/{id} says truncated).
BIG_USER_ID = str(uuid.UUID(int=0xb1600000_0000_4000_8000_000000000004))


def log(message):
    print(message, flush=True)


class FakeBackend:
    """tests/forward's fake backend as a child process: answers `status`, records what it accepted."""

    def __init__(self, binary, secret_file, status):
        self.process = subprocess.Popen([binary, "--secret-file", secret_file, "--status", str(status)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        first = self.process.stdout.readline().split()
        if len(first) != 2 or first[0] != "port":
            raise RuntimeError("fake_backend_server did not start")
        self.port = int(first[1])
        self.accepted = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            with self.lock:
                self.accepted.append(json.loads(line))

    def set_status(self, status):
        self.process.stdin.write("status %d\n" % status)
        self.process.stdin.flush()

    def bodies(self):
        with self.lock:
            return [a["body"] for a in self.accepted]

    def ids(self):
        with self.lock:
            return {a["id"] for a in self.accepted}

    def stop(self):
        try:
            self.process.stdin.write("quit\n")
            self.process.stdin.flush()
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()


class Server:
    """`healthhook serve` with a config in `folder`; its JSON log lines from stderr."""

    def __init__(self, binary, folder, config):
        self.binary = binary
        self.folder = folder
        path = os.path.join(folder, "healthhook.toml")
        with open(path, "w") as f:
            f.write(config)
        self.lines = queue.Queue()
        self.log_lines = []
        self.process = subprocess.Popen([binary, "serve", "--config", path], cwd=folder,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.time() + WAIT_S
        self.base = None
        while time.time() < deadline and self.base is None:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "console":
                self.base = event["url"].removesuffix("/console/")
        if self.base is None:
            raise RuntimeError("healthhook serve did not log its console address:\n" + "\n".join(self.log_lines))

    def _read(self):
        for line in self.process.stderr:
            self.log_lines.append(line.rstrip("\n"))
            self.lines.put(line)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def whsec():
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def write_secret(folder, name, value):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(value + "\n")
    os.chmod(path, 0o600)
    return path


def send_delivery(args, server, secret_file, body, message_id=None):
    """POSTs `body` signed by `healthhook sign`; returns the message id."""
    signed = subprocess.run([args.healthhook, "sign", "--secret-file", secret_file] +
                            (["--id", message_id] if message_id else []), input=body, text=True,
                            capture_output=True, check=True)
    headers = {"Content-Type": "application/json"}
    for line in signed.stdout.splitlines():
        name, value = line.split(": ", 1)
        headers[name] = value
    request = urllib.request.Request(server.base + "/webhooks", data=body.encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=WAIT_S) as response:
        if response.status != 200:
            raise RuntimeError("delivery answered %d" % response.status)
    return headers["svix-id"]


def send_many(server, secret_file, bodies):
    """POSTs each body signed here (Standard Webhooks, as `healthhook sign`) on one connection:
    a thousand `healthhook sign` processes would take minutes."""
    with open(secret_file) as f:
        key = base64.b64decode(f.read().strip().removeprefix("whsec_"))
    connection = http.client.HTTPConnection(urllib.parse.urlsplit(server.base).netloc, timeout=WAIT_S)
    try:
        for body in bodies:
            message_id = "msg_" + secrets.token_hex(12)
            timestamp = str(int(time.time()))
            digest = hmac.new(key, ("%s.%s.%s" % (message_id, timestamp, body)).encode(), hashlib.sha256).digest()
            connection.request("POST", "/webhooks", body=body.encode(), headers={
                "Content-Type": "application/json", "svix-id": message_id, "svix-timestamp": timestamp,
                "svix-signature": "v1," + base64.b64encode(digest).decode()})
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError("delivery answered %d" % response.status)
    finally:
        connection.close()


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + "+00:00"


def heart_rate_body(now_ms):
    points = [{"timestamp": iso(now_ms - (HEART_POINTS - i) * 60_000), "unit": "bpm", "value": 60 + i,
               "timezone_offset": 0, "type": None, "id": None} for i in range(HEART_POINTS)]
    # "exact": tokens a JSON round trip in the browser would change (shown as received).
    return json.dumps({"event_type": "daily.data.heartrate.created", "user_id": USER_ID,
                       "client_user_id": CLIENT_USER_ID, "team_id": "team-1",
                       "exact": [12345678901234567890, 72.0],
                       "data": {"user_id": USER_ID, "source": {"provider": "garmin", "type": "watch"},
                                "data": points}})


def second_source_heart_rate_body(now_ms):
    """The same user's heart rate from a ring too, overlapping the watch's: a series of its own."""
    points = [{"timestamp": iso(now_ms - (2 * i + 1) * 60_000), "unit": "bpm", "value": 70 + (i % 5)}
              for i in range(SECOND_SOURCE_POINTS)]
    return json.dumps({"event_type": "daily.data.heartrate.created", "user_id": USER_ID,
                       "client_user_id": CLIENT_USER_ID, "team_id": "team-1",
                       "data": {"user_id": USER_ID, "source": {"provider": "oura", "type": "ring"}, "data": points}})


def blood_pressure_body(now_ms):
    """Two values per sample: listed, not charted."""
    points = [{"timestamp": iso(now_ms - (i + 1) * 300_000), "unit": "mmHg", "systolic": 118 + i, "diastolic": 79}
              for i in range(BLOOD_PRESSURE_POINTS)]
    return json.dumps({"event_type": "daily.data.blood_pressure.created", "user_id": USER_ID,
                       "client_user_id": CLIENT_USER_ID,
                       "data": {"user_id": USER_ID, "source": {"provider": "omron", "type": "cuff"}, "data": points}})


def dense_glucose_body(now_ms):
    first_ms = now_ms - 2 * 3_600_000
    points = [{"timestamp": iso(first_ms + i * 1000), "timezone_offset": 0, "type": None, "unit": "mmol/L",
               "value": 5 + (i % 10) / 10} for i in range(DENSE_POINTS)]
    return json.dumps({"event_type": "daily.data.glucose.created", "user_id": DENSE_USER_ID,
                       "client_user_id": "dense-1",
                       "data": {"user_id": DENSE_USER_ID, "data": points,
                                "source": {"provider": "freestyle_libre", "type": "automatic"}}})


def old_sleep_body(now_ms):
    """A sleep summary three days old: none in the 1h range."""
    day = time.strftime("%Y-%m-%d", time.gmtime(now_ms / 1000 - 3 * 86400))
    return json.dumps({"event_type": "daily.data.sleep.created", "user_id": DENSE_USER_ID, "client_user_id": "dense-1",
                       "data": {"id": str(uuid.UUID(int=0x51ee9000_0000_4000_8000_000000000001)),
                                "user_id": DENSE_USER_ID, "date": day + "T00:00:00+00:00", "calendar_date": day,
                                "bedtime_start": day + "T00:10:00+00:00", "bedtime_stop": day + "T07:00:00+00:00",
                                "type": "long_sleep", "timezone_offset": 0, "duration": 24600, "total": 23000,
                                "source": {"provider": "oura", "type": "ring"}}})


def sleep_body(user_id, day, number):
    """Sleep summary `number` of `day` (each its own id): bedtime at 00:00 plus `number` seconds."""
    start = "%sT%02d:%02d:%02d+00:00" % (day, number // 3600, number // 60 % 60, number % 60)
    return json.dumps({"event_type": "daily.data.sleep.created", "user_id": user_id, "client_user_id": "sleeper-3",
                       "data": {"id": str(uuid.uuid4()), "user_id": user_id, "date": day + "T00:00:00+00:00",
                                "calendar_date": day, "bedtime_start": start, "bedtime_stop": day + "T07:00:00+00:00",
                                "type": "long_sleep", "timezone_offset": 0, "duration": 600, "total": 500,
                                "source": {"provider": "oura", "type": "ring"}}})


def unknown_event_body(user_id):
    """An event type the processor does not know: stored as unknown, no users row made."""
    return json.dumps({"event_type": "daily.data.no_such_resource.created", "user_id": user_id,
                       "client_user_id": "failed-client", "data": {"user_id": user_id}})


def workout_body(user_id, start_ms, calories):
    day = time.strftime("%Y-%m-%d", time.gmtime(start_ms / 1000))
    return json.dumps({"event_type": "daily.data.workouts.created", "user_id": user_id, "client_user_id": "athlete-2",
                       "data": {"id": str(uuid.uuid4()), "user_id": user_id, "title": "Ride", "timezone_offset": 0,
                                "calendar_date": day, "time_start": iso(start_ms), "time_end": iso(start_ms + 60_000),
                                "calories": calories, "source": {"provider": "zwift", "type": "unknown"}}})


def steps_body(now_ms, user_id, client_user_id):
    return json.dumps({"event_type": "daily.data.steps.created", "user_id": user_id, "client_user_id": client_user_id,
                       "data": {"user_id": user_id, "source": {"provider": "oura", "type": "ring"},
                                "data": [{"timestamp": iso(now_ms - 3_600_000), "unit": "count", "value": 237}]}})


class Checks:
    def __init__(self, driver, base, artifacts):
        self.driver = driver
        self.base = base
        self.artifacts = artifacts
        self.passed = 0
        self.failed = 0
        self.foreign = []  # resource URLs of another origin, from every page
        self.loads = 0

    def run(self, name, check):
        try:
            check()
            self.passed += 1
            log("PASS " + name)
        except Exception:
            self.failed += 1
            log("FAIL " + name + "\n" + traceback.format_exc())
            self.screenshot("failed-" + name)

    def screenshot(self, name):
        os.makedirs(self.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(self.artifacts, name + ".png"))

    def open(self, hash_route):
        """Loads the console afresh at `hash_route` (a new query each time: never a same-page hash change)."""
        self.note_origins()
        self.loads += 1
        self.driver.get("%s/console/?load=%d%s" % (self.base, self.loads, hash_route))

    def eventually(self, route, check, message, timeout=WAIT_S):
        """Reloads `route` until check() is true (the server's state changes between loads)."""
        deadline = time.time() + timeout
        while True:
            self.open(route)
            try:
                self.element("#page[data-ready], #sign-in-form", timeout=5)
                if check():
                    return
            except Exception:
                pass
            if time.time() > deadline:
                raise AssertionError(message)
            time.sleep(0.5)

    def wait(self, condition, message, timeout=WAIT_S):
        return WebDriverWait(self.driver, timeout, poll_frequency=0.2).until(lambda d: condition(), message)

    def element(self, css, timeout=WAIT_S):
        return self.wait(lambda: (self.driver.find_elements(By.CSS_SELECTOR, css) or [None])[0], "no " + css, timeout)

    def elements(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css):
        return self.element(css).text

    def note_origins(self):
        """Every resource and navigation this page loaded must be of the console's origin."""
        try:
            if not self.driver.current_url.startswith(self.base + "/"):
                return  # the browser's own blank page before the first load
            names = self.driver.execute_script(
                "return performance.getEntriesByType('resource').concat("
                "performance.getEntriesByType('navigation')).map(e => e.name)")
        except Exception:
            return
        for name in names or []:
            if not (name.startswith(self.base + "/") or name == self.base):
                self.foreign.append(name)

    def fetch(self, method, path, body=None, csrf=True):
        """A request from inside the page (its cookie); returns (status, text)."""
        script = """
            const [method, path, body, csrf, done] = arguments;
            (async () => {
              const headers = {'Content-Type': 'application/x-www-form-urlencoded'};
              if (csrf) {
                const session = await fetch('/console/api/session');
                if (session.ok) headers['X-CSRF-Token'] = (await session.json()).csrf_token;
              }
              const response = await fetch(path, {method, headers, body});
              done([response.status, await response.text()]);
            })().catch(e => done([0, String(e)]));
        """
        return self.driver.execute_async_script(script, method, path, body, csrf)

    def sign_in(self, token):
        self.open("")
        field = self.element("#token")
        field.clear()
        field.send_keys(token)
        self.element("#sign-in-button").click()
        self.element("#page[data-ready]")

    def sign_out(self):
        self.element("#sign-out").click()
        self.element("#sign-in-form")


def make_driver(profile):
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000", "--user-data-dir=" + profile):
        options.add_argument(flag)
    for binary in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.path.exists(binary):
            options.binary_location = binary
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver_path = next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)),
                       None)
    if driver_path is None:
        raise RuntimeError("chromedriver is missing: run scripts/install-deps --for-tests (chromium-driver)")
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_script_timeout(WAIT_S)
    return driver


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--healthhook", required=True)
    parser.add_argument("--fake-backend", required=True)
    parser.add_argument("--artifacts", required=True)
    args = parser.parse_args()
    args.healthhook = os.path.abspath(args.healthhook)
    args.fake_backend = os.path.abspath(args.fake_backend)
    args.artifacts = os.path.abspath(args.artifacts)

    with tempfile.TemporaryDirectory(prefix="hh-console-") as folder:
        signing_file = write_secret(folder, "secret", whsec())
        read_token = "read-" + secrets.token_urlsafe(24)
        admin_token = "admin-" + secrets.token_urlsafe(24)
        write_secret(folder, "read-token", read_token)
        write_secret(folder, "admin-token", admin_token)
        backend_secret_file = write_secret(folder, "backend-secret", whsec())
        backend = FakeBackend(args.fake_backend, backend_secret_file, 410)  # gone: the first forwards die
        config = "\n".join([
            'listen = "127.0.0.1:0"', 'database = "healthhook.db"', 'signing_secret_files = ["secret"]',
            "[read_api]", 'token_file = "read-token"',
            "[console]", "enabled = true", 'admin_token_file = "admin-token"',
            "[[forward]]", 'name = "backend"', 'url = "http://127.0.0.1:%d/hooks"' % backend.port,
            'secret_file = "backend-secret"', 'mode = "deliveries"', "backoff_initial_ms = 100", "backoff_max_s = 1",
            ""])
        server = None
        driver = None
        checks = None
        try:
            server = Server(args.healthhook, folder, config)
            now_ms = int(time.time() * 1000)
            sent = [send_delivery(args, server, signing_file, heart_rate_body(now_ms))]
            sent.append(send_delivery(args, server, signing_file, steps_body(now_ms, USER_ID, CLIENT_USER_ID)))
            sent.append(send_delivery(args, server, signing_file, second_source_heart_rate_body(now_ms)))
            other = str(uuid.uuid4())
            sent.append(send_delivery(args, server, signing_file, steps_body(now_ms, other, OTHER_CLIENT_USER_ID)))
            # A second user with the same client user id (a backend's id reused): both findable.
            sent.append(send_delivery(args, server, signing_file,
                                      steps_body(now_ms, SHARED_CLIENT_SECOND_USER, OTHER_CLIENT_USER_ID)))
            # Users whose client user ids are those two users' ids: a link to one of the two
            # must still open it, not the user whose client user id it equals.
            for decoy_client_id in (other, SHARED_CLIENT_SECOND_USER):
                sent.append(send_delivery(args, server, signing_file,
                                          steps_body(now_ms, str(uuid.uuid4()), decoy_client_id)))
            sent.append(send_delivery(args, server, signing_file, '{"not an event": true}'))
            sent.append(send_delivery(args, server, signing_file, steps_body(now_ms, PLAIN_USER_ID, None)))
            sent.append(send_delivery(args, server, signing_file, blood_pressure_body(now_ms)))
            sent.append(send_delivery(args, server, signing_file, dense_glucose_body(now_ms)))
            sent.append(send_delivery(args, server, signing_file, old_sleep_body(now_ms)))
            driver = make_driver(os.path.join(folder, "chromium-profile"))
            checks = Checks(driver, server.base, args.artifacts)
            run_checks(checks, args, server, backend, signing_file, sent, read_token, admin_token, now_ms)
        finally:
            if driver is not None:
                if checks is not None:
                    checks.note_origins()
                    log_console(driver, args.artifacts)
                driver.quit()
            if server is not None:
                server.stop()
            backend.stop()
        log("%d passed, %d failed" % (checks.passed, checks.failed))
        return 0 if checks.failed == 0 else 1


def log_console(driver, artifacts):
    try:
        entries = driver.get_log("browser")
    except Exception:
        return
    os.makedirs(artifacts, exist_ok=True)
    with open(os.path.join(artifacts, "browser-log.txt"), "w") as f:
        for entry in entries:
            f.write("%s %s\n" % (entry.get("level"), entry.get("message")))


def run_checks(checks, args, server, backend, signing_file, sent, read_token, admin_token, now_ms):
    d = checks.driver

    def nothing_without_sign_in():
        for route in ("", "#/overview", "#/deliveries", "#/users", "#/forwarding"):
            checks.open(route)
            checks.element("#sign-in-form")
            assert not checks.elements("#page"), "the console's page loaded without a session"
        for path in ("/console/assets/app.js", "/console/api/session", "/console/api/overview",
                     "/console/v1/deliveries", "/console/v1/users/" + USER_ID):
            status, _ = checks.fetch("GET", path, csrf=False)
            assert status == 401, "%s answered %d without a session" % (path, status)
        checks.screenshot("sign-in")
    checks.run("nothing_loads_without_sign_in", nothing_without_sign_in)

    def wrong_token_is_refused():
        checks.open("")
        checks.element("#token").send_keys("not-a-token")
        checks.element("#sign-in-button").click()
        checks.wait(lambda: d.find_element(By.ID, "sign-in-error").is_displayed(), "no sign-in error shown")
    checks.run("a_wrong_token_is_refused", wrong_token_is_refused)

    def a_link_opened_before_sign_in_opens_after_it():
        # The page a link names, once signed in (it was the overview).
        checks.open("#/forwarding?state=dead")
        field = checks.element("#token")
        field.send_keys(read_token)
        checks.element("#sign-in-button").click()
        checks.element('#page[data-ready] table.destination[data-destination="backend"]')
        assert "#/forwarding?state=dead" in d.current_url, d.current_url
        checks.sign_out()
    checks.run("a_link_opened_before_sign_in_opens_after_it", a_link_opened_before_sign_in_opens_after_it)

    def overview_counts_deliveries():
        checks.sign_in(read_token)
        checks.eventually("#/overview", lambda: checks.text("#overview-stored") == str(len(sent)),
                          "the overview does not show %d stored deliveries" % len(sent))
        # The note under it never claims more than was stored: just after a start the
        # history covers less than a minute, and 3 in 10 s is not "18 / min".
        note = checks.text("#overview-stored + .note")
        figure = re.match(r"([0-9.]+) (in the last [0-9]+ s|/ min lately)$", note)
        assert note == "since start" or (figure and float(figure.group(1)) <= len(sent)), note
        checks.element("svg.chart[data-chart=ingest]")
        # What the inbox holds in all, per family (docs/console.md; the page once left it out).
        checks.eventually("#/overview", lambda: sum(int(e.text) for e in
                                                    checks.elements("#overview-inbox td[data-status=all]")) >= len(sent),
                          "the overview does not count the inbox per family")
        # Tables whole: no word of an unfinished rebuild (docs/operations.md, "Rebuild").
        assert not d.find_element(By.ID, "overview-rebuild").is_displayed()
        checks.screenshot("overview")
    checks.run("the_overview_shows_the_deliveries_sent", overview_counts_deliveries)

    def search_and_open_a_delivery():
        # A UUID that names no user of the service is searched as a client user id.
        checks.eventually("#/deliveries?user=" + OTHER_CLIENT_USER_ID,
                          lambda: len(checks.elements("#deliveries-table tr.delivery")) == 2,
                          "a client user id shaped like a UUID (two users have it) did not find both deliveries")
        checks.eventually("#/deliveries?user=" + CLIENT_USER_ID,
                          lambda: len(checks.elements("#deliveries-table tr.delivery")) == 4,
                          "the processor did not make the user known")
        # A user id that is no UUID is searched as a user id too.
        checks.eventually("#/deliveries?user=" + urllib.parse.quote(PLAIN_USER_ID),
                          lambda: len(checks.elements("#deliveries-table tr.delivery")) == 1,
                          "a user id that is no UUID found no delivery")
        checks.open("#/deliveries")
        checks.element("#search-user").send_keys(CLIENT_USER_ID)
        checks.element("#search-button").click()
        checks.wait(lambda: len(checks.elements("#deliveries-table tr.delivery")) == 4,
                    "the search by client user id did not list the user's 4 deliveries")
        checks.screenshot("deliveries")
        link = next(a for a in checks.elements("#deliveries-table a.delivery-link") if a.text == sent[0])
        link.click()
        checks.wait(lambda: "daily.data.heartrate.created" in checks.text("#delivery-body"), "no body shown")
        body_text = checks.text("#delivery-body")
        assert '"value": 60' in body_text, body_text
        # The body's own tokens: no integer rounded to a double, no 72.0 shown as 72.
        assert "12345678901234567890" in body_text and "72.0" in body_text, body_text
        headers_text = checks.text("#delivery-headers")
        assert "svix-signature" in headers_text.lower() and "v1,••••" in headers_text, headers_text
        assert not re.search(r"v1,[A-Za-z0-9+/]{8}", headers_text), "a signature value is shown unmasked"
        checks.element("#delivery-changes tr.change")
        checks.screenshot("delivery")
        checks.eventually("#/deliveries?status=invalid",
                          lambda: len(checks.elements("#deliveries-table tr.delivery")) == 1, "no invalid delivery listed")
    checks.run("search_deliveries_and_open_one", search_and_open_a_delivery)

    def heart_rate_chart_draws_every_point():
        checks.open("#/users")
        checks.element("#user-query").send_keys(CLIENT_USER_ID)
        checks.element("#user-search-button").click()
        checks.wait(lambda: USER_ID in checks.text("#user-identity"), "the user was not found by client user id")
        checks.element('button[data-range="1h"]').click()  # 6 s buckets: one sample each
        checks.wait(lambda: "range=1h" in d.current_url and checks.elements("#page[data-ready]"), "no 1h range")
        chart = 'svg.chart[data-resource="heartrate"]'
        checks.wait(lambda: len(checks.elements(chart + ' g.series[data-source="garmin/watch"] circle.point'))
                    == HEART_POINTS, "the heart-rate chart does not draw the %d points sent" % HEART_POINTS)
        watch = chart + ' g.series[data-source="garmin/watch"] circle.point'
        values = sorted(float(c.get_attribute("data-value")) for c in checks.elements(watch))
        assert values == [60.0 + i for i in range(HEART_POINTS)], values
        ring = chart + ' g.series[data-source="oura/ring"] circle.point'
        assert len(checks.elements(ring)) == SECOND_SOURCE_POINTS, "the second source is not its own series"
        # Blood pressure has no single value: said so, not an empty chart; its samples one click away.
        assert not checks.elements('svg.chart[data-resource="blood_pressure"]'), "an empty blood-pressure chart"
        checks.element('.not-charted[data-resource="blood_pressure"] button.list-samples').click()
        checks.wait(lambda: len(checks.elements("#not-charted-rows tbody tr")) == BLOOD_PRESSURE_POINTS,
                    "the blood-pressure samples were not listed")
        assert "systolic" in checks.text("#not-charted-rows"), checks.text("#not-charted-rows")
        checks.screenshot("user")
    checks.run("the_heart_rate_chart_draws_the_points_sent", heart_rate_chart_draws_every_point)

    # Attack (stop 76): a point's list stopped at 100 samples and did not say so; a range
    # without summaries drew an empty chart that read as days of zero.
    def a_bucket_lists_every_sample_it_counts():
        point = 'svg.chart[data-resource="glucose"] circle.point'
        counts = lambda: [int(c.get_attribute("data-count")) for c in checks.elements(point)]
        checks.eventually("#/users?" + urllib.parse.urlencode({"q": DENSE_USER_ID, "by": "user_id", "range": "30d"}),
                          lambda: sum(counts()) == DENSE_POINTS, "the glucose chart does not count the samples sent")
        largest = max(checks.elements(point), key=lambda c: int(c.get_attribute("data-count")))
        count = int(largest.get_attribute("data-count"))
        assert count > 500, counts()  # more than one page of the list
        d.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", largest)
        checks.wait(lambda: checks.elements("#chart-rows-table tbody tr"), "the bucket's samples were not listed")
        while True:
            more = checks.elements("#chart-rows-more")
            if not more or not more[0].is_displayed():
                break
            listed = len(checks.elements("#chart-rows-table tbody tr"))
            more[0].click()
            checks.wait(lambda: len(checks.elements("#chart-rows-table tbody tr")) > listed, "More listed nothing more")
        assert len(checks.elements("#chart-rows-table tbody tr")) == count
        assert checks.text("#chart-rows-shown") == "all %d shown" % count, checks.text("#chart-rows-shown")
        checks.eventually("#/users?" + urllib.parse.urlencode({"q": DENSE_USER_ID, "by": "user_id", "range": "1h"}),
                          lambda: "No summaries in this range." in checks.text('.not-charted[data-resource="sleep"]'),
                          "a range without sleep summaries does not say so")
        assert not checks.elements('svg.chart[data-resource="sleep"]'), "an empty sleep chart is drawn"
    checks.run("a_bucket_lists_every_sample_it_counts", a_bucket_lists_every_sample_it_counts)

    def users_sharing_a_client_id_are_each_reachable():
        checks.eventually("#/users?q=" + OTHER_CLIENT_USER_ID, lambda: bool(checks.elements("#user-others a")),
                          "the second user of a shared client user id is not offered")
        shown = checks.elements("#user-identity td")[0].text
        link = checks.elements("#user-others a")[0]
        other = link.text
        assert other != shown, (other, shown)
        link.click()
        def shown_user_id():
            try:
                cells = checks.elements("#user-identity td")
                return cells[0].text if cells else None
            except Exception:  # the page re-rendering under us
                return None
        checks.wait(lambda: shown_user_id() == other, "the other user did not open")
        # Find again with the same text: still that user.
        checks.element("#user-search-button").click()
        checks.wait(lambda: "by=user_id" in checks.driver.current_url and shown_user_id() == other,
                    "searching again left the user opened")
    checks.run("users_sharing_a_client_id_are_each_reachable", users_sharing_a_client_id_are_each_reachable)

    def read_only_has_no_actions():
        checks.open("#/forwarding")
        checks.element('table.destination[data-destination="backend"]')
        assert not checks.elements("button[data-action]"), "action buttons shown to a read-only session"
        checks.open("#/jobs")
        checks.element("#jobs-table")
        assert not checks.elements("button[data-action]"), "action buttons shown to a read-only session"
        for action in ("forward-requeue", "forward-pause", "jobs-requeue-dead", "backfill", "refresh"):
            status, _ = checks.fetch("POST", "/console/api/actions/" + action, "destination=backend&state=dead")
            assert status == 403, "%s answered %d to a read-only session" % (action, status)
        checks.sign_out()
    checks.run("read_only_sessions_have_no_actions", read_only_has_no_actions)

    def csrf_is_required():
        checks.sign_in(admin_token)
        status, text = checks.fetch("POST", "/console/api/actions/jobs-requeue-dead", "", csrf=False)
        assert status == 403 and "CSRF" in text, (status, text)
        status, _ = checks.fetch("POST", "/console/api/actions/jobs-requeue-dead", "", csrf=True)
        assert status == 200, status
    checks.run("actions_without_the_csrf_token_are_refused", csrf_is_required)

    def requeue_dead_forwards():
        dead = 'table.destination[data-destination="backend"] [data-figure="dead"]'
        # Every delivery's forward was answered 410: final, so dead.
        checks.eventually("#/forwarding", lambda: checks.text(dead) == str(len(sent)),
                          "the forwards did not become dead", FORWARD_WAIT_S)
        assert len(checks.elements("tr.entry[data-state=dead]")) == len(sent)
        checks.screenshot("forwarding")
        backend.set_status(200)
        # An id named three times is one entry requeued, and said so (it said 3).
        one = checks.elements("tr.entry[data-state=dead]")[0].get_attribute("data-id")
        status, text = checks.fetch("POST", "/console/api/actions/forward-requeue",
                                    "destination=backend&ids=%s,%s,%s" % (one, one, one))
        assert status == 200 and '"requeued":1}' in text, (status, text)
        checks.element('button[data-action="forward-requeue"][data-state="dead"][data-destination="backend"]').click()
        checks.wait(lambda: backend.ids() >= set(sent), "the requeued forwards did not reach the backend",
                    FORWARD_WAIT_S)
        checks.eventually("#/forwarding", lambda: checks.text(dead) == "0", "dead entries stayed", FORWARD_WAIT_S)
        # An id that names no entry is refused, as `healthhook forward requeue` refuses it
        # (it answered {"requeued":0}).
        status, text = checks.fetch("POST", "/console/api/actions/forward-requeue", "destination=backend&ids=99999999")
        assert status == 400 and "no outbox entry 99999999" in text, (status, text)
    checks.run("requeue_dead_forwards", requeue_dead_forwards)

    def pause_and_resume():
        checks.open("#/forwarding")
        checks.element('button[data-action="forward-pause"][data-destination="backend"]').click()
        checks.element('table.destination[data-destination="backend"][data-paused="true"]')
        # The forwarder applies a pause within seconds; /metrics says when it has.
        wait_until(lambda: 'healthhook_forward_paused{destination="backend"} 1' in metrics(server),
                   "the forwarder did not apply the pause", FORWARD_WAIT_S)
        before = len(backend.bodies())
        message_id = send_delivery(args, server, signing_file, steps_body(int(time.time() * 1000), USER_ID,
                                                                          CLIENT_USER_ID))
        pending = 'table.destination[data-destination="backend"] [data-figure="pending"]'
        checks.eventually("#/forwarding?state=pending", lambda: checks.text(pending) == "1",
                          "the delivery is not pending", FORWARD_WAIT_S)
        time.sleep(2)  # the sender would look ten times a second: nothing may go out while paused
        assert len(backend.bodies()) == before, "a forward went out while the destination was paused"
        assert message_id not in backend.ids()
        checks.screenshot("forwarding-paused")
        checks.element('button[data-action="forward-resume"][data-destination="backend"]').click()
        checks.wait(lambda: message_id in backend.ids(), "the delivery did not arrive after resume", FORWARD_WAIT_S)
        checks.eventually("#/forwarding", lambda: checks.text(pending) == "0", "still pending after resume",
                          FORWARD_WAIT_S)
    checks.run("pause_and_resume_a_destination", pause_and_resume)

    def pause_by_position():
        # As `healthhook forward pause 1`: the first [[forward]] block by its position.
        status, text = checks.fetch("POST", "/console/api/actions/forward-pause", "destination=1")
        assert status == 200, (status, text)
        checks.eventually("#/forwarding",
                          lambda: bool(checks.elements('table.destination[data-destination="backend"][data-paused="true"]')),
                          "destination 1 was not paused")
        status, text = checks.fetch("POST", "/console/api/actions/forward-resume", "destination=1")
        assert status == 200, (status, text)
        status, text = checks.fetch("POST", "/console/api/actions/forward-pause", "destination=2")
        assert status == 400 and "no [[forward]] named or numbered" in text, (status, text)
    checks.run("a_destination_is_paused_by_its_position", pause_by_position)

    def jobs_page():
        checks.open("#/jobs")
        checks.element("#jobs-table")
        checks.screenshot("jobs")
    checks.run("the_follow_ups_page_loads", jobs_page)

    def a_deep_body_shows_its_envelope_and_a_bounded_view():
        # Black-box pass: 6,000 levels (12 KB) were indented into 72 MB of text (the tab froze
        # 22 s); 200,000 (400 KB) failed with "Invalid string length" and showed not even the
        # envelope. Now shown as received, said so, with the envelope and its error.
        for depth in (6000, 200000):
            body = '{"event_type":"daily.data.note.created","data":{"x":' + "[" * depth + "]" * depth + "}}"
            message_id = send_delivery(args, server, signing_file, body)
            checks.eventually("#/delivery/" + message_id,
                              lambda: "invalid" in checks.text("#delivery-envelope"),
                              "the deep delivery's envelope does not show it invalid")
            shown = checks.text("#delivery-body")
            assert shown.startswith('{"event_type"') and len(shown) <= len(body), len(shown)
            assert "nested more than 100 levels deep" in checks.text("#delivery-body-note"), \
                checks.text("#delivery-body-note")
            error = checks.text("#delivery-envelope td.error-text")
            assert "nesting deeper than the limit" in error, error
            checks.element("#page[data-ready] #delivery-changes")
        checks.screenshot("delivery-deep-body")
    checks.run("a_deep_body_shows_its_envelope_and_a_bounded_view", a_deep_body_shows_its_envelope_and_a_bounded_view)

    def the_console_fits_a_phone():
        # Black-box pass: at 375 px the header pushed "Sign out" off screen and tables made
        # the page 1,500-2,095 px wide. The header wraps; a wide table scrolls in its own box.
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": 375, "height": 740, "deviceScaleFactor": 1, "mobile": True})
        try:
            for route in ("#/overview", "#/deliveries", "#/delivery/" + sent[0],
                          "#/users?" + urllib.parse.urlencode({"q": CLIENT_USER_ID, "range": "7d"}),
                          "#/forwarding?state=dead", "#/jobs?state=done"):
                checks.open(route)
                checks.element("#page[data-ready]")
                fit = d.execute_script("""
                    const out = document.getElementById('sign-out').getBoundingClientRect();
                    return {viewport: window.innerWidth, page: document.documentElement.scrollWidth,
                            left: out.left, right: out.right,
                            wide: document.querySelectorAll('main table').length};""")
                assert fit["viewport"] == 375, fit
                assert fit["page"] == fit["viewport"], (route, fit)
                assert 0 <= fit["left"] and fit["right"] <= fit["viewport"], (route, fit)
                checks.screenshot("phone-" + route[2:].split("?")[0].split("/")[0])
        finally:
            d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    checks.run("the_console_fits_a_phone", the_console_fits_a_phone)

    def a_tab_signed_in_again_elsewhere_says_so():
        # This tab signed in with the admin token; another tab of the browser then signs in
        # with the read token, so the cookie is that session's. This tab's next action is
        # refused and says why, and the page is drawn again without the admin's buttons (it
        # said "missing or wrong CSRF token" under a heading that still read "admin").
        checks.open("#/jobs")  # signed in with the admin token since the CSRF check
        checks.element("#jobs-table")
        assert checks.text("#who") == "signed in with the admin token", checks.text("#who")
        button = checks.element('button[data-action="jobs-requeue-dead"]')
        status = checks.driver.execute_async_script("""
            const [token, done] = arguments;
            fetch('/console/sign-in', {method: 'POST', credentials: 'same-origin',
                headers: {'Content-Type': 'application/x-www-form-urlencoded',
                          'X-Requested-With': 'healthhook-console'},
                body: 'token=' + encodeURIComponent(token)}).then(r => done(r.status), e => done(String(e)));
        """, read_token)
        assert status == 200, status
        button.click()
        checks.wait(lambda: "signed in again in another tab" in checks.text("#flash.error"),
                    "the refused action did not say the session changed")
        checks.wait(lambda: checks.text("#who") == "read-only (read token)", "the heading still names the admin")
        checks.element("#page[data-ready] #jobs-table")
        assert not checks.elements("button[data-action]"), "admin buttons still shown to the read-only session"
        checks.screenshot("signed-in-again-elsewhere")
        checks.sign_out()
        checks.sign_in(admin_token)
    checks.run("a_tab_signed_in_again_elsewhere_says_so", a_tab_signed_in_again_elsewhere_says_so)

    def no_other_origin():
        checks.note_origins()
        assert not checks.foreign, "requests to another origin: %s" % checks.foreign
        violations = [e["message"] for e in d.get_log("browser") if "Content Security Policy" in e.get("message", "")]
        assert not violations, violations
    checks.run("no_request_to_another_origin", no_other_origin)

    def overview_says_when_it_stops_updating():
        # Last: the server goes away under an open overview. The page says its figures are
        # old (within one 10 s refresh), instead of showing them as if they were current.
        checks.open("#/overview")
        checks.element("#overview-stored")
        checks.wait(lambda: not d.find_element(By.ID, "overview-stale").is_displayed(), "stale while serving")
        server.stop()  # returns once the process is gone; the next 10 s refresh then fails
        checks.wait(lambda: d.find_element(By.ID, "overview-stale").is_displayed(),
                    "the overview did not say it stopped updating", 3 * WAIT_S)
        assert "Not updating" in checks.text("#overview-stale"), checks.text("#overview-stale")
    checks.run("the_overview_says_when_it_stops_updating", overview_says_when_it_stops_updating)

    def a_removed_destination_keeps_its_entries():
        # After the last check stopped the server: "backend" paused (by the command) holds a
        # pending entry, then serve starts without its [[forward]] block and with another.
        # Black-box pass: its entries answered 404, so the whole overview's forwarding said
        # "Could not load" and the Forwarding page left it out. Now it is shown, marked "not
        # configured", with its figures and entries; and when one destination's entries do
        # not load, the other's still show.
        path = os.path.join(server.folder, "healthhook.toml")
        with open(path) as f:
            config = f.read()
        paused = subprocess.run([args.healthhook, "forward", "pause", "backend", "--config", path],
                                cwd=server.folder, capture_output=True, text=True)
        assert paused.returncode == 0, paused.stderr
        first = Server(args.healthhook, server.folder, config)
        try:
            send_delivery(args, first, signing_file, steps_body(int(time.time() * 1000), USER_ID, CLIENT_USER_ID))
            wait_until(lambda: '"destination":"backend","pending":1' in read_api(first, "/v1/forwarding", read_token),
                       "no entry pending for the paused destination", FORWARD_WAIT_S)
        finally:
            first.stop()
        block = config.index("[[forward]]")
        spare = config[block:].replace('name = "backend"', 'name = "spare"')
        again = Server(args.healthhook, server.folder, config[:block] + spare)
        try:
            checks.base = again.base
            checks.sign_in(admin_token)
            row = '#overview-forwarding tr[data-destination="%s"]'
            checks.open("#/overview")
            checks.element(row % "spare")
            cells = [c.text for c in checks.elements((row % "backend") + " td")]
            assert cells[1:3] == ["not configured", "1"], cells
            assert "Could not load" not in checks.text("#page"), checks.text("#page")
            checks.open("#/forwarding?state=pending")
            figures = 'table.destination[data-destination="backend"]'
            assert checks.text(figures + ' [data-figure="state"]') == "not configured"
            box = checks.element(figures).find_element(By.XPATH, "..")
            assert len(box.find_elements(By.CSS_SELECTOR, "tr.entry[data-state=pending]")) == 1, box.text
            assert not box.find_elements(By.CSS_SELECTOR, "button[data-action]"), "an action offered for it"
            checks.element('button[data-action="forward-pause"][data-destination="spare"]')
            checks.screenshot("forwarding-removed-destination")
            # One destination's entries fail to load: the other's figures and entries still show.
            d.execute_cdp_cmd("Network.enable", {})
            d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/forwarding/spare/entries*"]})
            try:
                checks.open("#/overview")
                checks.wait(lambda: "Could not load its entries" in checks.text(row % "spare"),
                            "the overview does not say which destination's entries did not load")
                assert [c.text for c in checks.elements((row % "backend") + " td")][1:3] == ["not configured", "1"]
                checks.open("#/forwarding?state=pending")
                checks.element('table.destination[data-destination="spare"]')
                checks.wait(lambda: "Could not load its entries" in checks.text(".entries-error"), "no error said")
                assert len(checks.elements("tr.entry[data-state=pending]")) == 1
            finally:
                d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        finally:
            again.stop()
    checks.run("a_removed_destination_keeps_its_entries", a_removed_destination_keeps_its_entries)

    # A server of its own (the first has stopped): a paused destination, and the deliveries
    # the checks below open.
    folder = os.path.join(server.folder, "second")
    os.makedirs(folder)
    with open(signing_file) as f:
        second_signing = write_secret(folder, "secret", f.read().strip())
    write_secret(folder, "read-token", read_token)
    write_secret(folder, "admin-token", admin_token)
    write_secret(folder, "backend-secret", whsec())
    second = Server(args.healthhook, folder, "\n".join([
        'listen = "127.0.0.1:0"', 'database = "healthhook.db"', 'signing_secret_files = ["secret"]',
        "[read_api]", 'token_file = "read-token"', "[console]", "enabled = true", 'admin_token_file = "admin-token"',
        # Nothing listens on port 9; paused below anyway, so every entry stays pending.
        "[[forward]]", 'name = "paused"', 'url = "http://127.0.0.1:9/hooks"', 'secret_file = "backend-secret"',
        'mode = "deliveries"', ""]))
    try:
        checks.base = second.base
        second_checks(checks, args, second, second_signing, read_token, admin_token)
    finally:
        second.stop()


def second_checks(checks, args, server, signing_file, read_token, admin_token):
    d = checks.driver
    now_ms = int(time.time() * 1000)

    def a_user_whose_deliveries_all_failed_is_found():
        # Black-box pass: no users row, so the search took the id for a client user id and
        # listed nothing, though /v1/deliveries?user_id= lists the delivery.
        send_delivery(args, server, signing_file, unknown_event_body(FAILED_USER_ID))
        checks.sign_in(read_token)
        status, _ = checks.fetch("GET", "/console/v1/users/" + FAILED_USER_ID, csrf=False)
        assert status == 404, "the failed user has a users row (%d): this check would prove nothing" % status
        checks.eventually("#/deliveries?user=" + FAILED_USER_ID,
                          lambda: len(checks.elements("#deliveries-table tr.delivery")) == 1,
                          "the deliveries of a user without a users row are not found by the user id")
    checks.run("a_user_whose_deliveries_all_failed_is_found", a_user_whose_deliveries_all_failed_is_found)

    def ids_of_dots_open():
        # Black-box pass: fetch resolved /deliveries/.. to the folder above ("a path segment
        # is empty"); such a page is read by a target in the query.
        for message_id in (".", ".."):
            send_delivery(args, server, signing_file, steps_body(now_ms, "..", "dots"), message_id)
        for message_id in (".", ".."):
            checks.eventually("#/delivery/" + message_id,
                              lambda: "processed" in checks.text("#delivery-envelope"),
                              "the delivery %r does not open" % message_id)
            assert checks.text("h1 code") == message_id, checks.text("h1 code")
            checks.element("#page[data-ready] #delivery-changes")
            assert "Could not load" not in checks.text("#page"), checks.text("#page")
        checks.eventually("#/deliveries?user=..", lambda: len(checks.elements("#deliveries-table tr.delivery")) == 2,
                          "the user .. has not its two deliveries listed")
        checks.open("#/users?q=..")
        checks.element("#page[data-ready] #user-connections")
        assert ".." in checks.text("#user-identity"), checks.text("#user-identity")
        assert "Could not load" not in checks.text("#page"), checks.text("#page")
        checks.element('svg.chart[data-resource="steps"]')
    checks.run("ids_of_dots_open", ids_of_dots_open)

    def a_days_bar_shows_every_summary_it_adds_up():
        # Black-box pass: two workouts of one day and source made one bar of 100 + 200, and a
        # click on it showed the first workout only.
        midnight = now_ms // 86_400_000 * 86_400_000
        for start_ms, calories in ((midnight + (now_ms - midnight) // 3, 100),
                                   (midnight + 2 * (now_ms - midnight) // 3, 200)):
            send_delivery(args, server, signing_file, workout_body(WORKOUT_USER_ID, start_ms, calories))
        bars = 'svg.chart[data-resource="workouts"] rect.bar'
        checks.eventually("#/users?" + urllib.parse.urlencode({"q": WORKOUT_USER_ID, "by": "user_id", "range": "7d"}),
                          lambda: [b.get_attribute("data-value") for b in checks.elements(bars)] == ["300"],
                          "the two workouts are not one bar of 300 calories")
        checks.elements(bars)[0].click()
        checks.wait(lambda: len(checks.elements("#chart-rows pre.summary-row")) == 2,
                    "the bar's click does not show both workouts")
        shown = checks.text("#chart-rows")
        assert '"calories":100' in shown.replace(" ", "") and '"calories":200' in shown.replace(" ", ""), shown
    checks.run("a_days_bar_shows_every_summary_it_adds_up", a_days_bar_shows_every_summary_it_adds_up)

    def a_delivery_past_a_thousand_pending_forwards_shows_its_own():
        # Black-box pass: the delivery page read each state's first 1,000 entries and kept
        # its seq's, so the newest delivery behind 1,085 pending said "None waiting".
        checks.sign_out()
        checks.sign_in(admin_token)
        status, text = checks.fetch("POST", "/console/api/actions/forward-pause", "destination=paused")
        assert status == 200, (status, text)
        wait_until(lambda: 'healthhook_forward_paused{destination="paused"} 1' in metrics(server),
                   "the forwarder did not apply the pause", FORWARD_WAIT_S)
        send_many(server, signing_file, [steps_body(now_ms, str(uuid.uuid4()), None) for _ in range(MANY_FORWARDS)])
        newest = send_delivery(args, server, signing_file, steps_body(now_ms, USER_ID, CLIENT_USER_ID))
        pending = lambda: int(re.search(r'"destination":"paused","pending":(\d+)',
                                        read_api(server, "/v1/forwarding", read_token)).group(1))
        wait_until(lambda: pending() > MANY_FORWARDS, "the deliveries' entries are not pending", FORWARD_WAIT_S)
        checks.eventually("#/delivery/" + newest, lambda: len(checks.elements("#delivery-forwards tr.forward")) == 1,
                          "the newest delivery's pending forward is not shown", FORWARD_WAIT_S)
        assert "paused" in checks.text("#delivery-forwards tr.forward"), checks.text("#delivery-forwards")
        checks.element('button[data-action="forward-requeue"][data-destination="paused"]')
        checks.screenshot("delivery-past-a-thousand-forwards")
    checks.run("a_delivery_past_a_thousand_pending_forwards_shows_its_own",
               a_delivery_past_a_thousand_pending_forwards_shows_its_own)

    def requeueing_a_pending_forward_changes_nothing_and_says_so():
        # Black-box pass: requeueing an entry that was already pending answered {"requeued":1}
        # each time and reset its attempts and age (the console's action and `healthhook
        # forward requeue ID`). Now it is left alone and said "already pending". The entries
        # of the paused destination above are pending.
        entry = json.loads(read_api(server, "/v1/forwarding/paused/entries?state=pending&limit=1", read_token))["items"][0]
        status, text = checks.fetch("POST", "/console/api/actions/forward-requeue",
                                    "destination=paused&ids=%d" % entry["outbox_id"])
        assert status == 200 and json.loads(text) == {"requeued": 0, "already_pending": 1}, (status, text)
        config = os.path.join(server.folder, "healthhook.toml")
        requeued = subprocess.run([args.healthhook, "forward", "requeue", str(entry["outbox_id"]), "--config", config],
                                  cwd=server.folder, capture_output=True, text=True)
        assert requeued.returncode == 0, requeued.stderr
        assert requeued.stdout == "outbox entry %d is already pending: not requeued\n" % entry["outbox_id"], \
            requeued.stdout
        after = json.loads(read_api(server, "/v1/forwarding/paused/entries?state=pending&limit=1", read_token))["items"][0]
        assert after == entry, (entry, after)  # nothing of it changed (created_at, attempts, next attempt)
    checks.run("requeueing_a_pending_forward_changes_nothing_and_says_so",
               requeueing_a_pending_forward_changes_nothing_and_says_so)

    def a_summaries_chart_past_one_page_says_what_it_left_out():
        # Black-box pass: the chart read the first 1,000 summaries of the range and drew the
        # days after them as empty, saying nothing. 1,000 sleep summaries ten days ago and one
        # two days ago: the one is past the page, and the chart says later days are not drawn.
        day = lambda days_ago: time.strftime("%Y-%m-%d", time.gmtime(now_ms / 1000 - days_ago * 86400))
        bodies = [sleep_body(CUT_CHART_USER_ID, day(10), i) for i in range(SUMMARIES_PER_CHART)]
        bodies.append(sleep_body(CUT_CHART_USER_ID, day(2), SUMMARIES_PER_CHART))
        send_many(server, signing_file, bodies)
        summaries = lambda: json.loads(read_api(
            server, "/v1/users/%s/summaries/sleep?limit=10000" % CUT_CHART_USER_ID, read_token))["items"]
        wait_until(lambda: len(summaries()) == SUMMARIES_PER_CHART + 1, "the summaries are not stored", FORWARD_WAIT_S)
        checks.open("#/users?" + urllib.parse.urlencode({"q": CUT_CHART_USER_ID, "by": "user_id", "range": "30d"}))
        checks.element('#page[data-ready] svg.chart[data-resource="sleep"]')
        note = checks.element('.chart-truncated[data-resource="sleep"]', timeout=5)
        assert "first 1,000 summaries" in note.text and "later days are not drawn" in note.text, note.text
        assert note.is_displayed()
        checks.screenshot("summaries-chart-past-one-page")
    checks.run("a_summaries_chart_past_one_page_says_what_it_left_out",
               a_summaries_chart_past_one_page_says_what_it_left_out)

    def a_user_whose_answer_passes_the_budget_says_what_it_left_out():
        # Black-box finding: GET /v1/users/{id} had no byte budget (43 MB for 12 large
        # devices). It stops at 8 MiB now and says `truncated`; the page says so under the
        # devices. 6 devices of about 1.8 MB in the answer (the field twice): 4 fit.
        bodies = [json.dumps({"event_type": "provider.device.created", "user_id": BIG_USER_ID,
                              "data": {"id": "dev-%d" % i, "user_id": BIG_USER_ID, "provider": "garmin",
                                       "source_type": "watch", "device_manufacturer": "m" * 900_000,
                                       "device_model": "model-%d" % i, "device_id": str(1000 + i)}})
                  for i in range(6)]
        send_many(server, signing_file, bodies)
        def all_stored():
            try:
                return json.loads(read_api(server, "/v1/users/%s" % BIG_USER_ID, read_token))["truncated"]
            except urllib.error.HTTPError:  # 404 until the first is applied
                return False
        wait_until(all_stored, "the devices are not stored", FORWARD_WAIT_S)
        checks.open("#/users?" + urllib.parse.urlencode({"q": BIG_USER_ID, "by": "user_id", "range": "7d"}))
        checks.element("#page[data-ready] #user-devices")
        note = checks.element("#user-truncated", timeout=5)
        assert "Not all connections and devices are shown" in note.text, note.text
        assert note.is_displayed()
        assert len(checks.elements("#user-devices tbody tr")) == 4
        checks.screenshot("user-answer-truncated")
    checks.run("a_user_whose_answer_passes_the_budget_says_what_it_left_out",
               a_user_whose_answer_passes_the_budget_says_what_it_left_out)


def metrics(server):
    with urllib.request.urlopen(server.base + "/metrics", timeout=WAIT_S) as response:
        return response.read().decode()


def read_api(server, path, token):
    request = urllib.request.Request(server.base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=WAIT_S) as response:
        return response.read().decode()


def wait_until(condition, message, timeout):
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            raise AssertionError(message)
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
