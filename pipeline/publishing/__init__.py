"""Stage 6, publishing: changelogs (Markdown, JSON, HTML), stats, the Python API.

Imports the foundation and any stage before it.
"""
