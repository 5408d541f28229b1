"""send: the mail the service produces, by audience.

`turns` — turn mails to the seated players; `answers` — the answers to a player's own
mail in a game; `outside` — mail outside any game (answers to the writer, confirmations,
welcomes, invitations), one path that asks the policy once; `envelope` — how a mail to
a seat is addressed and queued; `watchers`, `talk`, `digest`, `standings`, `archive` —
the board to observers, relayed talk, the daily digest, the standings answer, the game
file. Imports `context`, `moves`, `policy` and `game`; never `ops` or `handle`.
"""
