"""game: what a game keeps and knows, with no mail in it.

The deal records of a fair game (`deals`), table talk as stored (`talk`), the ratings
table (`standings`), a player's settings and away time (`settings`, `away`), hints
(`hints`) and a game as one line of a list (`lines`). Imports only `context`, `moves`
and `policy` of the service; never `send`, `ops` or `handle`.
"""
