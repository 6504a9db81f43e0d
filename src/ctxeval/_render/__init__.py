"""Renderers: results and reports as text (tables, JSON, CSV, Markdown, LaTeX) and HTML.

Renderers read the verbs' models; they never recompute a figure or a verdict.
"""
