"""intake: a stored message → the rule that ended it, or a known seat's mail for its game.

`chain` is the route every stored message walks — one table of named rules (machine
mail, own address, trusted verdict, size, volume, what the token names, blocked) and,
by what the token names, the links that follow (a seat; an invitation; a confirmation;
nothing: quieten, lobby commands, strangers, a player's mail naming no game). `rules`
holds the small checks, `reading` what they read (the mail, the hourly count, the seat a
token names). Intake asks `pbem.service.policy` for every decision of proof or consent
and hands each kind of mail to its handler in `pbem.service.handle`.
"""

from pbem.service.intake.chain import CHAIN, ROUTES, identify
from pbem.service.intake.reading import peek_headers, prefetch, recent_counts

__all__ = ["CHAIN", "ROUTES", "identify", "peek_headers", "prefetch", "recent_counts"]
