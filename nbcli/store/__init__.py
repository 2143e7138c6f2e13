"""The model file and the model's text form. Imports `nb`, `text` and `errors`.

One concern per module, bottom up (a module imports only those above it in
this list, and nothing of nbcli above the models):

- `codec`: the file's bytes: joblib's layout written without joblib, read by a
  restricted unpickler that maps arrays from the file; the format's name and
  version; what a pickle can build that nbcli never writes.
- `integrity`: what is read is what nbcli wrote: the checksum, the checked read
  (`read_payload`) and the atomic, locked write (`write_payload`, `locked`).
- `payload`: a Classifier as a payload (`to_payload`), its format version and
  identity (`model_id`), a calibration's plain form. Reads attributes only.
- `dump`: the text form of `nbcli dump`/`load`, written and parsed line by line.
- `modelfile`: a Classifier from a payload (`from_payload`, every invariant
  checked); `load`, `save`.
- `dumped`: a model from a dump (`load_lines`, checked by `from_payload`)
  and a model's dump (`dump_lines`).
- `describe`: what `nbcli info` shows of a model.

Why the cut falls there: the store's height budget is 5 and the models' (`nb`)
is 4, so every store module that imports `nb` is at the top and may import
only store modules that do not. Building a Classifier needs the models, and
so do reading a dump back (its last step is `from_payload`) and describing
one; writing a payload or the text of a dump does not. So the code that
builds models from stored values is `modelfile`, with the dump's two
model-side steps above it in `dumped` (`dump_lines` takes a model's counts,
`load_lines` builds one), while the dump's text itself is `dump`, below it.
`modelfile` keeps its name, because it is the model file as the rest of
nbcli uses it: it also offers the lower modules' names that other packages
call (`read_payload`, `write_payload`, `locked`, `check_writable`,
`to_payload`, `model_id`, `payload_bytes`, `FORMAT_VERSION`; its `__all__`),
so `modelfile.load`, `modelfile.locked` and `modelfile.write_payload` stay
one import. `describe` and `dumped` are the top modules that are not
`modelfile` (info, dump and load import them on their own), and loading a
model imports neither them nor `dump`.
"""
