"""ops: the game operations the handlers share.

`start` (a new game), `cutting` (the cut phase of a fair game: ask, record, deal),
`play` (a known player's commands → engine actions, applied and logged) and `matches`
(after a game: a match's next game, a rematch started). They change games and queue
mail through `send`; they never read a mail themselves: that is `handle`'s job.
"""
