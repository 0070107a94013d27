"""Turning TomTom answers into what a tool returns: compact shapes, point coordinates.

Both backends answer in the same REST shapes, so each function here serves both.
"""
