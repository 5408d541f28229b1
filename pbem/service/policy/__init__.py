"""policy: who may make the service act, and whom the service may mail.

Anyone on the internet can write to the service, and anyone can write any From. Every
path that acts on a mail or sends one asks this module, and nothing else decides:

1. **Is this sender proven enough for what they ask?** (`decide`). Intake finds how well
   a mail shows its writer (`prove`: a `Sender` with a `Proof`): a reply token mailed to
   that very mailbox and sent back from it (``TOKEN``), or the From alone (``FROM``).
   When the operator names a trusted server (``trusted_authserv_id``), its verdict counts
   for every mail: a pass is as good as a token, anything else (no verdict, a failed
   one, a header that cannot be read) is ``NONE`` and the mail is refused whatever it
   asks, with no reply. `RULES` says the least proof of each action: every change to a
   game or to anyone's settings (moves, ``name``, ``stop``, ``never``, invitations…)
   needs proof; a From alone is answered with one confirmation request
   (`pbem.service.handle.confirmations`: "Did you send this? One click to do it"), and
   the mail is done once the mailbox answers it. `volume` caps unproven mail per sender
   and hour (unread) and only delays proven mail over a larger limit, never drops it.
   Before all that, `takes_mail_for` says which envelope recipients are the service's to
   take at all (its own address, with any ``+tag``): the LMTP listener refuses the
   others (550), as the mail server refuses an unknown mailbox.
2. **May the service mail this address now?** (`may_mail`). Consent is per *mailbox*:
   the address lowercased, without a ``+tag`` (`mailbox_of`); the service's own
   addresses and its computer seats are never mailed. An address is mailed when it asked
   (an answer to its own mail), when it is a seated player of a game it joined (the
   admin seated it, or it answered the game's mail), when it watches a game (it
   confirmed), or — at most once per ``invitation_quiet_days``, whoever asks for it —
   when it never confirmed that it reads the service's mail (an invitation, a
   confirmation request, the first mail of a game started in its name, a note). A
   mailbox that said ``decline`` (for ``invitation_quiet_days``), ``never``, or ``stop``
   without being a player (until it says ``start``) gets no mail it did not ask for by a
   proven mail. Answers to mail proven by its From alone — confirmation requests
   included — are a few a day per mailbox (``max_unproven_answers_per_day``), whatever
   they ask. The day's caps (`take_new_game`, invitations, confirmation requests and
   answers per mailbox) are counted on the mailbox's locked row, so they hold within a
   batch and across workers.

What a refusal says lands in the inbound row's reason (``pbem inbox list``); a mail not
sent is logged at debug level with the reason.

3. **Who is told how they played?** (`may_review`): a finished game's review of each
   player's decisions follows the game's hint setting (`advice`).

The policy lives in four modules, re-exported here (every path asks ``policy.X``):
`proof` (who may do what), `consent` (whom the service may mail), `mailboxes` (how
a mailbox is named, and which are the service's own) and `advice` (who gets a review).
"""

from __future__ import annotations

from pbem.service.context import Proof, Sender
from pbem.service.policy.advice import may_review
from pbem.service.policy.consent import (
    QUIETEN_VERBS,
    Why,
    describe,
    first_word,
    is_suppressed,
    lift,
    may_invite,
    may_mail,
    quiet_word,
    reachable,
    suppress,
)
from pbem.service.policy.mailboxes import (
    FORGOTTEN_DOMAIN,
    LOOPBACK,
    forgotten_key,
    is_service_mailbox,
    mailbox_of,
    may_hand_over,
    takes_mail_for,
)
from pbem.service.policy.proof import (
    RULES,
    UNJOINED_AT_ONCE,
    Decision,
    Rule,
    Verdict,
    confirm,
    decide,
    joined_seats,
    prove,
    reset_bounces,
    seated_by_admin,
    take_new_game,
    volume,
)

__all__ = [
    "FORGOTTEN_DOMAIN",
    "LOOPBACK",
    "QUIETEN_VERBS",
    "RULES",
    "UNJOINED_AT_ONCE",
    "Decision",
    "Proof",
    "Rule",
    "Sender",
    "Verdict",
    "Why",
    "confirm",
    "decide",
    "describe",
    "first_word",
    "forgotten_key",
    "is_service_mailbox",
    "is_suppressed",
    "joined_seats",
    "lift",
    "mailbox_of",
    "may_hand_over",
    "may_invite",
    "may_mail",
    "may_review",
    "prove",
    "quiet_word",
    "reachable",
    "reset_bounces",
    "seated_by_admin",
    "suppress",
    "take_new_game",
    "takes_mail_for",
    "volume",
]
