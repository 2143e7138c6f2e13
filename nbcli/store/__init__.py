"""The model file: codec, integrity and atomic writes, payload schema, the text of
`nbcli info`, and the text form of `nbcli dump`/`load`. Imports `nb` and `text`.
"""
