"""The mail stack itself, as the real-server tests rely on it (deploy/mailstack.sh): it
recovers within seconds when Dovecot restarts, as the crash tests make it do."""

from __future__ import annotations

import smtplib
import subprocess
import time

import pytest

from tests.fixtures.mailstack import (
    MailStack,
    _read_env,
    _run_script,
    send_raw,
    wait_for_messages,
)


def mail(sender: str, to: str, subject: str) -> bytes:
    return (
        f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject.replace(' ', '-')}.{time.time_ns()}@client.test>\r\n\r\nhi\r\n"
    ).encode()


@pytest.mark.serial  # restarts or stops a server of the shared stack
def test_the_stack_recovers_within_seconds_after_dovecot_was_away(mailstack: MailStack) -> None:
    """While Dovecot is stopped, Postfix takes a message (local pickup) whose delivery
    fails and is deferred, and an SMTP client finds smtpd unable to start (no SASL). Once
    Dovecot is back, SMTP answers and the deferred message arrives within seconds —
    Postfix's defaults would keep smtpd down for a minute and the message for five."""
    user, password = mailstack.new_user("deferred")
    conf = _read_env(_run_script("env"))["MAILSTACK_DOVECOT_CONF"]
    subprocess.run(["dovecot", "-c", conf, "stop"], check=True, capture_output=True, timeout=30)
    try:
        time.sleep(0.5)
        subprocess.run(
            ["sendmail", "-f", "someone@client.test", "--", user],
            input=mail("someone@client.test", user, "while away"),
            check=True,
            capture_output=True,
            timeout=30,
        )
        try:
            with smtplib.SMTP(mailstack.smtp_host, mailstack.smtp_port, timeout=3) as client:
                client.ehlo("client.test")
        except (smtplib.SMTPException, OSError):
            pass  # smtpd could not start without Dovecot's SASL socket
        time.sleep(1.5)  # the delivery is tried, fails and is deferred
    finally:
        mailstack.restart("dovecot")
    back = time.monotonic()
    while True:
        try:
            send_raw(mailstack, "someone@client.test", [user], mail("x@client.test", user, "back"))
            break
        except (smtplib.SMTPException, OSError):
            assert time.monotonic() - back < 10, "SMTP is still down"
            time.sleep(0.2)
    wait_for_messages(mailstack, user, password, 2, timeout=15)
    assert time.monotonic() - back < 15
