"""game: what a game keeps and knows, with no mail in it.

The deal records of a fair game (`deals`), table talk as stored (`talk`), the ratings
table (`standings`), a player's settings and away time (`settings`, `away`), hints
(`hints`), a game as one line of a list (`lines`), the resign that asks first
(`resign`) and the answer to an older mail (`older`). Imports only `context`, `moves`
and `policy` of the service; never `send`, `ops` or `handle`.
"""
