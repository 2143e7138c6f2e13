"""`nbcli imap` (issue 29): filter and learn a mailbox on an IMAP server.

It sits beside `spam` (whose classification it shares with `filter`, so a
message gets the same verdict in both) and imports only `spam` and what is
below it; the command itself is cli/imap.py.
"""
