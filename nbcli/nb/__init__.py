"""The Naive Bayes models: event models (and the one builder from counts), table models,
EM, calibration maps, the count table and record, and the classifier. Imports `text`
and `evaluate`.
"""
