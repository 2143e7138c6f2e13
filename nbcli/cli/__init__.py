"""The command line (click only): the group, its error boundary, one module per command
or family, options, output writers and plots. Nothing imports `cli`.
"""
