"""Text in: where documents come from (paths, folders, mailboxes, tables), mail parsing,
the analyzer (text to tokens), term hashing and count matrices. Imports only
`nbcli.errors` and `nbcli.defaults`.
"""
