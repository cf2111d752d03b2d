#!/usr/bin/env python3
"""What the console says of states that are no plain number (spec §12, docs/console.md), in
a real browser, with the helpers of console_browser_test.py:

  - figures the server could not read (null: PostgreSQL unreachable) show as unknown ("–"
    with a title), never as 0 (the overview's answer is given nulls in the browser: the
    page's rendering is what is checked);
  - the Forwarding page's "dropped" tab says that dropped messages are not kept (ranges of
    seq only), instead of an empty table;
  - a dead entry has no next attempt, and a last error without a body has no empty tail
    ("HTTP 500", not "HTTP 500: ");
  - the Users page's backfill can name a provider for a user with no stored connection;
  - `#/users?q=<user id>` shows the user of that id, not another whose client user id it is,
    and names that other;
  - after a restart without one [[forward]] block, the one-delivery page offers no requeue
    to that destination, and marks it "not configured";
  - while /readyz is not ready, the overview says why (its reason);
  - purge-user's placeholder row is shown as an erasure, not as a body removed by retention.

Exit 0 when every check passed; the last line is "N passed, N failed".
"""
import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import console_browser_test as base  # noqa: E402  (its helpers: Server, Checks, signing, bodies)
from selenium.webdriver.common.by import By  # noqa: E402

# A user whose id is another user's client user id: #/users?q=<its id> must open it.
USER_ID = str(uuid.UUID(int=0x57a7e000_0000_4000_8000_000000000001))
DECOY_USER_ID = str(uuid.UUID(int=0x57a7e000_0000_4000_8000_000000000002))
# The overview's figures read from the database (null in the answer when it does not answer).
DATABASE_FAMILIES = ("healthhook_database_bytes", "healthhook_processor_lag_", "healthhook_jobs",
                     "healthhook_inbox_deliveries")
# Installed in the page before its scripts run: the overview's answer as the server gives it
# with PostgreSQL unreachable (those families' latest values null).
NULL_FIGURES = """
const realFetch = window.fetch;
window.fetch = async (input, init) => {
  const response = await realFetch(input, init);
  if (!String(input).startsWith('/console/api/overview')) return response;
  const data = await response.json();
  data.series.forEach((name, i) => { if (%s.some((f) => name.startsWith(f))) data.latest.v[i] = null; });
  return new Response(JSON.stringify(data), { status: response.status, headers: response.headers });
};
""" % list(DATABASE_FAMILIES).__repr__()


class EmptyFiveHundred(http.server.BaseHTTPRequestHandler):
    """A destination that answers every POST 500 with no body."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def config(backend_port, removed_block, extra=()):
    lines = ['listen = "127.0.0.1:0"', 'database = "healthhook.db"', 'signing_secret_files = ["secret"]', *extra,
             "[read_api]", 'token_file = "read-token"',
             "[console]", "enabled = true", 'admin_token_file = "admin-token"',
             # One attempt: its entries die at the first 500.
             "[[forward]]", 'name = "backend"', 'url = "http://127.0.0.1:%d/hooks"' % backend_port,
             'secret_file = "backend-secret"', 'mode = "deliveries"', "max_attempts = 1"]
    if removed_block:
        # Nothing listens on port 9: its entries stay pending until the block is removed.
        lines += ["[[forward]]", 'name = "removed"', 'url = "http://127.0.0.1:9/hooks"',
                  'secret_file = "backend-secret"', 'mode = "deliveries"']
    return "\n".join(lines + [""])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--healthhook", required=True)
    parser.add_argument("--artifacts", required=True)
    args = parser.parse_args()
    args.healthhook = os.path.abspath(args.healthhook)
    args.artifacts = os.path.abspath(args.artifacts)
    backend = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EmptyFiveHundred)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    checks = None
    with tempfile.TemporaryDirectory(prefix="hh-console-states-") as folder:
        signing_file = base.write_secret(folder, "secret", base.whsec())
        read_token = "read-" + base.secrets.token_urlsafe(24)
        admin_token = "admin-" + base.secrets.token_urlsafe(24)
        base.write_secret(folder, "read-token", read_token)
        base.write_secret(folder, "admin-token", admin_token)
        base.write_secret(folder, "backend-secret", base.whsec())
        driver = None
        try:
            driver = base.make_driver(os.path.join(folder, "chromium-profile"))
            checks = base.Checks(driver, None, args.artifacts)
            run_checks(checks, args, folder, backend.server_address[1], signing_file, read_token, admin_token)
        finally:
            if driver is not None:
                base.log_console(driver, args.artifacts)
                driver.quit()
            backend.shutdown()
    if checks is None:
        print("0 passed, 1 failed")
        return 1
    base.log("%d passed, %d failed" % (checks.passed, checks.failed))
    return 0 if checks.failed == 0 else 1


def run_checks(checks, args, folder, backend_port, signing_file, read_token, admin_token):
    d = checks.driver
    now_ms = int(time.time() * 1000)
    server = base.Server(args.healthhook, folder, config(backend_port, removed_block=True))
    try:
        checks.base = server.base
        forwarded = base.send_delivery(args, server, signing_file, base.steps_body(now_ms, USER_ID, "client-states"))
        # Another user whose client user id is USER_ID (a backend's ids may be UUIDs too).
        base.send_delivery(args, server, signing_file, base.steps_body(now_ms, DECOY_USER_ID, USER_ID))
        figures = lambda: base.read_api(server, "/v1/forwarding", read_token)
        base.wait_until(lambda: '"destination":"backend","pending":0,"dead":2' in figures()
                        and '"destination":"removed","pending":2' in figures(),
                        "the entries are not dead (backend) and pending (removed): " + figures(), base.FORWARD_WAIT_S)
        checks.sign_in(admin_token)

        def unknown_figures_show_as_unknown():
            # Black-box pass: with PostgreSQL unreachable the answer held nulls and the page
            # showed "Database 0 B", "0 deliveries / 0 s behind", "0 dead", every family 0.
            d.execute_cdp_cmd("Page.enable", {})
            script = d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NULL_FIGURES})
            try:
                checks.open("#/overview")
                checks.element("#page[data-ready] #overview-inbox td[data-status=all]")
                for card in ("#overview-database", "#overview-lag", "#overview-jobs-due"):
                    assert checks.text(card) == "–", (card, checks.text(card))
                    assert "database" in checks.element(card + " .unknown").get_attribute("title")
                notes = [e.text for e in checks.elements(".card .note")]
                assert not any(n.startswith("0 ") for n in notes), notes
                cells = [e.text for e in checks.elements("#overview-inbox td[data-status]")]
                assert cells and all(c == "–" for c in cells), cells
                # The counters of this process are no database figure: still numbers.
                assert checks.text("#overview-stored") == "2", checks.text("#overview-stored")
                checks.screenshot("overview-database-unknown")
            finally:
                d.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})
            # Without the nulls: numbers again.
            checks.open("#/overview")
            checks.element("#page[data-ready] #overview-database")
            assert checks.text("#overview-database").endswith("B"), checks.text("#overview-database")
        checks.run("unknown_figures_show_as_unknown", unknown_figures_show_as_unknown)

        def the_dropped_tab_says_what_is_kept():
            # Black-box pass: "dropped (N)" opened an empty table: dropped entries are deleted.
            checks.open("#/forwarding?state=dropped")
            box = checks.element('#page[data-ready] table.destination[data-destination="backend"]').find_element(
                By.XPATH, "..")
            note = box.find_element(By.CSS_SELECTOR, ".dropped-note").text
            assert "Nothing dropped" in note, note
            assert not box.find_elements(By.CSS_SELECTOR, "table.entries"), "an entries table for dropped ones"
        checks.run("the_dropped_tab_says_what_is_kept", the_dropped_tab_says_what_is_kept)

        def a_dead_entry_has_no_next_attempt_nor_an_empty_error_tail():
            # Black-box pass: dead entries showed a "Next attempt" time, and "HTTP 500: ".
            checks.open("#/forwarding?state=dead")
            rows = 'table.destination[data-destination="backend"]'
            box = checks.element("#page[data-ready] " + rows).find_element(By.XPATH, "..")
            entries = box.find_elements(By.CSS_SELECTOR, "tr.entry[data-state=dead]")
            assert len(entries) == 2, box.text
            for entry in entries:
                cells = [c.text for c in entry.find_elements(By.TAG_NAME, "td")]
                assert cells[5] == "–", cells  # Next attempt
                assert cells[6].endswith("last: HTTP 500"), cells  # Last error, without ": "
            checks.open("#/overview")
            row = checks.element('#page[data-ready] #overview-forwarding tr[data-destination="backend"]')
            assert row.find_elements(By.TAG_NAME, "td")[6].text.endswith("HTTP 500"), row.text
        checks.run("a_dead_entry_has_no_next_attempt_nor_an_empty_error_tail",
                   a_dead_entry_has_no_next_attempt_nor_an_empty_error_tail)

        def a_user_id_opens_that_user():
            # Black-box pass: #/users?q=<id> showed the user whose client user id it is.
            checks.open("#/users?" + urllib.parse.urlencode({"q": USER_ID, "range": "24h"}))
            identity = checks.element("#page[data-ready] #user-identity")
            cells = [c.text for c in identity.find_elements(By.CSS_SELECTOR, "tbody td")]
            assert cells[0] == USER_ID and cells[1] == "client-states", cells
            others = checks.text("#user-others")
            assert DECOY_USER_ID in others and "client user id" in others, others
        checks.run("a_user_id_opens_that_user", a_user_id_opens_that_user)

        def a_backfill_names_a_provider():
            # Black-box pass: the user has no stored connection, the server asks for a provider,
            # and the page's list offered only "every connected provider".
            checks.open("#/users?" + urllib.parse.urlencode({"q": USER_ID, "by": "user_id", "range": "24h"}))
            checks.element("#page[data-ready] #user-connections")
            assert not checks.elements("#user-connections tbody tr"), "the user has a connection: this proves nothing"
            checks.element("#backfill-resources").send_keys("steps")
            d.execute_script("document.getElementById('backfill-since').value = arguments[0]",
                             time.strftime("%Y-%m-%d", time.gmtime(now_ms / 1000 - 86400)))
            checks.element("#backfill-provider").send_keys("oura")
            checks.element('button[data-action="backfill"]').click()
            checks.wait(lambda: checks.text("#flash").startswith("Backfill"), "no answer to the backfill")
            flash = checks.text("#flash")
            assert "failed" not in flash and "queued" in flash, flash
        checks.run("a_backfill_names_a_provider", a_backfill_names_a_provider)
        checks.sign_out()
    finally:
        server.stop()

    # The decoy's delivery was the newest: its erasure leaves a placeholder in its seq.
    purged = subprocess.run([args.healthhook, "purge-user", "--config", os.path.join(folder, "healthhook.toml"),
                             DECOY_USER_ID], cwd=folder, capture_output=True, text=True, timeout=120)
    assert purged.returncode == 0, purged.stderr

    # Again without the "removed" block, and with a free-disk floor no disk has: not ready.
    again = base.Server(args.healthhook, folder, config(backend_port, removed_block=False,
                                                        extra=["min_free_disk_mib = 1073741824"]))
    try:
        checks.base = again.base
        checks.sign_in(admin_token)

        def a_removed_destination_has_no_requeue_on_a_delivery():
            # Black-box pass: the delivery page offered "Requeue its forwards to removed".
            checks.open("#/delivery/" + forwarded)
            checks.element("#page[data-ready] #delivery-forwards tr.forward")
            rows = [r.text for r in checks.elements("#delivery-forwards tr.forward")]
            assert len(rows) == 2 and any("removed (not configured)" in r for r in rows), rows
            assert not checks.elements('button[data-action="forward-requeue"][data-destination="removed"]'), \
                "a requeue offered for a destination no [[forward]] block names"
        checks.run("a_removed_destination_has_no_requeue_on_a_delivery",
                   a_removed_destination_has_no_requeue_on_a_delivery)

        def an_erasure_placeholder_says_it_is_one():
            # Review: the delivery page called purge-user's placeholder "Removed by retention".
            listed = base.read_api(again, "/v1/deliveries?limit=10", read_token)
            ids = [item["message_id"] for item in json.loads(listed)["items"]]
            placeholders = [i for i in ids if i.startswith(" erased:")]
            assert len(placeholders) == 1, ids
            checks.open("#/delivery/" + urllib.parse.quote(placeholders[0], safe=""))
            body = checks.element("#page[data-ready] #delivery-body").text
            assert body.startswith("Erased by purge-user on ") and "retention" not in body, body
        checks.run("an_erasure_placeholder_says_it_is_one", an_erasure_placeholder_says_it_is_one)

        def the_overview_says_why_deliveries_are_refused():
            # Black-box pass: /readyz said why, the overview only counted "Answered unavailable".
            try:  # the floor is checked as deliveries come
                base.send_delivery(args, again, signing_file, base.steps_body(now_ms, USER_ID, "client-states"))
            except (urllib.error.HTTPError, RuntimeError):
                pass
            checks.eventually("#/overview", lambda: checks.elements("#overview-not-ready")
                              and checks.element("#overview-not-ready").is_displayed(),
                              "the overview does not say the server is not ready")
            text = checks.text("#overview-not-ready")
            assert "disk nearly full" in text, text
            checks.screenshot("overview-not-ready")
        checks.run("the_overview_says_why_deliveries_are_refused", the_overview_says_why_deliveries_are_refused)
    finally:
        again.stop()


if __name__ == "__main__":
    sys.exit(main())
