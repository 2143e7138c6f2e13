"""Running work: the pipeline (read, analyse, count or score) and its executors (in
process, process pool, Dask), EM drivers and tuning. Imports `fit`, `nb`, `text`,
`store` and `evaluate`; the executors import nothing of nbcli.
"""
