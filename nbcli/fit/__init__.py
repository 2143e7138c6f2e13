"""Fitting models to documents: training, learning and forgetting, held-out scores,
cross-validation and online runs. Imports `nb`, `text` and `evaluate`.
"""
