"""handle: one handler per kind of mail, each answering what intake routed to it.

`lobby` — commands to the plain address (``new``, ``challenge``, ``games``, …);
`invitations` — answers to an invitation; `confirmations` — answers to a confirmation
request (and the open lobby's welcome); `watch` — ``watch``/``unwatch``; `rematch` —
``rematch`` and ``next`` in a finished game's thread. Game moves are
`pbem.service.flow`'s: a seat's mail goes to `pbem.service.ops.play`. Handlers use `ops`
and `send`, never `intake` or `flow` above them.
"""
