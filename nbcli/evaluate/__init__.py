"""Measures: metrics, spam-filter ROC and cut-offs, calibration metrics, the TREC measures
and the `nbcli eval` report. Imports only `nbcli.errors` and `nbcli.defaults`.
"""
